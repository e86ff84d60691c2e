/* IEEE half and bfloat16 conversions (round to nearest even on the way down). */
#ifndef AC_BASE_F16_H
#define AC_BASE_F16_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

float ac_f16_to_f32(uint16_t h);
uint16_t ac_f32_to_f16(float f);

/* inline: kernels' packing converts a value at a time */
static inline float ac_bf16_to_f32(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* nearest even, NaNs made quiet; a select rather than a branch, so that
 * loops of it vectorize (weights at load, activations for BF16 products) */
static inline uint16_t ac_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint16_t nan = (uint16_t)((u >> 16) | 0x40), rounded = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
    return (u & 0x7fffffffu) > 0x7f800000u ? nan : rounded;
}

/* N values between rows of halves at any alignment (SRC, DST: 2 N bytes)
 * and floats; the same bits as the scalar conversions, in loops that
 * vectorize (a model's weights convert at load through these). */
void ac_f16_to_f32_n(const void *src, float *dst, size_t n);
void ac_bf16_to_f32_n(const void *src, float *dst, size_t n);
void ac_f32_to_bf16_n(const float *src, void *dst, size_t n);

#endif
