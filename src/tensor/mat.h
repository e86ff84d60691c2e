/* The matrix product of the library, Y = X . W^T + bias, with W a weight
 * matrix used where it lies: a Linear weight [rows][cols] in the
 * checkpoint's own type (f32, f16, bf16, q8_0 and the K-quants' blocks
 * along a row), read straight from the memory-mapped file, or any f32
 * array (ac_mat_f32). Large f32 products run on OpenBLAS. Others convert
 * on the fly: few rows of input (decoding) read every weight once per
 * call, so the narrow types halve or quarter the bytes that bound the
 * speed; many rows (encoders, a prompt's prefill) run our own packed GEMMs
 * where the level has one (AVX-512 converts 16-bit weights to f32 as it
 * packs them; AVX512_BF16 packs bf16 pairs for vdpbf16ps, AVX512_VNNI
 * int8 quads for vpdpbusd), and otherwise convert the weights a panel at a
 * time for f32 products (Q8_0's go to the level's int8 kernel). */
#ifndef AC_TENSOR_MAT_H
#define AC_TENSOR_MAT_H

#include <stddef.h>

#include "tensor/dtype.h"

typedef struct ac_mat {
    const void *data;
    ac_dtype dtype;       /* F32, F16, BF16 or Q8_0 */
    size_t rows, cols;
} ac_mat;

/* A plain f32 array [rows][cols] as a matrix. */
static inline ac_mat ac_mat_f32(const float *data, size_t rows, size_t cols)
{
    return (ac_mat){data, AC_DTYPE_F32, rows, cols};
}

/* Y[M][rows] = X[M][cols] . W^T + bias[rows] (bias may be NULL). Parallel
 * over the pool. F32 and F16 weights take X as it is, in f32 arithmetic;
 * BF16 weights take X rounded to bf16 (products exact, sums in f32), Q8_0,
 * Q4_K and Q6_K weights take X quantized to int8 per block of 32
 * (ac_quantize_q8_act; integer sums per block, then scaled). Should its
 * scratch memory fail, Y is NaN. */
void ac_matmul(const float *x, const ac_mat *w, const float *bias, float *y, size_t M);
/* The same product, scalar and summed in double, of X as it is and the
 * weights as f32: the reference the kernel tests compare ac_matmul against
 * (within the rounding of X that BF16, Q8_0 and K-quant products make). */
void ac_matmul_ref(const float *x, const ac_mat *w, const float *bias, float *y, size_t M);

/* Several products of the same input with matrices of the same width, as
 * one parallel pass over all their rows: Y[i] = X . W[i]^T + BIAS[i], each
 * with the bits ac_matmul gives it. Decoding pays the start-up of a pass
 * once instead of N times; many rows are rounded or quantized once for
 * all N (where the level's GEMM takes every column, so that the split does
 * not change the bits). */
void ac_matmul_multi(const float *x, size_t M, const ac_mat *const *w, const float *const *bias,
                       float *const *y, int n);

/* Conv1d with a PyTorch weight [cout][cin][kernel] used where it lies, as
 * the matrix W [cout][cin*kernel] in its stored type: x [batch][T][cin],
 * y [batch][To][cout] (To = ac_conv1d_out_len), zero padding at each
 * sequence's edges, COLS scratch of ac_conv1d_scratch floats. */
struct ac_conv1d_shape;
void ac_conv1d_mat(const struct ac_conv1d_shape *s, const float *x, size_t batch, size_t T, const ac_mat *w,
                   const float *bias, float *y, float *cols);

/* Rows [r0, r1) of W as f32 into OUT[r1-r0][cols]. */
void ac_mat_rows(const ac_mat *w, size_t r0, size_t r1, float *out);
void ac_mat_rows_ref(const ac_mat *w, size_t r0, size_t r1, float *out);

/* Entries of the kernel table (dispatch.h) for ac_matmul: the scalar
 * level's output columns [n0,n1) for a few input rows (for Q8_0 weights,
 * any number, over quantized activations: integer sums per block, scaled
 * and added in f32 in block order), and the stand-ins of the levels that
 * lack a kernel, which do no column (return n0). */
struct ac_block_q8_act;
void ac_matmul_few_ref(const float *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0, size_t n1);
void ac_matmul_q8_ref(const struct ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M,
                      size_t n0, size_t n1);
/* Output columns [n0,n1) with Q4_K or Q6_K weights for activations
 * quantized by ac_quantize_q8_act: integer sums per block of 32 (Q4_K:
 * times the sub-block's scale, its min taken out with the activations'
 * block sum; Q6_K: each half-block's 16 times its scale), scaled and added
 * in f32 in block order. */
void ac_matmul_qk_ref(const struct ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M,
                      size_t n0, size_t n1);
size_t ac_gemm_q8_none(const struct ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M,
                       size_t n0, size_t n1, float *pack);
size_t ac_matmul_row16_none(const float *x, const ac_mat *w, const float *bias, float *y, size_t n0, size_t n1);
size_t ac_gemm16_none(const float *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0, size_t n1,
                      float *pack);

#endif
