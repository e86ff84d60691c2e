/* The Qwen2 graph over a request's KV cache (spec vevo2.md §4.7): per
 * layer h = x + o(attn(rope(q n), rope(k n), v n)) with n = rmsnorm(x),
 * then x' = h + down(silu(gate m) * up m) with m = rmsnorm(h); the final
 * RMSNorm and the head only for the positions whose logits are asked. */
#include <string.h>

#include "base/error.h"
#include "nn/attention.h"
#include "nn/ffn.h"
#include "models/qwen2/qwen2.h"
#include "tensor/kernels.h"

struct qwen2_session {
    const qwen2_model *m;
    int cap, max_rows, beams;
    int filled;              /* positions 0 .. filled-1 are in the cache */
    ac_attn_opts opts;
    ac_kv_cache cache;
    int *beam, *pos;         /* [max_rows]: every row is beam 0 */
    float *x, *n, *y, *scratch;
    ac_trace trace;
};

static ac_ffn mlp(const qwen2_layer *L)
{
    return (ac_ffn){.up = &L->up, .gate = &L->gate, .down = &L->down, .act = AC_ACT_SILU};
}

static ac_attn_weights attn_weights(const qwen2_layer *L)
{
    return (ac_attn_weights){.wq = &L->wq, .wk = &L->wk, .wv = &L->wv, .wo = &L->wo, .bq = L->bq, .bk = L->bk,
                             .bv = L->bv, .q_norm = L->q_norm, .k_norm = L->k_norm};
}

ac_status qwen2_session_new(const qwen2_model *m, int cap, int max_rows, ac_arena *a, qwen2_session **out)
{
    return qwen2_session_new_beams(m, cap, max_rows, 1, 0, a, out);
}

ac_status qwen2_session_new_beams(const qwen2_model *m, int cap, int max_rows, int beams, int shared, ac_arena *a,
                                  qwen2_session **out)
{
    const qwen2_config *c = &m->cfg;
    *out = NULL;
    if (cap < 1 || max_rows < 1 || max_rows > cap || beams < 1 || beams > AC_MAX_BEAM_SIZE)
        return ac_error(AC_ERR_ARG, "qwen2: a cache of %d positions and %d beams for calls of %d rows", cap, beams,
                        max_rows);
    if (cap > c->max_positions)
        return ac_error(AC_ERR_ARG, "qwen2: %d positions exceed max_position_embeddings %d", cap, c->max_positions);
    qwen2_session *s = ac_arena_alloc(a, sizeof *s);
    if (!s) return AC_ERR_NOMEM;
    *s = (qwen2_session){.m = m, .cap = cap, .max_rows = max_rows, .beams = beams,
                         .opts = {.heads = c->heads, .kv_heads = c->kv_heads, .head_dim = c->head_dim,
                                  .rope_theta = c->rope_theta, .qk_norm_eps = c->rms_eps, .tiles = 1,
                                  .bf16 = m->layer[0].wq.dtype == AC_DTYPE_Q8_0 ||
                                          m->layer[0].wq.dtype == AC_DTYPE_BF16}};
    size_t R = (size_t)max_rows, D = (size_t)c->hidden;
    size_t attn = ac_attn_layer_scratch(&s->opts, R, (size_t)cap);
    ac_ffn f = mlp(&m->layer[0]);
    size_t ffn = ac_ffn_scratch(&f, R);
    AC_TRY(ac_kv_cache_init(&s->cache, c->layers, beams, cap, shared, c->kv_heads, (size_t)c->head_dim, a));
    s->beam = ac_arena_alloc(a, R * sizeof *s->beam);
    s->pos = ac_arena_alloc(a, R * sizeof *s->pos);
    s->x = ac_arena_floats(a, R * D);
    s->n = ac_arena_floats(a, R * D);
    s->y = ac_arena_floats(a, R * D);
    s->scratch = ac_arena_floats(a, attn > ffn ? attn : ffn);
    if (!s->beam || !s->pos || !s->x || !s->n || !s->y || !s->scratch) return AC_ERR_NOMEM;
    *out = s;
    return AC_OK;
}

static ac_status check_rows(const qwen2_session *s, int n, int pos0, int n_out)
{
    if (n < 1 || n > s->max_rows)
        return ac_error(AC_ERR_ARG, "qwen2: %d tokens in one call (the session takes 1 to %d)", n, s->max_rows);
    if (n_out < 1 || n_out > n) return ac_error(AC_ERR_ARG, "qwen2: logits of %d of %d positions", n_out, n);
    if (pos0 < 0 || pos0 > s->filled)
        return ac_error(AC_ERR_ARG, "qwen2: position %d follows %d cached positions", pos0, s->filled);
    if (pos0 + n > s->cap)
        return ac_error(AC_ERR_ARG, "qwen2: positions %d..%d exceed the cache of %d positions", pos0, pos0 + n - 1,
                        s->cap);
    return AC_OK;
}

static ac_status check_tokens(const qwen2_session *s, const int *tokens, int n, int pos0)
{
    for (int r = 0; r < n; r++)
        if (tokens[r] < 0 || tokens[r] >= s->m->cfg.vocab)
            return ac_error(AC_ERR_ARG, "qwen2: token %d (at %d) is outside the vocabulary of %d ids", tokens[r],
                            pos0 + r, s->m->cfg.vocab);
    return AC_OK;
}

void qwen2_session_trace(qwen2_session *s, const ac_trace *t) { s->trace = t ? *t : (ac_trace){0}; }

/* Rows s->x[n] at s->pos of s->beam through every layer; the logits of
 * the last N_OUT rows. */
static ac_status run_rows(qwen2_session *s, int n, int n_out, float *logits)
{
    const qwen2_model *m = s->m;
    const qwen2_config *c = &m->cfg;
    size_t D = (size_t)c->hidden, R = (size_t)n;
    float eps = c->rms_eps;
    for (int l = 0; l < c->layers; l++) {
        const qwen2_layer *L = &m->layer[l];
        ac_rmsnorm(s->x, s->n, R, D, L->ln_in, 0, eps);
        ac_attn_weights w = attn_weights(L);
        AC_TRY(ac_attn_cached(&s->opts, &w, &s->cache, l, s->n, n, s->beam, s->pos, s->y, s->scratch));
        ac_axpy(s->x, s->y, 1.0f, R * D);
        ac_rmsnorm(s->x, s->n, R, D, L->ln_post, 0, eps);
        ac_ffn f = mlp(L);
        ac_ffn_forward(&f, s->n, R, s->y, s->scratch);
        ac_axpy(s->x, s->y, 1.0f, R * D);
        ac_trace_put(&s->trace, "layer", l, s->x, R * D * sizeof *s->x);
    }
    for (int r = 0; r < n; r++)
        if (s->pos[r] + 1 > s->filled) s->filled = s->pos[r] + 1;
    const float *last = s->x + (R - (size_t)n_out) * D;
    ac_rmsnorm(last, s->n, (size_t)n_out, D, m->norm, 0, eps);
    ac_matmul(s->n, &m->head, NULL, logits, (size_t)n_out);
    return AC_OK;
}

static void embed_row(qwen2_session *s, int r, int token)
{
    ac_mat_rows(&s->m->embed, (size_t)token, (size_t)token + 1, s->x + (size_t)r * (size_t)s->m->cfg.hidden);
}

ac_status qwen2_forward(qwen2_session *s, const int *tokens, int n, int pos0, int n_out, float *logits)
{
    AC_TRY(check_rows(s, n, pos0, n_out));
    AC_TRY(check_tokens(s, tokens, n, pos0));
    for (int r = 0; r < n; r++) {
        s->beam[r] = 0, s->pos[r] = pos0 + r;
        embed_row(s, r, tokens[r]);
    }
    return run_rows(s, n, n_out, logits);
}

ac_status qwen2_forward_embeds(qwen2_session *s, const float *emb, int n_emb, const int *tokens, int n_tok, int pos0,
                               int n_out, float *logits)
{
    int n = n_emb + n_tok;
    if (n_emb < 0 || n_tok < 0) return ac_error(AC_ERR_ARG, "qwen2: %d input rows and %d tokens", n_emb, n_tok);
    AC_TRY(check_rows(s, n, pos0, n_out));
    AC_TRY(check_tokens(s, tokens, n_tok, pos0 + n_emb));
    size_t D = (size_t)s->m->cfg.hidden;
    memcpy(s->x, emb, (size_t)n_emb * D * sizeof *s->x);
    for (int r = 0; r < n; r++) {
        s->beam[r] = 0, s->pos[r] = pos0 + r;
        if (r >= n_emb) embed_row(s, r, tokens[r - n_emb]);
    }
    return run_rows(s, n, n_out, logits);
}

ac_status qwen2_step_beams(qwen2_session *s, const int *tokens, int n, int pos, float *logits)
{
    if (n > s->beams) return ac_error(AC_ERR_ARG, "qwen2: %d beams in a session of %d", n, s->beams);
    AC_TRY(check_tokens(s, tokens, n, pos));
    if (n < 1 || n > s->max_rows || pos < 0 || pos > s->filled || pos >= s->cap)
        return ac_error(AC_ERR_ARG, "qwen2: a step of %d beams at position %d (cache of %d, %d filled)", n, pos,
                        s->cap, s->filled);
    for (int r = 0; r < n; r++) {
        s->beam[r] = r, s->pos[r] = pos;
        embed_row(s, r, tokens[r]);
    }
    return run_rows(s, n, n, logits);
}

void qwen2_session_reorder(qwen2_session *s, const int *parent, int n, int len)
{
    int full[AC_MAX_BEAM_SIZE];
    for (int i = 0; i < s->beams; i++) full[i] = i < n ? parent[i] : i;
    ac_kv_cache_reorder(&s->cache, full, len);
}
