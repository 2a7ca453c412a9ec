/* Base64 (RFC 4648, the standard alphabet with padding). */
#ifndef HAVEN_BASE64_H
#define HAVEN_BASE64_H

#include <stdbool.h>
#include <stddef.h>

/* The value of a digit of the alphabet, -1 for any other character. */
int hv_base64_value (unsigned char c);
/* len bytes as base64 text: a new NUL-terminated string. */
char *hv_base64_encode (const void *data, size_t len);
/* Strict: nothing but the alphabet, a length a multiple of 4, '=' only as
 * the padding due at the end, and the unused bits of the last digit zero
 * (so one byte string has exactly one spelling).  The bytes into *out (a
 * new buffer, NUL-terminated for convenience), their count in *out_len;
 * -1 for text that is not base64.  An empty text is zero bytes. */
int hv_base64_decode (const char *s, size_t len, unsigned char **out, size_t *out_len);

#endif
