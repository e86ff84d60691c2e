/* Scaled dot-product attention, multi-head or grouped-query: HEADS query
 * heads share KV_HEADS key/value heads, each KV head serving HEADS/KV_HEADS
 * consecutive query heads. A KV head is read once for its whole group:
 * repeated K/V are never made. Rows are time-major; a row of queries is
 * [heads][head_dim], a row of keys or values [kv_heads][head_dim].
 *
 * Three entry points: the core over given K/V (cross-attention, or keys
 * computed by the caller), and two layers that also run the projections:
 * self-attention over a whole sequence, and one step of decoding over a
 * KV cache. They read weights as ac_mat, never a family's struct. */
#ifndef AC_NN_ATTENTION_H
#define AC_NN_ATTENTION_H

#include <stddef.h>

#include "audioc.h"
#include "base/arena.h"
#include "nn/kv_cache.h"
#include "tensor/kernels.h"
#include "tensor/mat.h"

typedef struct ac_attn_opts {
    int heads, kv_heads, head_dim;   /* heads a multiple of kv_heads */
    float scale;                     /* 0: 1/sqrt(head_dim) */
    float rope_theta;                /* > 0: RoPE (rotate-half) on q and k (layers only) */
    int rope_dim;                    /* channels of each head RoPE turns, from the first (0: all);
                                        the rest pass (partial rotary, the pairs i, i + rope_dim/2) */
    float qk_norm_eps;               /* eps of the per-head RMSNorm of q and k (weights' q_norm) */
    int tiles;                       /* 1: many rows through the AVX-512 tiles (ac_attention) */
    int bf16;                        /* with tiles, 1: their products on bf16 operands where the CPU
                                        has AVX512_BF16 (a family's choice for low-precision weights) */
} ac_attn_opts;

/* Keys and values over N positions, in one of two forms:
 * - rows: K[n][ld] and V[n][ld] f32, KV head h HEAD_LD floats after head
 *   0 (0: head_dim, the heads side by side in a row; nn/kv_cache holds
 *   each head's positions together, ld = head_dim); or the first N_SHARED
 *   positions at K_SHARED and V_SHARED (heads HEAD_LD_SHARED apart: a
 *   prompt the beams of a search share, nn/kv_cache) and the other
 *   N - N_SHARED at K and V (read a query row at a time);
 * - per KV head (for decoding over fixed keys): KH[h] is K [n][head_dim]
 *   and VT[h] is V transposed, [head_dim][n], in any ac_mat type (F16
 *   halves the bytes each step reads); see ac_attn_kv_pack. */
typedef struct ac_attn_kv {
    size_t n;
    const float *k, *v;
    size_t ld, head_ld;
    const ac_mat *kh, *vt;
    size_t n_shared, head_ld_shared;
    const float *k_shared, *v_shared;
} ac_attn_kv;

/* Floats of scratch ac_attention needs for NQ queries over NK keys. */
size_t ac_attention_scratch(const ac_attn_opts *o, size_t nq, size_t nk);

/* OUT[r] (stride OUT_LD) = softmax(scale * q_r . K^T + mask) . V for each
 * query row Q[r] (stride Q_LD), r < NQ. MASK may be NULL (every key seen);
 * query row r is mask row mask->row0 + r. Parallel over KV heads.
 * With O->tiles, many rows (no per-head K/V, more than one KV head) go
 * through the AVX-512 attention tiles where the CPU has them (about twice
 * the rate: bench/README.md); otherwise OpenBLAS products around the
 * softmax. The two round differently, as accurately; a family turns the
 * tiles on where they measured faster and its held accuracy figures stay
 * (docs/architecture.md). */
void ac_attention(const ac_attn_opts *o, const float *q, size_t nq, size_t q_ld, const ac_attn_kv *kv,
                  const ac_mask *mask, float *out, size_t out_ld, float *scratch);


/* Per-head K and V^T of the rows K[n][ld], V[n][ld] (f32), stored in
 * DTYPE (F32 or F16) in arena memory: the per-head form of ac_attn_kv. */
ac_status ac_attn_kv_pack(const ac_attn_opts *o, const float *k, const float *v, size_t n, size_t ld,
                          ac_dtype dtype, ac_arena *a, ac_mat *kh, ac_mat *vt);

/* The projections of an attention layer: q, k, v, o with optional biases,
 * and optional RMSNorms of each head of q and of k ([head_dim] gains,
 * Qwen3), applied after the projections and before RoPE. */
typedef struct ac_attn_weights {
    const ac_mat *wq, *wk, *wv, *wo;
    const float *bq, *bk, *bv, *bo;
    const float *q_norm, *k_norm;
} ac_attn_weights;

/* Floats of scratch for the layers below over ROWS rows and NK keys. */
size_t ac_attn_layer_scratch(const ac_attn_opts *o, size_t rows, size_t nk);

/* Y[T][dim] = o(attention of x's queries over x's keys), POS the
 * positions of RoPE (NULL: 0..T-1), MASK as in ac_attention (NULL:
 * bidirectional). */
void ac_attn_self(const ac_attn_opts *o, const ac_attn_weights *w, const float *x, size_t T, const int *pos,
                  const ac_mask *mask, float *y, float *scratch);

/* One decoding call of ROWS rows, row r at position POS[r] of beam
 * BEAM[r]: its K and V go into LAYER of the cache, then it attends over
 * its beam's positions 0..POS[r] (causal). Rows of one beam at
 * consecutive positions whose keys lie in one part of the cache (a prompt)
 * attend as one causal block, as ac_attention takes many rows (the tiles
 * where O asks); others a row at a time. Y[rows][dim]. */
ac_status ac_attn_cached(const ac_attn_opts *o, const ac_attn_weights *w, ac_kv_cache *c, int layer,
                         const float *x, int rows, const int *beam, const int *pos, float *y, float *scratch);

/* Cross-attention: queries from X[rows], keys and values given. */
void ac_attn_cross(const ac_attn_opts *o, const ac_attn_weights *w, const ac_attn_kv *kv, const float *x,
                   size_t rows, const ac_mask *mask, float *y, float *scratch);

#endif
