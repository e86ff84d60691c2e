/* SHA-256 (FIPS 180-4), fed in pieces: the check of a downloaded file
 * against the hash its server announced. */
#ifndef AC_BASE_SHA256_H
#define AC_BASE_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t h[8];
    uint64_t bytes;
    uint8_t buf[64];
    size_t fill;
} ac_sha256;

void ac_sha256_init(ac_sha256 *s);
void ac_sha256_update(ac_sha256 *s, const void *data, size_t n);
/* The digest as 64 lowercase hex digits and a NUL. */
void ac_sha256_hex(ac_sha256 *s, char out[65]);

#endif
