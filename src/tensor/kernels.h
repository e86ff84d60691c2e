/* Compute kernels over f32 activations. Layouts are row-major and
 * time-major: a sequence is [T][C], each frame's channels contiguous.
 *
 * Every kernel has a scalar reference twin (suffix _ref) that states its
 * meaning plainly; the plain name dispatches at run time to an AVX2/FMA
 * version when the CPU has it (see ac_kernels_set_simd). Unit tests compare
 * the two. Results never depend on the thread count: each output is always
 * computed by the same sequence of operations. */
#ifndef AC_TENSOR_KERNELS_H
#define AC_TENSOR_KERNELS_H

#include <stddef.h>

/* 1: use AVX2/FMA when the CPU has it (default); 0: scalar everywhere. */
void ac_kernels_set_simd(int on);
int ac_kernels_simd(void);   /* whether SIMD kernels are in use now */
/* 1: large matrix products use OpenBLAS (default); 0: our kernels only. */
void ac_kernels_set_blas(int on);

/* Y[M][N] = X[M][K] . W[N][K]^T + bias[N]  (bias may be NULL). The weight
 * is stored [out][in], as PyTorch's Linear. Parallel over the pool. */
void ac_linear(const float *x, const float *w, const float *bias, float *y,
               size_t M, size_t N, size_t K);
void ac_linear_ref(const float *x, const float *w, const float *bias, float *y,
                   size_t M, size_t N, size_t K);
/* The same with row strides (in floats) for each matrix: attention heads
 * are column blocks of a wider matrix. */
void ac_matmul_nt(const float *x, size_t ldx, const float *w, size_t ldw, const float *bias,
                  float *y, size_t ldy, size_t M, size_t N, size_t K);
void ac_matmul_nt_ref(const float *x, size_t ldx, const float *w, size_t ldw, const float *bias,
                      float *y, size_t ldy, size_t M, size_t N, size_t K);

/* Conv1d over BATCH independent sequences (zero padding at each one's
 * edges). x: [batch][T][cin]; w: [cout][kernel][cin] (see
 * ac_conv1d_weight_from_torch); y: [batch][To][cout]. */
typedef struct ac_conv1d_shape {
    int cin, cout, kernel, stride, pad, dilation;
} ac_conv1d_shape;

size_t ac_conv1d_out_len(const ac_conv1d_shape *s, size_t T);
/* Floats of scratch that ac_conv1d needs for this input. */
size_t ac_conv1d_scratch(const ac_conv1d_shape *s, size_t batch, size_t T);
void ac_conv1d(const ac_conv1d_shape *s, const float *x, size_t batch, size_t T,
               const float *w, const float *bias, float *y, float *scratch);
void ac_conv1d_ref(const ac_conv1d_shape *s, const float *x, size_t batch, size_t T,
                   const float *w, const float *bias, float *y);
/* PyTorch's [cout][cin][kernel] to our [cout][kernel][cin]. */
void ac_conv1d_weight_from_torch(const float *src, float *dst, int cout, int cin, int kernel);

/* Depthwise conv1d (groups = channels). x: [batch][T][C]; w: [kernel][C]
 * (see ac_depthwise_weight_from_torch); y: [batch][To][C]. Uses the cin
 * field of S as C; cout must equal cin. */
void ac_conv1d_depthwise(const ac_conv1d_shape *s, const float *x, size_t batch,
                         size_t T, const float *w, const float *bias, float *y);
void ac_conv1d_depthwise_ref(const ac_conv1d_shape *s, const float *x, size_t batch,
                             size_t T, const float *w, const float *bias, float *y);
/* PyTorch's [C][1][kernel] to our [kernel][C]. */
void ac_depthwise_weight_from_torch(const float *src, float *dst, int C, int kernel);

/* x[r][c] = x[r][c] * scale[c] + shift[c], then ReLU if RELU. Batch norm in
 * eval form after ac_batchnorm_fold. */
void ac_channel_affine(float *x, size_t rows, size_t C, const float *scale,
                       const float *shift, int relu);
void ac_channel_affine_ref(float *x, size_t rows, size_t C, const float *scale,
                           const float *shift, int relu);
/* scale = gamma / sqrt(var + eps), shift = beta - mean * scale. */
void ac_batchnorm_fold(const float *gamma, const float *beta, const float *mean,
                       const float *var, float eps, size_t C, float *scale, float *shift);

/* Element-wise, in place. */
void ac_relu(float *x, size_t n);
void ac_relu_ref(float *x, size_t n);
void ac_sigmoid(float *x, size_t n);
void ac_sigmoid_ref(float *x, size_t n);
void ac_tanh(float *x, size_t n);
void ac_tanh_ref(float *x, size_t n);
void ac_exp(float *x, size_t n);
void ac_exp_ref(float *x, size_t n);
/* x[i] = x[i] * sigmoid(x[i]) */
void ac_silu(float *x, size_t n);
void ac_silu_ref(float *x, size_t n);
/* y[N] = A^T . x for A[M][N] with row stride LDA: the weighted sum of M
 * rows (attention's values). */
void ac_gemv_t(const float *A, size_t lda, const float *x, float *y, size_t M, size_t N);
void ac_gemv_t_ref(const float *A, size_t lda, const float *x, float *y, size_t M, size_t N);
/* y[i] += alpha * x[i] */
void ac_axpy(float *y, const float *x, float alpha, size_t n);
void ac_axpy_ref(float *y, const float *x, float alpha, size_t n);
/* GLU over channels: y[r][c] = x[r][c] * sigmoid(x[r][C + c]), x is [rows][2C]. */
void ac_glu(const float *x, float *y, size_t rows, size_t C);
void ac_glu_ref(const float *x, float *y, size_t rows, size_t C);
/* LayerNorm of each row of x[rows][C] into y (may be x). */
void ac_layernorm(const float *x, float *y, size_t rows, size_t C, const float *gamma,
                  const float *beta, float eps);
void ac_layernorm_ref(const float *x, float *y, size_t rows, size_t C, const float *gamma,
                      const float *beta, float eps);
/* Softmax of each row of x[rows][cols], in place. */
void ac_softmax_rows(float *x, size_t rows, size_t cols);
void ac_softmax_rows_ref(float *x, size_t rows, size_t cols);
/* x = x - log(sum(exp(x))), in place. */
void ac_log_softmax(float *x, size_t n);
void ac_log_softmax_ref(float *x, size_t n);

/* One LSTM step (PyTorch gate order i, f, g, o). gx[4H] holds
 * W_ih.x + b_ih + b_hh; w_hh is [4H][H]; h and c are updated in place;
 * scratch holds 4H floats. */
void ac_lstm_cell(const float *gx, const float *w_hh, float *h, float *c,
                  size_t H, float *scratch);
void ac_lstm_cell_ref(const float *gx, const float *w_hh, float *h, float *c,
                      size_t H, float *scratch);

#endif
