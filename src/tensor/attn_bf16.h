/* Attention's two products over many query rows on vdpbf16ps
 * (attn_bf16.c, built with -mavx512bf16, run only through the kernel table
 * after its CPU check): the f32 tiles of attn_avx512.h with each operand
 * rounded to bf16 and two products a lane per instruction (layouts:
 * dispatch.h). */
#ifndef AC_TENSOR_ATTN_BF16_H
#define AC_TENSOR_ATTN_BF16_H

#include <stddef.h>
#include <stdint.h>

void ac_attn_scores_bf16(const float *q, size_t q_ld, size_t rows, const uint32_t *kp, size_t nk, size_t dk,
                         float *s);
void ac_attn_pack_bf16_avx512(const float *k, const float *v, size_t ld, size_t nk, size_t dk, uint32_t *kp,
                              uint32_t *vp);
void ac_attn_values_bf16(float *p, size_t rows, const uint32_t *vp, size_t nk, size_t dk, float *out,
                         size_t out_ld);

#endif
