/* AVX2 packed GEMM of ac_matmul with Q8_0 weights (gemm_q8_avx2.c, built
 * with -mavx2 -mfma -mf16c): the AVX2 level's gemm_q8 in the kernel table
 * (dispatch.c), run only after its CPU check. */
#ifndef AC_TENSOR_GEMM_Q8_AVX2_H
#define AC_TENSOR_GEMM_Q8_AVX2_H

#include <stddef.h>

#include "tensor/mat.h"
#include "tensor/quant.h"

/* Output columns [n0, n1) of Y[M][w->rows] for many rows of activations
 * quantized by ac_quantize_q8_act, as a packed GEMM; returns n1. PACK: see
 * ac_kernel_table.gemm16. */
size_t ac_gemm_q8_avx2(const ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                       size_t n1, float *pack);

#endif
