#include "base/f16.h"

#include <string.h>

static float bits_to_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t f32_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Without branches, so that a loop of it vectorizes (weights converted at
 * load go through ac_f16_to_f32_n): each case computed, one selected. */
float ac_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = h & 0x7c00u, rest = (uint32_t)(h & 0x7fff) << 13;
    uint32_t normal = rest + (112u << 23);                                 /* exponent 15 -> 127 */
    uint32_t special = rest | 0x7f800000u | (h & 0x3ff ? 0x400000u : 0); /* inf, or nan made quiet (as F16C) */
    uint32_t small = f32_to_bits((float)(h & 0x3ff) * (1.0f / 16777216.0f)); /* zero or subnormal: mant * 2^-24 */
    uint32_t is_special = 0u - (exp == 0x7c00u), is_small = 0u - (exp == 0); /* all ones or zero */
    return bits_to_f32(sign | (special & is_special) | (small & is_small) | (normal & ~(is_special | is_small)));
}

uint16_t ac_f32_to_f16(float f)
{
    uint32_t u = f32_to_bits(f);
    uint32_t sign = (u >> 16) & 0x8000;
    uint32_t abs = u & 0x7fffffffu;
    if (abs >= 0x7f800000u) /* inf or nan (keep nan quiet) */
        return (uint16_t)(sign | 0x7c00 | (abs > 0x7f800000u ? 0x200 : 0));
    if (abs >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* rounds to inf */
    if (abs < 0x38800000u) {
        /* subnormal half: round abs/2^-24 to nearest even */
        float v = bits_to_f32(abs) * 16777216.0f;
        uint32_t m = (uint32_t)v;
        float rem = v - (float)m;
        if (rem > 0.5f || (rem == 0.5f && (m & 1))) m++;
        return (uint16_t)(sign | m);
    }
    uint32_t exp = (abs >> 23) - 112, mant = abs & 0x7fffff;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++; /* may carry into exp: fine */
    return (uint16_t)(sign | h);
}

/* N halves at SRC (any alignment) through WIDEN, inlined into each caller
 * so that its loop vectorizes */
static inline __attribute__((always_inline)) void widen_n(const void *src, float *dst, size_t n,
                                                          float (*widen)(uint16_t))
{
    const unsigned char *p = src;
    for (size_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        dst[i] = widen(h);
    }
}

void ac_f16_to_f32_n(const void *src, float *dst, size_t n) { widen_n(src, dst, n, ac_f16_to_f32); }

void ac_bf16_to_f32_n(const void *src, float *dst, size_t n) { widen_n(src, dst, n, ac_bf16_to_f32); }

void ac_f32_to_bf16_n(const float *src, void *dst, size_t n)
{
    unsigned char *p = dst;
    for (size_t i = 0; i < n; i++) {
        uint16_t b = ac_f32_to_bf16(src[i]);
        memcpy(p + 2 * i, &b, 2);
    }
}
