/* Seccomp architectures: runtime-spec's SCMP_ARCH_* names and libseccomp's
 * tokens for them, one table for the runtime that loads filters and the
 * compiler that writes them. */
#ifndef HAVEN_SECCOMP_ARCH_H
#define HAVEN_SECCOMP_ARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

/* libseccomp's token for an SCMP_ARCH_* name; 0 when the name is not in
 * the table or this libseccomp does not know it. */
uint32_t hv_seccomp_arch_token (const char *name);
bool hv_seccomp_arch_supported (const char *name);
/* The SCMP_ARCH_* name of a libseccomp token; NULL with an error when the
 * table has no name for it. */
const char *hv_seccomp_arch_name (uint32_t token, hv_error **err);
/* The SCMP_ARCH_* name of the architecture this program runs as, as
 * libseccomp reports it (seccomp_arch_native); NULL with an error when the
 * table has no name for it. */
const char *hv_seccomp_arch_native (hv_error **err);
#endif
