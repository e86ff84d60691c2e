/* AVX-512 kernel variants, used only where they measurably beat AVX2
 * (mat_avx512.c, built with -mavx512f -mavx512bw; called only after the
 * CPU check). */
#ifndef AC_TENSOR_SIMD_AVX512_H
#define AC_TENSOR_SIMD_AVX512_H

#include <stddef.h>

#include "tensor/mat.h"

/* Output columns [n0, n) of a one-row product with 16-bit weights, in
 * blocks of four; returns n, where the caller goes on. */
size_t ac_matmul_row_avx512(const float *x, const ac_mat *w, const float *bias, float *y, size_t n0, size_t n1);

/* Products of many input rows with 16-bit weights (ac_gemm16_avx512):
 * ranges of output columns are multiples of NR; PACK holds KC x NR floats,
 * 64-byte aligned. */
#define AC_GEMM16_NR 64
#define AC_GEMM16_KC 256

/* Output columns [n0, n1) of Y[M][w->rows] = X[M][w->cols] . W^T + bias
 * for F16 or BF16 W. */
void ac_gemm16_avx512(const float *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0, size_t n1,
                      float *pack);

#endif
