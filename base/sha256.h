/* SHA-256 (FIPS 180-4), for the audit trail's chain (audit_trail.h):
 * its writers run in monitors, into which OpenSSL is deliberately not
 * linked (openssl_lib.h), and a chain needs nothing but the hash. */
#ifndef HAVEN_SHA256_H
#define HAVEN_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define HV_SHA256_SIZE 32
#define HV_SHA256_HEX_SIZE (2 * HV_SHA256_SIZE + 1) /* lower-case hex and the NUL */

typedef struct
{
  uint32_t h[8];
  uint64_t length; /* bytes hashed so far */
  unsigned char block[64];
  size_t used; /* bytes of block filled */
} hv_sha256;

void hv_sha256_init (hv_sha256 *c);
void hv_sha256_update (hv_sha256 *c, const void *data, size_t len);
void hv_sha256_final (hv_sha256 *c, unsigned char out[HV_SHA256_SIZE]);
/* The digest of data as lower-case hex. */
void hv_sha256_hex (const void *data, size_t len, char out[HV_SHA256_HEX_SIZE]);
#endif
