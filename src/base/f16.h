/* IEEE half and bfloat16 conversions (round to nearest even on the way down). */
#ifndef AC_BASE_F16_H
#define AC_BASE_F16_H

#include <stddef.h>
#include <stdint.h>

float ac_f16_to_f32(uint16_t h);
uint16_t ac_f32_to_f16(float f);
float ac_bf16_to_f32(uint16_t b);
uint16_t ac_f32_to_bf16(float f);

void ac_f16_to_f32_n(const uint16_t *src, float *dst, size_t n);
void ac_bf16_to_f32_n(const uint16_t *src, float *dst, size_t n);

#endif
