/* The kernel table: one function per operation that has versions for
 * several instruction sets. Each level (AC_SIMD_*, kernels.h) has its own
 * constant table; the one in use is chosen once, from the CPU, and again by
 * ac_kernels_set_simd. The operations of kernels.h and mat.h call through
 * it; their size policies (when a product streams, packs or uses one row's
 * kernel) stay with them. */
#ifndef AC_TENSOR_DISPATCH_H
#define AC_TENSOR_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "tensor/kernels.h"
#include "tensor/mat.h"
#include "tensor/quant.h"

typedef struct ac_kernel_table {
    /* element-wise, as the kernels.h operations of the same name */
    void (*relu)(float *x, size_t n);
    void (*sigmoid)(float *x, size_t n);
    void (*tanh)(float *x, size_t n);
    void (*exp)(float *x, size_t n);
    void (*silu)(float *x, size_t n);
    void (*gelu)(float *x, size_t n);
    void (*mul)(float *y, const float *x, size_t n);
    void (*silu_mul)(float *y, const float *x, size_t n);
    void (*axpy)(float *y, const float *x, float alpha, size_t n);
    void (*channel_affine)(float *x, size_t rows, size_t C, const float *scale, const float *shift, int relu);
    /* per row */
    void (*glu)(const float *x, float *y, size_t rows, size_t C);
    void (*layernorm)(const float *x, float *y, size_t rows, size_t C, const float *gamma, const float *beta,
                      float eps);
    void (*rmsnorm)(const float *x, float *y, size_t rows, size_t C, const float *gamma, size_t gamma_stride,
                    float eps);
    /* one row of ac_rope given the cosines and sines of its DIM/2 angles */
    void (*rope_rotate)(float *x, size_t heads, size_t dim, const float *cs, const float *sn);
    void (*softmax_rows)(float *x, size_t rows, size_t cols);
    void (*softmax_masked)(float *x, size_t rows, size_t cols, float scale, const ac_mask *mask);
    void (*log_softmax)(float *x, size_t n);
    /* convolutions */
    void (*conv1d_depthwise)(const ac_conv1d_shape *s, const float *x, size_t batch, size_t T, const float *w,
                             const float *bias, float *y);
    void (*polyphase)(const float *bank, size_t taps, size_t stride, size_t phases, const float *x, size_t step,
                      size_t blocks, float *out);
    /* products: rows [m0,m1) and columns [n0,n1) of ac_matmul_nt */
    void (*matmul_nt_range)(const float *x, size_t ldx, const float *w, size_t ldw, const float *bias, float *y,
                            size_t ldy, size_t K, size_t m0, size_t m1, size_t n0, size_t n1);
    /* rows [r0,r1) of a 16-bit or Q8_0 matrix as f32 */
    void (*mat_rows)(const ac_mat *w, size_t r0, size_t r1, float *out);
    /* output columns [n0,n1) of ac_matmul for a few input rows, the weights
     * streamed once and converted in registers */
    void (*matmul_few)(const float *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                       size_t n1);
    /* output columns [n0,n1) of ac_matmul with Q8_0 weights for any number
     * of input rows, quantized by ac_quantize_q8_act: integer dot products
     * per block, then scaled */
    void (*matmul_q8)(const ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                      size_t n1);
    /* N values of X (N a multiple of 32) as activation blocks, to the bits
     * of ac_quantize_q8_act */
    void (*quantize_q8_act)(const float *x, ac_block_q8_act *out, size_t n);
    /* output columns [n0,n1) of ac_matmul with Q4_K or Q6_K weights, as ac_matmul_qk_ref */
    void (*matmul_qk)(const ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                      size_t n1);
    /* Kernels only some levels have. Each does output columns from n0 on
     * and returns the column where the caller goes on with the kernels
     * above: n0 where the level has none. X is as ac_matmul computes with:
     * for BF16 weights, rounded to bf16 (ac_round_bf16_act). */
    /* one input row against 16-bit weights, in blocks of four columns */
    size_t (*matmul_row16)(const float *x, const ac_mat *w, const float *bias, float *y, size_t n0, size_t n1);
    /* many input rows against 16-bit weights; PACK holds AC_GEMM_PACK
     * floats, 64-byte aligned, and ranges of columns are multiples of
     * AC_GEMM16_NR; AVX512_BF16's takes X as given and rounds it itself */
    size_t (*gemm16)(const float *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0, size_t n1,
                     float *pack);
    /* many input rows against Q8_0 weights; PACK and ranges as gemm16's */
    size_t (*gemm_q8)(const ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                      size_t n1, float *pack);
    /* Attention over many query rows in tiles, used from AC_SIMD_AVX512 on
     * where ac_attn_opts.tiles asks (below, the scalar twins are slower
     * than ac_matmul_nt's BLAS, which attention uses there). attn_scores: S[rows][nk] = Q . K^T,
     * Q's rows of DK channels at stride Q_LD, K packed as panels of
     * AC_ATTN_KP keys, [nk / AC_ATTN_KP rounded up][dk][AC_ATTN_KP], zero past
     * nk. attn_values: OUT[rows][dk] (stride OUT_LD) = P[rows][nk] . V,
     * V packed as [nk][AC_ATTN_VP(dk)], zero past dk. */
    void (*attn_scores)(const float *q, size_t q_ld, size_t rows, const float *kp, size_t nk, size_t dk, float *s);
    void (*attn_values)(const float *p, size_t rows, const float *vp, size_t nk, size_t dk, float *out,
                        size_t out_ld);
    /* the softmax between them, as softmax_masked (wider where a level has it) */
    void (*attn_softmax)(float *x, size_t rows, size_t cols, float scale, const ac_mask *mask);
    /* The same two products with every operand rounded to bf16 (nearest
     * even), products exact and sums in f32, from AC_SIMD_AVX512_BF16 on
     * where ac_attn_opts.bf16 asks, head_dim up to AC_ATTN_BF16_DK. A 32-bit
     * word holds a pair: K packed as panels of AC_ATTN_KP keys of channel
     * pairs, [nk / AC_ATTN_KP rounded up][dk2][AC_ATTN_KP] words (dk2 = dk / 2
     * rounded up); V as key pairs, [nk / 2 rounded up][AC_ATTN_VP(dk)] words;
     * zeros past nk and dk (attn_pack16, from one head's K and V rows LD
     * apart; every level the scalar twin's bits). Q and P are f32 as
     * above, rounded by the kernels, and P is scratch afterwards. */
    void (*attn_pack16)(const float *k, const float *v, size_t ld, size_t nk, size_t dk, uint32_t *kp, uint32_t *vp);
    void (*attn_scores16)(const float *q, size_t q_ld, size_t rows, const uint32_t *kp, size_t nk, size_t dk,
                          float *s);
    void (*attn_values16)(float *p, size_t rows, const uint32_t *vp, size_t nk, size_t dk, float *out,
                          size_t out_ld);
    /* Attention of a few query rows (decoding: a KV head's group) over key
     * and value rows each read once, in order, so that a KV cache streams
     * from memory. attn_dot_rows: S[i][t] (stride S_LD) = Q[i] . K[t] for
     * i < G (Q's rows DK apart) and t < N (K's rows LD apart).
     * attn_mix_rows: OUT[i][d] (stride OUT_LD) = (ADD ? OUT[i][d] : 0) +
     * sum over t of P[i][t] V[t][d] (P's rows P_LD apart, V's LD apart),
     * one fused multiply-add a key in t's order: every level's sums are the
     * scalar twin's bits. */
    void (*attn_dot_rows)(const float *q, size_t g, const float *k, size_t ld, size_t n, size_t dk, float *s,
                          size_t s_ld);
    void (*attn_mix_rows)(const float *p, size_t p_ld, size_t g, const float *v, size_t ld, size_t n, size_t dk,
                          float *out, size_t out_ld, int add);
} ac_kernel_table;

#define AC_ATTN_KP 64
#define AC_ATTN_VP(dk) (((dk) + 15) / 16 * 16)
#define AC_ATTN_BF16_DK 256
void ac_attn_pack_bf16_ref(const float *k, const float *v, size_t ld, size_t nk, size_t dk, uint32_t *kp,
                           uint32_t *vp);
void ac_attn_scores16_ref(const float *q, size_t q_ld, size_t rows, const uint32_t *kp, size_t nk, size_t dk, float *s);
void ac_attn_values16_ref(float *p, size_t rows, const uint32_t *vp, size_t nk, size_t dk, float *out, size_t out_ld);
void ac_attn_scores_ref(const float *q, size_t q_ld, size_t rows, const float *kp, size_t nk, size_t dk, float *s);
void ac_attn_values_ref(const float *p, size_t rows, const float *vp, size_t nk, size_t dk, float *out, size_t out_ld);
void ac_attn_dot_rows_ref(const float *q, size_t g, const float *k, size_t ld, size_t n, size_t dk, float *s,
                          size_t s_ld);
void ac_attn_mix_rows_ref(const float *p, size_t p_ld, size_t g, const float *v, size_t ld, size_t n, size_t dk,
                          float *out, size_t out_ld, int add);

/* the blocks of gemm16: output columns, then input columns */
#define AC_GEMM16_NR 64
#define AC_GEMM16_KC 256
/* input rows a GEMM packs at a time (a multiple of its tiles' rows) */
#define AC_GEMM_MC 1008
/* floats of a GEMM's packing buffer: a block of weight rows (all the int8
 * GEMMs use) and one of X (BF16's: at most AC_GEMM_MC rows, fewer for a
 * product of fewer, which then needs only AC_GEMM_PACK_FOR(M) floats) */
#define AC_GEMM_W_PACK (AC_GEMM16_KC * AC_GEMM16_NR)
#define AC_GEMM_PACK_FOR(M) (AC_GEMM_W_PACK + ((M) < AC_GEMM_MC ? (M) : AC_GEMM_MC) * AC_GEMM16_KC / 2)
#define AC_GEMM_PACK AC_GEMM_PACK_FOR(AC_GEMM_MC)

/* The table in use. */
const ac_kernel_table *ac_kernels(void);
/* LEVEL's table, whether or not this CPU can run it (for tests). */
const ac_kernel_table *ac_kernels_at(int level);

#endif
