/* AVX2/FMA kernels (kernels_avx2.c, built with -mavx2 -mfma): the entries
 * of the AVX2 level's kernel table (dispatch.c), run only after its CPU
 * check. Each computes what its kernels.h operation does. */
#ifndef AC_TENSOR_KERNELS_AVX2_H
#define AC_TENSOR_KERNELS_AVX2_H

#include <stddef.h>

#include "tensor/kernels.h"

void ac_matmul_nt_range_avx2(const float *x, size_t ldx, const float *w, size_t ldw, const float *bias, float *y,
                             size_t ldy, size_t K, size_t m0, size_t m1, size_t n0, size_t n1);
void ac_conv1d_depthwise_avx2(const ac_conv1d_shape *s, const float *x, size_t batch,
                              size_t T, const float *w, const float *bias, float *y);
void ac_polyphase_avx2(const float *bank, size_t taps, size_t stride, size_t phases, const float *x, size_t step,
                       size_t blocks, float *out);
void ac_channel_affine_avx2(float *x, size_t rows, size_t C, const float *scale,
                            const float *shift, int relu);
void ac_relu_avx2(float *x, size_t n);
void ac_exp_avx2(float *x, size_t n);
void ac_sigmoid_avx2(float *x, size_t n);
void ac_tanh_avx2(float *x, size_t n);
void ac_softmax_rows_avx2(float *x, size_t rows, size_t cols);
void ac_log_softmax_avx2(float *x, size_t n);
void ac_silu_avx2(float *x, size_t n);
void ac_gelu_avx2(float *x, size_t n);
void ac_mul_avx2(float *y, const float *x, size_t n);
void ac_silu_mul_avx2(float *y, const float *x, size_t n);
void ac_rmsnorm_avx2(const float *x, float *y, size_t rows, size_t C, const float *gamma,
                     size_t gamma_stride, float eps);
void ac_rope_rotate_avx2(float *x, size_t heads, size_t dim, const float *cs, const float *sn);
void ac_softmax_masked_avx2(float *x, size_t rows, size_t cols, float scale, const ac_mask *mask);
void ac_axpy_avx2(float *y, const float *x, float alpha, size_t n);
void ac_attn_dot_rows_avx2(const float *q, size_t g, const float *k, size_t ld, size_t n, size_t dk, float *s,
                           size_t s_ld);
void ac_attn_mix_rows_avx2(const float *p, size_t p_ld, size_t g, const float *v, size_t ld, size_t n, size_t dk,
                           float *out, size_t out_ld, int add);
void ac_glu_avx2(const float *x, float *y, size_t rows, size_t C);
void ac_layernorm_avx2(const float *x, float *y, size_t rows, size_t C, const float *gamma,
                       const float *beta, float eps);

#endif
