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

float ac_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    if (exp == 0x1f) return bits_to_f32(sign | 0x7f800000u | (mant << 13)); /* inf/nan */
    if (exp == 0) {
        /* zero or subnormal: mant * 2^-24 */
        float v = (float)mant * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    return bits_to_f32(sign | ((exp + 112) << 23) | (mant << 13));
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

void ac_f16_to_f32_n(const uint16_t *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) dst[i] = ac_f16_to_f32(src[i]);
}

void ac_bf16_to_f32_n(const uint16_t *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) dst[i] = ac_bf16_to_f32(src[i]);
}
