/* AVX-512 products of attention over many query rows (attn_avx512.c, built
 * with -mavx512f, run only through the kernel table after its CPU check):
 * scores against keys packed in panels, then probabilities times values
 * packed as rows, each in register tiles (layouts: dispatch.h), and the
 * masked softmax between them. */
#ifndef AC_TENSOR_ATTN_AVX512_H
#define AC_TENSOR_ATTN_AVX512_H

#include <stddef.h>

#include "tensor/kernels.h"

void ac_attn_scores_avx512(const float *q, size_t q_ld, size_t rows, const float *kp, size_t nk, size_t dk, float *s);
void ac_attn_values_avx512(const float *p, size_t rows, const float *vp, size_t nk, size_t dk, float *out,
                           size_t out_ld);
/* The kernel table's attn_dot_rows and attn_mix_rows (dispatch.h): a
 * whole key or value row of a head in registers, read once, in order. */
void ac_attn_dot_rows_avx512(const float *q, size_t g, const float *k, size_t ld, size_t n, size_t dk, float *s,
                             size_t s_ld);
void ac_attn_mix_rows_avx512(const float *p, size_t p_ld, size_t g, const float *v, size_t ld, size_t n, size_t dk,
                             float *out, size_t out_ld, int add);
/* ac_softmax_masked_ref on 16 lanes, as the AVX2 one on 8. */
void ac_softmax_masked_avx512(float *x, size_t rows, size_t cols, float scale, const ac_mask *mask);

#endif
