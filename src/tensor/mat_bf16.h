/* AVX512_BF16 kernels of ac_matmul (mat_bf16.c, built with -mavx512f
 * -mavx512bw -mavx512bf16): the AVX512_BF16 level's overrides in the kernel
 * table (dispatch.c), run only after its CPU check. BF16 weights take the
 * bf16 dot product vdpbf16ps; F16 weights go on to the AVX-512 kernels. */
#ifndef AC_TENSOR_MAT_BF16_H
#define AC_TENSOR_MAT_BF16_H

#include <stddef.h>

#include "tensor/mat.h"

/* As ac_matmul_row16_avx512 (X rounded to bf16 for BF16 weights). */
size_t ac_matmul_row16_bf16(const float *x, const ac_mat *w, const float *bias, float *y, size_t n0, size_t n1);
/* As ac_gemm16_avx512 (X rounded to bf16 for BF16 weights). */
size_t ac_gemm16_bf16(const float *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0, size_t n1,
                      float *pack);

#endif
