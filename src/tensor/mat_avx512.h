/* AVX-512 kernels of ac_matmul, used only where they measurably beat AVX2
 * (mat_avx512.c, built with -mavx512f -mavx512bw): the AVX-512 level's
 * overrides in the kernel table (dispatch.c), run only after its CPU check. */
#ifndef AC_TENSOR_MAT_AVX512_H
#define AC_TENSOR_MAT_AVX512_H

#include <stddef.h>

#include "tensor/dispatch.h"

/* Output columns [n0, n) of a one-row product with 16-bit weights, in
 * blocks of four; returns n, where the caller goes on. */
size_t ac_matmul_row16_avx512(const float *x, const ac_mat *w, const float *bias, float *y, size_t n0, size_t n1);

/* Output columns [n0, n1) of Y[M][w->rows] = X[M][w->cols] . W^T + bias
 * for F16 or BF16 W, as our own packed GEMM; returns n1. PACK: see
 * ac_kernel_table.gemm16. */
size_t ac_gemm16_avx512(const float *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0, size_t n1,
                        float *pack);

/* N values of X as ac_quantize_q8_act, to the same bits */
void ac_quantize_q8_act_avx512(const float *x, ac_block_q8_act *out, size_t n);

#endif
