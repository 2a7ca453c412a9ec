/* One policy document (YAML) into the model (policy.h). */
#ifndef HAVEN_POLICY_PARSE_H
#define HAVEN_POLICY_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "policy.h"

/* Parse one YAML document (no `extends` resolution: policy_load.h). */
int hv_policy_parse (const char *text, size_t len, const char *file, hv_policy *out, char **extends, hv_error **err);

/* Strict number parsers: DIGITS[.DIGITS][SUFFIX], no sign, exponent, inf
 * or nan; 0 and values out of range are errors (-1). */
int hv_parse_size (const char *s, uint64_t *out);
int hv_parse_duration (const char *s, uint64_t *seconds);
int hv_parse_cpus (const char *s, uint64_t *milli);
int hv_parse_count (const char *s, uint64_t max, uint64_t *out);
#endif
