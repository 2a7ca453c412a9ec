/* UTF-8 as RFC 3629 defines it (no overlong forms, no surrogates,
 * nothing above U+10FFFF), for text that must reach JSON as valid
 * strings: yajl escapes control characters but passes other bytes
 * through unchecked, so a string of arbitrary bytes makes output that is
 * not JSON. */
#ifndef HAVEN_UTF8_H
#define HAVEN_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Length of the well-formed sequence at s (n bytes left, n > 0), 0 when
 * s[0] does not start one.  A NUL byte is a sequence of one (U+0000). */
size_t hv_utf8_seq_len (const unsigned char *s, size_t n);
bool hv_utf8_valid (const char *s, size_t len);
/* s[0..len) with every byte that does not start or continue a
 * well-formed sequence replaced by U+FFFD: a new NUL-terminated string
 * (NUL bytes of s are kept), its length in *out_len when not NULL. */
char *hv_utf8_sanitize (const char *s, size_t len, size_t *out_len);
/* How many bytes at the end of s[0..len) are the start of a well-formed
 * sequence that the next bytes may complete (0 to 3): output read in
 * pieces splits characters, and a piece sanitized alone would make both
 * halves U+FFFD. */
size_t hv_utf8_partial_tail (const char *s, size_t len);

#endif
