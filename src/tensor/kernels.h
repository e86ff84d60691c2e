/* Compute kernels over f32 activations. Layouts are row-major and
 * time-major: a sequence is [T][C], each frame's channels contiguous.
 *
 * Every kernel has a scalar reference twin (suffix _ref) that states its
 * meaning plainly; the plain name calls through the kernel table
 * (dispatch.h) of the level in use: AVX2/FMA versions when the CPU has
 * them, AVX-512 ones where that measurably helps (see ac_kernels_set_simd).
 * Unit tests compare them at every level the CPU has. Results never depend
 * on the thread count: each output is always computed by the same sequence
 * of operations. */
#ifndef AC_TENSOR_KERNELS_H
#define AC_TENSOR_KERNELS_H

#include <stddef.h>

/* Instruction sets, in order: each level includes the ones below it and
 * has its kernel table in dispatch.c (where a new level goes):
 * AVX512_VNNI adds the int8 dot products of Q8_0 weights, AVX512_BF16 the
 * bf16 ones of BF16 weights. AC_SIMD_LEVELS counts them. */
enum { AC_SIMD_NONE, AC_SIMD_AVX2, AC_SIMD_AVX512, AC_SIMD_AVX512_VNNI, AC_SIMD_AVX512_BF16, AC_SIMD_LEVELS };
/* The highest level to use (default the highest); the CPU caps it. */
void ac_kernels_set_simd(int level);
int ac_kernels_simd(void);   /* the level in use now (0: scalar everywhere) */
/* 1: large matrix products use OpenBLAS (default); 0: our kernels only. */
void ac_kernels_set_blas(int on);

/* Y[M][N] = X[M][K] . W[N][K]^T + bias[N] (bias may be NULL) with row
 * strides (in floats) for each matrix: attention heads are column blocks
 * of a wider matrix. Weight matrices go through ac_matmul (mat.h). */
void ac_matmul_nt(const float *x, size_t ldx, const float *w, size_t ldw, const float *bias,
                  float *y, size_t ldy, size_t M, size_t N, size_t K);
void ac_matmul_nt_ref(const float *x, size_t ldx, const float *w, size_t ldw, const float *bias,
                      float *y, size_t ldy, size_t M, size_t N, size_t K);
/* Rows [m0,m1) and columns [n0,n1) of ac_matmul_nt_ref. */
void ac_matmul_nt_range_ref(const float *x, size_t ldx, const float *w, size_t ldw, const float *bias, float *y,
                            size_t ldy, size_t K, size_t m0, size_t m1, size_t n0, size_t n1);

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

/* Transposed conv1d as PyTorch's ConvTranspose1d: input frame t with tap k
 * adds to output frame t*stride - pad + k*dilation (frames outside
 * [0, To) dropped). x: [batch][T][cin]; w: [kernel][cout][cin] (see
 * ac_conv_transpose1d_weight_from_torch); y: [batch][To][cout]. */
typedef struct ac_convt1d_shape {
    int cin, cout, kernel, stride, pad, out_pad, dilation;
} ac_convt1d_shape;

/* (T-1)*stride - 2*pad + dilation*(kernel-1) + out_pad + 1, or 0. */
size_t ac_conv_transpose1d_out_len(const ac_convt1d_shape *s, size_t T);
/* Floats of scratch that ac_conv_transpose1d needs for this input. */
size_t ac_conv_transpose1d_scratch(const ac_convt1d_shape *s, size_t batch, size_t T);
void ac_conv_transpose1d(const ac_convt1d_shape *s, const float *x, size_t batch, size_t T,
                         const float *w, const float *bias, float *y, float *scratch);
void ac_conv_transpose1d_ref(const ac_convt1d_shape *s, const float *x, size_t batch, size_t T,
                             const float *w, const float *bias, float *y);
/* PyTorch's [cin][cout][kernel] to our [kernel][cout][cin]. */
void ac_conv_transpose1d_weight_from_torch(const float *src, float *dst, int cin, int cout, int kernel);

/* Depthwise conv1d (groups = channels). x: [batch][T][C]; w: [kernel][C]
 * (see ac_depthwise_weight_from_torch); y: [batch][To][C]. Uses the cin
 * field of S as C; cout must equal cin. */
void ac_conv1d_depthwise(const ac_conv1d_shape *s, const float *x, size_t batch,
                         size_t T, const float *w, const float *bias, float *y);
void ac_conv1d_depthwise_ref(const ac_conv1d_shape *s, const float *x, size_t batch,
                             size_t T, const float *w, const float *bias, float *y);
/* PyTorch's [C][1][kernel] to our [kernel][C]. */
void ac_depthwise_weight_from_torch(const float *src, float *dst, int C, int kernel);

/* A bank of PHASES filters of TAPS values over BLOCKS windows of x that
 * start STEP apart: out[i*phases + j] = sum over m < taps of
 * bank[j*stride + m] * x[i*step + m]. Each filter's row is STRIDE floats,
 * a multiple of 8, zero from TAPS on; x holds (blocks-1)*step + stride
 * values. A polyphase resampler's inner loop. */
void ac_polyphase(const float *bank, size_t taps, size_t stride, size_t phases, const float *x, size_t step,
                  size_t blocks, float *out);
void ac_polyphase_ref(const float *bank, size_t taps, size_t stride, size_t phases, const float *x, size_t step,
                      size_t blocks, float *out);

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
/* x[i] = x[i]/2 * (1 + erf(x[i]/sqrt(2))): the exact GELU, not the tanh form. */
void ac_gelu(float *x, size_t n);
void ac_gelu_ref(float *x, size_t n);
/* y[i] *= x[i] */
void ac_mul(float *y, const float *x, size_t n);
/* y[i] = silu(y[i]) * x[i] in one pass: the bits of ac_silu then ac_mul
 * (a gated feed-forward's SiLU and gate) */
void ac_silu_mul(float *y, const float *x, size_t n);
void ac_silu_mul_ref(float *y, const float *x, size_t n);
void ac_mul_ref(float *y, const float *x, size_t n);
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
/* RMSNorm of each row of x[rows][C] into y (may be x):
 * y = x / sqrt(mean(x^2) + eps) * gamma. Row r's gamma is gamma + r *
 * GAMMA_STRIDE: 0 shares one vector, C gives each row its own (adaptive
 * norms, whose scale is computed from a condition). GAMMA may be NULL. */
void ac_rmsnorm(const float *x, float *y, size_t rows, size_t C, const float *gamma,
                size_t gamma_stride, float eps);
void ac_rmsnorm_ref(const float *x, float *y, size_t rows, size_t C, const float *gamma,
                    size_t gamma_stride, float eps);

/* Rotary position embedding in place, rotate-half convention (Llama,
 * Qwen2): row r of x (stride LD) holds HEADS heads of DIM values at
 * position POS[r] (POS NULL: r); for i < DIM/2, with angle pos * theta^(-2i/DIM) in
 * f32 as the reference code computes it, (x[i], x[i+DIM/2]) turns by it. */
void ac_rope(float *x, size_t rows, size_t ld, size_t heads, size_t dim, const int *pos, float theta);
void ac_rope_ref(float *x, size_t rows, size_t ld, size_t heads, size_t dim, const int *pos, float theta);
/* ac_rope of the first DIM values of each of HEADS heads HEAD_STEP apart
 * (partial rotary: the rest of each head passes), the angles of a row
 * computed once for all its heads. */
void ac_rope_partial(float *x, size_t rows, size_t ld, size_t heads, size_t head_step, size_t dim, const int *pos,
                     float theta);
/* One row of ac_rope_ref given the cosines and sines of its DIM/2 angles. */
void ac_rope_rotate_ref(float *x, size_t heads, size_t dim, const float *cs, const float *sn);

/* Softmax of each row of x[rows][cols], in place. */
void ac_softmax_rows(float *x, size_t rows, size_t cols);
void ac_softmax_rows_ref(float *x, size_t rows, size_t cols);

/* Which keys (columns) each query row may see. Row r of a call is row
 * ROW0 + r of the mask. The conditions combine; a row that sees no key
 * gets all zeros. */
typedef struct ac_mask {
    int causal;                  /* row R sees keys j <= R */
    size_t row0;
    size_t keys;                 /* keys j >= KEYS are padding (0: none) */
    const float *add;            /* additive [row][ld], after scaling (-inf masks) */
    const unsigned char *keep;   /* boolean [row][ld]: nonzero sees the key */
    size_t ld;
    size_t head_stride;          /* attention: head h's ADD is add + h*head_stride */
} ac_mask;

/* x = softmax(scale * x + mask) of each row of x[rows][cols], in place;
 * SCALE > 0, MASK may be NULL. */
void ac_softmax_masked(float *x, size_t rows, size_t cols, float scale, const ac_mask *mask);
void ac_softmax_masked_ref(float *x, size_t rows, size_t cols, float scale, const ac_mask *mask);
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
