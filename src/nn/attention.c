#include "nn/attention.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "base/error.h"
#include "base/f16.h"
#include "base/threadpool.h"
#include "tensor/dispatch.h"

enum {
    FEW_ROWS = 4,           /* up to this many queries: one row at a time, K/V rows read directly */
    INLINE_WORK = 16384,    /* below this many query x key x channel products, no dispatch */
    Q_BLOCK = 256,          /* query rows whose scores a KV head holds at once: bounds the scratch
                               (Whisper's 1500 x 1500 scores of 16 heads would be 150 MB) */
    TILED_ROWS = 24,        /* the same for the kernel table's attention tiles: their scores
                               stay in L2 beside the head's packed K and V */
    SLOTS = 8               /* KV heads attended at once, each in its own scratch: Whisper's
                               20 heads over 1,500 rows held 37 MiB of scratch at once */
};

static size_t group(const ac_attn_opts *o) { return (size_t)(o->heads / o->kv_heads); }

static size_t block_rows(size_t nq) { return nq < Q_BLOCK ? nq : Q_BLOCK; }

/* Scratch of one KV head: a group's scores and, for many rows, a block of
 * rows' scores and V^T. */
static size_t unit_floats(const ac_attn_opts *o, size_t nq, size_t nk)
{
    size_t dk = (size_t)o->head_dim, plain = nk * (group(o) + block_rows(nq) + dk);
    /* the tiles' scores, K in panels and V in padded rows, whichever level runs */
    size_t tiled = TILED_ROWS * nk + (nk + AC_ATTN_KP - 1) / AC_ATTN_KP * AC_ATTN_KP * dk + nk * AC_ATTN_VP(dk);
    return plain > tiled ? plain : tiled;
}

/* KV head U's first row in BASE, heads HEAD_LD apart (0: side by side) */
static const float *head_rows(const float *base, size_t u, size_t head_ld, size_t dk)
{
    return base + u * (head_ld ? head_ld : dk);
}

static size_t slots(const ac_attn_opts *o) { return o->kv_heads < SLOTS ? (size_t)o->kv_heads : SLOTS; }

size_t ac_attention_scratch(const ac_attn_opts *o, size_t nq, size_t nk)
{
    return slots(o) * unit_floats(o, nq, nk);
}

typedef struct {
    const ac_attn_opts *o;
    const float *q;
    size_t nq, q_ld, out_ld;
    const ac_attn_kv *kv;
    const ac_mask *mask;
    float *out, *scratch, scale;
    size_t wave; /* the first KV head of the heads in progress */
} attn_job;

/* KV head U's scratch: its slot among the heads in progress */
static float *unit_scratch(const attn_job *j, size_t u)
{
    return j->scratch + u % slots(j->o) * unit_floats(j->o, j->nq, j->kv->n);
}

/* The mask of query head H from query row R on. */
static const ac_mask *mask_at(const ac_mask *m, size_t h, size_t r, ac_mask *buf)
{
    if (!m) return NULL;
    *buf = *m;
    buf->row0 += r;
    if (buf->add) buf->add += h * m->head_stride;
    return buf;
}

/* Softmax of query head H's scores S[rows][nk] from query row R on. */
static void probabilities(const attn_job *j, float *s, size_t rows, size_t h, size_t r)
{
    ac_mask m;
    ac_softmax_masked(s, rows, j->kv->n, j->scale, mask_at(j->mask, h, r, &m));
}

/* Many rows through the kernel table's tiles: K and V of KV head U packed
 * once, then per query head and block of rows the scores, their
 * probabilities as probabilities() makes them, and the weighted sum of V.
 * Keys every row of a block masks (padding, the causal future) are never
 * computed: their probabilities would be exactly zero. */
static void attend_tiled(const attn_job *j, size_t u, const ac_kernel_table *kt)
{
    const ac_attn_kv *kv = j->kv;
    size_t g = group(j->o), dk = (size_t)j->o->head_dim, dkp = AC_ATTN_VP(dk), nk = kv->n, h0 = u * g;
    const ac_mask *m = j->mask;
    if (m && m->keys && m->keys < nk) nk = m->keys;
    float *s = unit_scratch(j, u), *kp = s + TILED_ROWS * kv->n;
    float *vp = kp + (nk + AC_ATTN_KP - 1) / AC_ATTN_KP * AC_ATTN_KP * dk;
    const float *K = head_rows(kv->k, u, kv->head_ld, dk), *V = head_rows(kv->v, u, kv->head_ld, dk);
    /* bf16 pairs take at most the f32 packs' room */
    int half = j->o->bf16 && dk <= AC_ATTN_BF16_DK && ac_kernels_simd() >= AC_SIMD_AVX512_BF16;
    if (half) {
        kt->attn_pack16(K, V, kv->ld, nk, dk, (uint32_t *)kp, (uint32_t *)vp);
    } else {
        /* K rows read whole, written down a panel's columns (the panel in L1) */
        for (size_t t0 = 0; t0 < nk; t0 += AC_ATTN_KP)
            for (size_t t = t0; t < t0 + AC_ATTN_KP; t++)
                for (size_t d = 0; d < dk; d++)
                    kp[t0 * dk + d * AC_ATTN_KP + t - t0] = t < nk ? K[t * kv->ld + d] : 0.0f;
        for (size_t t = 0; t < nk; t++)
            for (size_t d = 0; d < dkp; d++) vp[t * dkp + d] = d < dk ? V[t * kv->ld + d] : 0.0f;
    }
    for (size_t h = h0; h < h0 + g; h++)
        for (size_t r = 0; r < j->nq; r += TILED_ROWS) {
            size_t n = j->nq - r < TILED_ROWS ? j->nq - r : TILED_ROWS, keys = nk;
            if (m && m->causal && m->row0 + r + n < keys) keys = m->row0 + r + n;
            float *out = j->out + r * j->out_ld + h * dk;
            if (!keys) { /* every key masked: zeros, as probabilities() gives */
                for (size_t i = 0; i < n; i++) memset(out + i * j->out_ld, 0, dk * sizeof *out);
                continue;
            }
            const float *q = j->q + r * j->q_ld + h * dk;
            if (half) kt->attn_scores16(q, j->q_ld, n, (const uint32_t *)kp, keys, dk, s);
            else kt->attn_scores(q, j->q_ld, n, kp, keys, dk, s);
            ac_mask buf;
            kt->attn_softmax(s, n, keys, j->scale, mask_at(m, h, r, &buf));
            if (half) kt->attn_values16(s, n, (const uint32_t *)vp, keys, dk, out, j->out_ld);
            else kt->attn_values(s, n, vp, keys, dk, out, j->out_ld);
        }
}

/* KV head U and its group of query heads h0 .. h0+g-1 (consecutive, so a
 * row's group is one contiguous [g][head_dim] block). */
static void attend_unit(const attn_job *j, size_t u)
{
    const ac_attn_kv *kv = j->kv;
    size_t g = group(j->o), dk = (size_t)j->o->head_dim, nk = kv->n, h0 = u * g;
    float *s = unit_scratch(j, u);
    if (kv->kh) { /* per-head K and V^T: two products per row for the whole group */
        for (size_t r = 0; r < j->nq; r++) {
            ac_matmul(j->q + r * j->q_ld + h0 * dk, &kv->kh[u], NULL, s, g);
            for (size_t i = 0; i < g; i++) probabilities(j, s + i * nk, 1, h0 + i, r);
            ac_matmul(s, &kv->vt[u], NULL, j->out + r * j->out_ld + h0 * dk, g);
        }
        return;
    }
    const float *K = head_rows(kv->k, u, kv->head_ld, dk), *V = head_rows(kv->v, u, kv->head_ld, dk);
    /* the tiles run on one thread per KV head: a single one spreads BLAS's products over the pool instead */
    if (j->o->tiles && j->nq > FEW_ROWS && !kv->n_shared && ac_kernels_simd() >= AC_SIMD_AVX512 &&
        j->o->kv_heads > 1) {
        attend_tiled(j, u, ac_kernels());
        return;
    }
    if (j->nq <= FEW_ROWS || kv->n_shared) {
        /* K and V read once for the group, a row at a time: a cache streams */
        const ac_kernel_table *kt = ac_kernels();
        size_t ns = kv->n_shared, own = nk - ns;
        const float *KS = head_rows(kv->k_shared, u, kv->head_ld_shared, dk);
        const float *VS = head_rows(kv->v_shared, u, kv->head_ld_shared, dk);
        for (size_t r = 0; r < j->nq; r++) {
            const float *q = j->q + r * j->q_ld + h0 * dk;
            float *out = j->out + r * j->out_ld + h0 * dk;
            if (ns) kt->attn_dot_rows(q, g, KS, kv->ld, ns, dk, s, nk);
            if (own) kt->attn_dot_rows(q, g, K, kv->ld, own, dk, s + ns, nk);
            for (size_t i = 0; i < g; i++) probabilities(j, s + i * nk, 1, h0 + i, r);
            if (ns) kt->attn_mix_rows(s, nk, g, VS, kv->ld, ns, dk, out, dk, 0);
            if (own || !ns) kt->attn_mix_rows(s + ns, nk, g, V, kv->ld, own, dk, out, dk, ns > 0); /* no keys: zeros */
        }
        return;
    }
    const size_t rows = block_rows(j->nq);
    float *vt = s + rows * nk; /* V^T [dk][nk], once for the group */
    for (size_t t = 0; t < nk; t++)
        for (size_t d = 0; d < dk; d++) vt[d * nk + t] = V[t * kv->ld + d];
    for (size_t h = h0; h < h0 + g; h++)
        for (size_t r = 0; r < j->nq; r += rows) {
            size_t n = j->nq - r < rows ? j->nq - r : rows;
            ac_matmul_nt(j->q + r * j->q_ld + h * dk, j->q_ld, K, kv->ld, NULL, s, nk, n, nk, dk);
            probabilities(j, s, n, h, r);
            ac_matmul_nt(s, nk, vt, nk, NULL, j->out + r * j->out_ld + h * dk, j->out_ld, n, dk, nk);
        }
}

static void units_range(void *ctx, size_t u0, size_t u1)
{
    attn_job *j = ctx;
    for (size_t u = u0; u < u1; u++) attend_unit(j, j->wave + u);
}

void ac_attention(const ac_attn_opts *o, const float *q, size_t nq, size_t q_ld, const ac_attn_kv *kv,
                  const ac_mask *mask, float *out, size_t out_ld, float *scratch)
{
    float scale = o->scale > 0 ? o->scale : 1.0f / sqrtf((float)o->head_dim);
    attn_job j = {o, q, nq, q_ld, out_ld, kv, mask, out, scratch, scale, 0};
    size_t units = (size_t)o->kv_heads, wave = slots(o);
    /* one KV head per task, SLOTS at a time; with a single KV head the
     * products inside spread over the pool instead */
    if (nq * kv->n * (size_t)o->heads * (size_t)o->head_dim < INLINE_WORK || units == 1)
        units_range(&j, 0, units);
    else
        for (; j.wave < units; j.wave += wave)
            ac_parallel_for(units - j.wave < wave ? units - j.wave : wave, 1, units_range, &j);
}

ac_status ac_attn_kv_pack(const ac_attn_opts *o, const float *k, const float *v, size_t n, size_t ld,
                          ac_dtype dtype, ac_arena *a, ac_mat *kh, ac_mat *vt)
{
    if (dtype != AC_DTYPE_F32 && dtype != AC_DTYPE_F16)
        return ac_error(AC_ERR_ARG, "attention K/V can be stored as F32 or F16, not %s", ac_dtype_name(dtype));
    size_t dk = (size_t)o->head_dim, esz = dtype == AC_DTYPE_F32 ? 4 : 2, block = n * dk * esz;
    unsigned char *store = ac_arena_alloc(a, 2 * (size_t)o->kv_heads * block);
    if (!store) return AC_ERR_NOMEM;
    for (size_t u = 0; u < (size_t)o->kv_heads; u++)
        for (int is_v = 0; is_v < 2; is_v++) {
            unsigned char *dst = store + (2 * u + (size_t)is_v) * block;
            const float *src = (is_v ? v : k) + u * dk;
            if (is_v) vt[u] = (ac_mat){dst, dtype, dk, n};
            else kh[u] = (ac_mat){dst, dtype, n, dk};
            for (size_t r = 0; r < n; r++)
                for (size_t e = 0; e < dk; e++) {
                    size_t at = is_v ? e * n + r : r * dk + e;
                    float x = src[r * ld + e];
                    if (dtype == AC_DTYPE_F32) ((float *)dst)[at] = x;
                    else ((uint16_t *)dst)[at] = ac_f32_to_f16(x);
                }
        }
    return AC_OK;
}

/* ---- layers ---------------------------------------------------------- */

/* RoPE on rows of HEADS heads (stride LD): all of each head, or its first
 * rope_dim channels. */
static void rotate(const ac_attn_opts *o, float *x, size_t rows, size_t ld, size_t heads, const int *pos)
{
    size_t dh = (size_t)o->head_dim, r = o->rope_dim > 0 ? (size_t)o->rope_dim : dh;
    ac_rope_partial(x, rows, ld, heads, dh, r, pos, o->rope_theta);
}

/* The per-head norms and RoPE of q [rows][heads] and k [rows][kv_heads]. */
static void position(const ac_attn_opts *o, const ac_attn_weights *w, float *q, float *k, size_t rows,
                     const int *pos)
{
    size_t dh = (size_t)o->head_dim, qw = (size_t)o->heads * dh, kvw = (size_t)o->kv_heads * dh;
    if (w->q_norm) ac_rmsnorm(q, q, rows * (size_t)o->heads, dh, w->q_norm, 0, o->qk_norm_eps);
    if (w->k_norm) ac_rmsnorm(k, k, rows * (size_t)o->kv_heads, dh, w->k_norm, 0, o->qk_norm_eps);
    if (o->rope_theta > 0) {
        rotate(o, q, rows, qw, (size_t)o->heads, pos);
        rotate(o, k, rows, kvw, (size_t)o->kv_heads, pos);
    }
}

size_t ac_attn_layer_scratch(const ac_attn_opts *o, size_t rows, size_t nk)
{
    size_t qw = (size_t)o->heads * (size_t)o->head_dim, kvw = (size_t)o->kv_heads * (size_t)o->head_dim;
    return 2 * rows * (qw + kvw) + ac_attention_scratch(o, rows, nk);
}

void ac_attn_self(const ac_attn_opts *o, const ac_attn_weights *w, const float *x, size_t T, const int *pos,
                  const ac_mask *mask, float *y, float *scratch)
{
    size_t qw = (size_t)o->heads * (size_t)o->head_dim, kvw = (size_t)o->kv_heads * (size_t)o->head_dim;
    float *q = scratch, *k = q + T * qw, *v = k + T * kvw, *ctx = v + T * kvw, *sa = ctx + T * qw;
    const ac_mat *mats[3] = {w->wq, w->wk, w->wv};
    const float *bias[3] = {w->bq, w->bk, w->bv};
    float *outs[3] = {q, k, v};
    ac_matmul_multi(x, T, mats, bias, outs, 3);
    position(o, w, q, k, T, pos);
    ac_attention(o, q, T, qw, &(ac_attn_kv){.n = T, .k = k, .v = v, .ld = kvw}, mask, ctx, qw, sa);
    ac_matmul(ctx, w->wo, w->bo, y, T);
}

/* Rows of one beam at consecutive positions whose keys all lie in one
 * part of the cache (all shared, or a cache without a shared prompt): a
 * prompt, which attends as one causal block of many rows. */
static int prompt_block(const ac_kv_cache *c, size_t R, const int *beam, const int *pos)
{
    if (R < 2 || (c->shared && pos[R - 1] >= c->shared)) return 0;
    for (size_t r = 1; r < R; r++)
        if (beam[r] != beam[0] || pos[r] != pos[0] + (int)r) return 0;
    return 1;
}

ac_status ac_attn_cached(const ac_attn_opts *o, const ac_attn_weights *w, ac_kv_cache *c, int layer,
                         const float *x, int rows, const int *beam, const int *pos, float *y, float *scratch)
{
    size_t R = (size_t)rows, qw = (size_t)o->heads * (size_t)o->head_dim, kvw = (size_t)c->kv_heads * c->head_dim;
    if (c->kv_heads != o->kv_heads || c->head_dim != (size_t)o->head_dim)
        return ac_error(AC_ERR_ARG, "KV cache of %d heads of %zu for attention with %d of %d", c->kv_heads,
                        c->head_dim, o->kv_heads, o->head_dim);
    float *q = scratch, *k = q + R * qw, *v = k + R * kvw, *ctx = v + R * kvw, *sa = ctx + R * qw;
    const ac_mat *mats[3] = {w->wq, w->wk, w->wv};
    const float *bias[3] = {w->bq, w->bk, w->bv};
    float *outs[3] = {q, k, v};
    ac_matmul_multi(x, R, mats, bias, outs, 3);
    position(o, w, q, k, R, pos);
    /* every row is stored before any attends: a prompt's rows see each other */
    for (size_t r = 0; r < R; r++) AC_TRY(ac_kv_cache_append(c, layer, beam[r], pos[r], k + r * kvw, v + r * kvw));
    if (prompt_block(c, R, beam, pos)) {
        /* one causal block over the beam's positions 0..last: the tiles or products of many rows */
        ac_attn_kv kv = {.n = (size_t)pos[R - 1] + 1, .k = ac_kv_cache_k(c, layer, beam[0], 0),
                         .v = ac_kv_cache_v(c, layer, beam[0], 0), .ld = c->head_dim,
                         .head_ld = ac_kv_cache_head_step(c, 0)};
        ac_attention(o, q, R, qw, &kv, &(ac_mask){.causal = 1, .row0 = (size_t)pos[0]}, ctx, qw, sa);
        ac_matmul(ctx, w->wo, w->bo, y, R);
        return AC_OK;
    }
    for (size_t r = 0; r < R; r++) {
        /* the shared positions, then the beam's own */
        int n = pos[r] + 1, ns = n > c->shared ? c->shared : 0;
        ac_attn_kv kv = {.n = (size_t)n, .k = ac_kv_cache_k(c, layer, beam[r], ns),
                         .v = ac_kv_cache_v(c, layer, beam[r], ns), .ld = c->head_dim,
                         .head_ld = ac_kv_cache_head_step(c, ns), .n_shared = (size_t)ns,
                         .head_ld_shared = ac_kv_cache_head_step(c, 0), .k_shared = ac_kv_cache_k(c, layer, 0, 0),
                         .v_shared = ac_kv_cache_v(c, layer, 0, 0)};
        ac_attention(o, q + r * qw, 1, qw, &kv, NULL, ctx + r * qw, qw, sa);
    }
    ac_matmul(ctx, w->wo, w->bo, y, R);
    return AC_OK;
}

void ac_attn_cross(const ac_attn_opts *o, const ac_attn_weights *w, const ac_attn_kv *kv, const float *x,
                   size_t rows, const ac_mask *mask, float *y, float *scratch)
{
    size_t qw = (size_t)o->heads * (size_t)o->head_dim;
    float *q = scratch, *ctx = q + rows * qw, *sa = ctx + rows * qw;
    ac_matmul(x, w->wq, w->bq, q, rows);
    ac_attention(o, q, rows, qw, kv, mask, ctx, qw, sa);
    ac_matmul(ctx, w->wo, w->bo, y, rows);
}
