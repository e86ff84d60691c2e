/* AVX2 int8 kernel of ac_matmul with Q4_K and Q6_K weights (mat_qk_avx2.c,
 * built with -mavx2 -mfma -mf16c): an entry of the AVX2 level's kernel
 * table and of the levels above it (dispatch.c), run only after its CPU
 * check. */
#ifndef AC_TENSOR_MAT_QK_AVX2_H
#define AC_TENSOR_MAT_QK_AVX2_H

#include <stddef.h>

#include "tensor/mat.h"
#include "tensor/quant.h"

/* Output columns [n0,n1) of Y[M][w->rows] for activations quantized by
 * ac_quantize_q8_act, as ac_matmul_qk_ref. */
void ac_matmul_qk_avx2(const ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                       size_t n1);

#endif
