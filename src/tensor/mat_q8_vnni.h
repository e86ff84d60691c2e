/* AVX512_VNNI kernel of ac_matmul with Q8_0 weights (mat_q8_vnni.c, built
 * with -mavx512f -mavx512bw -mavx512vnni): the AVX512_VNNI level's override
 * in the kernel table (dispatch.c), run only after its CPU check. */
#ifndef AC_TENSOR_MAT_Q8_VNNI_H
#define AC_TENSOR_MAT_Q8_VNNI_H

#include <stddef.h>

#include "tensor/mat.h"
#include "tensor/quant.h"

/* Output columns [n0, n1) of Y[M][w->rows] for many rows of activations
 * quantized by ac_quantize_q8_act, as a packed GEMM; returns n1. PACK: see
 * ac_kernel_table.gemm16. */
size_t ac_gemm_q8_vnni(const ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                       size_t n1, float *pack);

#endif
