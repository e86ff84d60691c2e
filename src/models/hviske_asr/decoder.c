#include "models/hviske_asr/decoder.h"

#include <math.h>
#include <string.h>

#include "base/error.h"
#include "nn/attention.h"
#include "nn/ffn.h"
#include "tensor/kernels.h"
#include "tensor/mat.h"

#define LN_EPS 1e-5f

struct hviske_decoder {
    const hviske_model *m;
    int beams, cap, max_rows;
    int64_t T, T_valid;
    size_t D, V;
    ac_attn_opts opts;
    ac_kv_cache cache;       /* self-attention K/V */
    ac_mat *ck, *cv;         /* cross-attention per [layer][head]: K [T][dk], V^T [dk][T] */
    float *h, *a, *y, *scratch;
    float *xattn;            /* when set: cross-attention weights of layers >= xattn_from */
    int xattn_from;
};

void hviske_decoder_capture(hviske_decoder *d, int from_layer, float *weights)
{
    d->xattn = weights;
    d->xattn_from = from_layer;
}

/* The cross-attention distributions of layer L over the valid frames, per
 * head, for the R rows whose normalized input is d->a: OUT [heads][R][T_valid]. */
static void cross_weights(hviske_decoder *d, int l, size_t R, float *out)
{
    const hviske_dec_layer *L = &d->m->dec[l];
    size_t H = (size_t)d->opts.heads, dk = (size_t)d->opts.head_dim, D = d->D, T = (size_t)d->T,
           Tv = (size_t)d->T_valid;
    float *q = d->scratch, *qh = q + R * D, *sc = qh + R * dk;
    ac_matmul(d->a, &L->cq_w, L->cq_b, q, R);
    for (size_t h = 0; h < H; h++) {
        for (size_t r = 0; r < R; r++) memcpy(qh + r * dk, q + r * D + h * dk, dk * sizeof *qh);
        ac_matmul(qh, &d->ck[(size_t)l * H + h], NULL, sc, R);
        float *o = out + h * R * Tv;
        for (size_t r = 0; r < R; r++) {
            for (size_t t = 0; t < Tv; t++) o[r * Tv + t] = sc[r * T + t] / sqrtf((float)dk);
            ac_softmax_rows(o + r * Tv, 1, Tv);
        }
    }
}

/* Cross-attention keys and values depend only on the audio: computed once
 * per chunk and stored per head, V transposed, so that both products of a
 * step are matrix-vector products over contiguous rows. In F16 when the
 * weights are 16-bit or narrower: every step reads them all, and F16
 * halves those bytes (F32 weights keep f32 for exact parity). */
static ac_status cross_kv(hviske_decoder *d, const float *enc, ac_arena *a)
{
    const hviske_model *m = d->m;
    size_t H = (size_t)m->cfg.dec_heads, D = d->D, t = (size_t)d->T;
    ac_dtype kv = m->dec[0].ck_w.dtype == AC_DTYPE_F32 ? AC_DTYPE_F32 : AC_DTYPE_F16;
    float *k = ac_arena_floats(a, t * D), *v = ac_arena_floats(a, t * D);
    if (!k || !v) return AC_ERR_NOMEM;
    for (int l = 0; l < m->cfg.dec_layers; l++) {
        const hviske_dec_layer *L = &m->dec[l];
        ac_matmul(enc, &L->ck_w, L->ck_b, k, t);
        ac_matmul(enc, &L->cv_w, L->cv_b, v, t);
        AC_TRY(ac_attn_kv_pack(&d->opts, k, v, t, D, kv, a, d->ck + (size_t)l * H, d->cv + (size_t)l * H));
    }
    return AC_OK;
}

ac_status hviske_decoder_new(const hviske_model *m, const float *enc, int64_t T, int64_t T_valid, int beams,
                             int cap, int max_rows, ac_arena *a, hviske_decoder **out)
{
    const hviske_config *c = &m->cfg;
    *out = NULL;
    if (cap > c->max_seq)
        return ac_error(AC_ERR_ARG, "prompt plus max_new_tokens (%d) exceeds the decoder's %d positions", cap,
                        c->max_seq);
    hviske_decoder *d = ac_arena_alloc(a, sizeof *d);
    if (!d) return AC_ERR_NOMEM;
    *d = (hviske_decoder){.m = m, .beams = beams, .cap = cap, .max_rows = max_rows, .T = T,
                          .T_valid = T_valid < 1 ? 1 : T_valid, /* upstream clamps to 1 */
                          .D = (size_t)c->dec_dim, .V = (size_t)c->vocab,
                          .opts = {c->dec_heads, c->dec_heads, c->dec_dim / c->dec_heads, 0, 0}};
    size_t L = (size_t)c->dec_layers, D = d->D, R = (size_t)max_rows, t = (size_t)T;
    size_t keys = (size_t)cap > t ? (size_t)cap : t;
    size_t attn = ac_attn_layer_scratch(&d->opts, R, keys), ffn = ac_ffn_scratch(&(ac_ffn){.up = &m->dec[0].ff_in_w}, R);
    AC_TRY(ac_kv_cache_init(&d->cache, c->dec_layers, beams, cap, 0, d->opts.kv_heads, (size_t)d->opts.head_dim,
                            a));
    d->ck = ac_arena_alloc(a, L * (size_t)c->dec_heads * sizeof *d->ck);
    d->cv = ac_arena_alloc(a, L * (size_t)c->dec_heads * sizeof *d->cv);
    d->h = ac_arena_floats(a, R * D);
    d->a = ac_arena_floats(a, R * D);
    d->y = ac_arena_floats(a, R * D);
    size_t xw = R * D + R * D / (size_t)c->dec_heads + R * t;   /* cross_weights: q, one head's q, scores */
    size_t need = attn > ffn ? attn : ffn;
    d->scratch = ac_arena_floats(a, need > xw ? need : xw);
    if (!d->ck || !d->cv || !d->h || !d->a || !d->y || !d->scratch) return AC_ERR_NOMEM;
    ac_status st = cross_kv(d, enc, a);
    if (st == AC_OK) *out = d;
    return st;
}

ac_status hviske_decoder_forward(hviske_decoder *d, const int *tokens, const int *beam, const int *pos,
                                 int rows, int n_out, float *logprobs)
{
    const hviske_model *m = d->m;
    const hviske_config *c = &m->cfg;
    size_t D = d->D, R = (size_t)rows, t = (size_t)d->T;
    if (rows > d->max_rows || n_out > rows) return ac_error(AC_ERR_ARG, "decoder: too many rows");
    for (int r = 0; r < rows; r++) {
        if (tokens[r] < 0 || (size_t)tokens[r] >= d->V || pos[r] < 0 || pos[r] >= d->cap || beam[r] < 0 ||
            beam[r] >= d->beams)
            return ac_error(AC_ERR_ARG, "decoder: token %d at position %d is out of range", tokens[r], pos[r]);
        const float *pe = m->pos_enc + (size_t)pos[r] * D;
        float *h = d->h + r * D;
        ac_mat_rows(&m->tok_emb, (size_t)tokens[r], (size_t)tokens[r] + 1, h);
        for (size_t e = 0; e < D; e++) h[e] += pe[e];
    }
    ac_layernorm(d->h, d->h, R, D, m->emb_ln_w, m->emb_ln_b, LN_EPS);

    for (int l = 0; l < c->dec_layers; l++) {
        const hviske_dec_layer *L = &m->dec[l];
        /* causal self-attention over the beam's cached positions */
        ac_layernorm(d->h, d->a, R, D, L->ln1_w, L->ln1_b, LN_EPS);
        ac_attn_weights self = {.wq = &L->sq_w, .wk = &L->sk_w, .wv = &L->sv_w, .wo = &L->so_w,
                               .bq = L->sq_b, .bk = L->sk_b, .bv = L->sv_b, .bo = L->so_b};
        AC_TRY(ac_attn_cached(&d->opts, &self, &d->cache, l, d->a, rows, beam, pos, d->y, d->scratch));
        ac_axpy(d->h, d->y, 1.0f, R * D);

        /* cross-attention over the valid encoder frames */
        ac_layernorm(d->h, d->a, R, D, L->ln2_w, L->ln2_b, LN_EPS);
        ac_attn_weights cross = {.wq = &L->cq_w, .wo = &L->co_w, .bq = L->cq_b, .bo = L->co_b};
        size_t H = (size_t)c->dec_heads;
        ac_attn_kv kv = {.n = t, .kh = d->ck + (size_t)l * H, .vt = d->cv + (size_t)l * H};
        ac_attn_cross(&d->opts, &cross, &kv, d->a, R, &(ac_mask){.keys = (size_t)d->T_valid}, d->y, d->scratch);
        if (d->xattn && l >= d->xattn_from)
            cross_weights(d, l, R, d->xattn + (size_t)(l - d->xattn_from) * H * R * (size_t)d->T_valid);
        ac_axpy(d->h, d->y, 1.0f, R * D);

        /* ReLU feed-forward */
        ac_layernorm(d->h, d->a, R, D, L->ln3_w, L->ln3_b, LN_EPS);
        ac_ffn ffn = {.up = &L->ff_in_w, .down = &L->ff_out_w, .b_up = L->ff_in_b, .b_down = L->ff_out_b,
                      .act = AC_ACT_RELU};
        ac_ffn_forward(&ffn, d->a, R, d->y, d->scratch);
        ac_axpy(d->h, d->y, 1.0f, R * D);
    }
    /* the head, for the last n_out rows only */
    const float *last = d->h + (R - (size_t)n_out) * D;
    ac_layernorm(last, d->a, (size_t)n_out, D, m->final_ln_w, m->final_ln_b, LN_EPS);
    ac_matmul(d->a, &m->cls_w, m->cls_b, logprobs, (size_t)n_out);
    for (int r = 0; r < n_out; r++) ac_log_softmax(logprobs + (size_t)r * d->V, d->V);
    return AC_OK;
}

void hviske_decoder_reorder(hviske_decoder *d, const int *parent, int len)
{
    ac_kv_cache_reorder(&d->cache, parent, len);
}
