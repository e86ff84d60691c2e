/* AVX2/FMA/F16C kernels of ac_matmul (mat_avx2.c, built with -mavx2 -mfma
 * -mf16c): entries of the AVX2 level's kernel table (dispatch.c), run only
 * after its CPU check. */
#ifndef AC_TENSOR_MAT_AVX2_H
#define AC_TENSOR_MAT_AVX2_H

#include <stddef.h>

#include "tensor/mat.h"

/* Output columns [n0,n1) of ac_matmul for a few input rows, 16-bit weights. */
void ac_matmul_few_avx2(const float *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                        size_t n1);
/* Rows [r0,r1) of a 16-bit or Q8_0 matrix as f32. */
void ac_mat_rows_avx2(const ac_mat *w, size_t r0, size_t r1, float *out);

#endif
