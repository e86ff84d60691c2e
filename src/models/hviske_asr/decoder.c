#include "models/hviske_asr/decoder.h"

#include <math.h>
#include <string.h>

#include "base/error.h"
#include "base/f16.h"
#include "base/threadpool.h"
#include "tensor/kernels.h"
#include "tensor/mat.h"

#define LN_EPS 1e-5f
#define MASKED -1e9f

struct hviske_decoder {
    const hviske_model *m;
    int beams, cap, max_rows;
    int64_t T, T_valid;
    size_t D, F, V;
    float *kc, *vc;          /* self-attention cache [layer][beam][cap][D] */
    ac_mat *ck, *cv;         /* cross-attention per [layer][head]: K [T][dk], V [dk][T] */
    float *h, *a, *q, *k, *v, *ctx, *ff, *scores, *tmp;
};

static float *cache_row(const hviske_decoder *d, float *c, int layer, int beam, int pos)
{
    return c + (((size_t)layer * d->beams + beam) * d->cap + pos) * d->D;
}

/* Cross-attention keys and values depend only on the audio: computed once
 * per chunk and stored per head, K as [T][dk] and V transposed, [dk][T],
 * so that both products of a step are matrix-vector products over
 * contiguous rows. In F16 when the weights are 16-bit or narrower: every
 * step reads them all, and F16 halves those bytes (F32 weights keep f32
 * for exact parity). */
static ac_status cross_kv(hviske_decoder *d, const float *enc, ac_arena *a)
{
    const hviske_model *m = d->m;
    size_t L = (size_t)m->cfg.dec_layers, H = (size_t)m->cfg.dec_heads, D = d->D, dk = D / H, t = (size_t)d->T;
    ac_dtype kv = m->dec[0].ck_w.dtype == AC_DTYPE_F32 ? AC_DTYPE_F32 : AC_DTYPE_F16;
    size_t esz = kv == AC_DTYPE_F32 ? 4 : 2;
    float *tmp = ac_arena_floats(a, t * D);
    unsigned char *store = ac_arena_alloc(a, 2 * L * t * D * esz);
    if (!tmp || !store) return AC_ERR_NOMEM;
    for (size_t l = 0; l < L; l++)
        for (int is_v = 0; is_v < 2; is_v++) {
            const hviske_dec_layer *Ly = &m->dec[l];
            ac_matmul(enc, is_v ? &Ly->cv_w : &Ly->ck_w, is_v ? Ly->cv_b : Ly->ck_b, tmp, t);
            for (size_t h = 0; h < H; h++) {
                unsigned char *dst = store + ((2 * l + (size_t)is_v) * H + h) * t * dk * esz;
                if (is_v) d->cv[l * H + h] = (ac_mat){dst, kv, dk, t};
                else d->ck[l * H + h] = (ac_mat){dst, kv, t, dk};
                for (size_t r = 0; r < t; r++)
                    for (size_t e = 0; e < dk; e++) {
                        size_t at = is_v ? e * t + r : r * dk + e;
                        float v = tmp[r * D + h * dk + e];
                        if (kv == AC_DTYPE_F32) ((float *)dst)[at] = v;
                        else ((uint16_t *)dst)[at] = ac_f32_to_f16(v);
                    }
            }
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
                          .D = (size_t)c->dec_dim, .F = (size_t)c->dec_inner, .V = (size_t)c->vocab};
    size_t L = (size_t)c->dec_layers, D = d->D, R = (size_t)max_rows, t = (size_t)T;
    size_t keys = (size_t)cap > t ? (size_t)cap : t;
    d->kc = ac_arena_floats(a, L * beams * cap * D);
    d->vc = ac_arena_floats(a, L * beams * cap * D);
    d->ck = ac_arena_alloc(a, L * (size_t)c->dec_heads * sizeof *d->ck);
    d->cv = ac_arena_alloc(a, L * (size_t)c->dec_heads * sizeof *d->cv);
    float **bufs[] = {&d->h, &d->a, &d->q, &d->k, &d->v, &d->ctx};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (!(*bufs[i] = ac_arena_floats(a, R * D))) return AC_ERR_NOMEM;
    d->ff = ac_arena_floats(a, R * d->F);
    d->scores = ac_arena_floats(a, keys * (size_t)c->dec_heads);
    d->tmp = ac_arena_floats(a, (size_t)beams * cap * D);
    if (!d->kc || !d->vc || !d->ck || !d->cv || !d->ff || !d->scores || !d->tmp) return AC_ERR_NOMEM;
    ac_status st = cross_kv(d, enc, a);
    if (st == AC_OK) *out = d;
    return st;
}

/* Attention of one query row over N keys (rows of K and V with stride D;
 * those past N_VALID masked). Each head is whole on one thread: its scores,
 * softmax and weighted sum of values, so one dispatch covers the layer's
 * attention and K and V are streamed once. Short self-attention runs inline. */
typedef struct {
    hviske_decoder *d;
    const float *q, *K, *V;     /* self-attention: f32 rows with stride D */
    const ac_mat *Km, *Vm;      /* cross-attention: per head, K and V transposed */
    size_t n, n_valid;
    float *ctx;
} attn_job;

static void heads_range(void *ctx, size_t h0, size_t h1)
{
    const attn_job *j = ctx;
    size_t D = j->d->D, H = (size_t)j->d->m->cfg.dec_heads, dk = D / H;
    float scale = 1.0f / sqrtf((float)dk);
    for (size_t h = h0; h < h1; h++) {
        float *s = j->d->scores + h * j->n;
        if (j->Km) ac_matmul(j->q + h * dk, &j->Km[h], NULL, s, 1);
        else ac_matmul_nt(j->q + h * dk, dk, j->K + h * dk, D, NULL, s, j->n, 1, j->n, dk);
        for (size_t k = 0; k < j->n; k++) s[k] = k < j->n_valid ? s[k] * scale : MASKED;
        ac_softmax_rows(s, 1, j->n);
        if (j->Vm) ac_matmul(s, &j->Vm[h], NULL, j->ctx + h * dk, 1);
        else ac_gemv_t(j->V + h * dk, D, s, j->ctx + h * dk, j->n, dk);
    }
}

static void attend(const attn_job *j)
{
    enum { INLINE_FLOATS = 16384 };   /* K and V below 128 KB: a dispatch costs more than it saves */
    size_t H = (size_t)j->d->m->cfg.dec_heads;
    if (j->n * j->d->D < INLINE_FLOATS) heads_range((void *)j, 0, H);
    else ac_parallel_for(H, 1, heads_range, (void *)j);
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
        const ac_mat *qkv[3] = {&L->sq_w, &L->sk_w, &L->sv_w};
        const float *qkv_b[3] = {L->sq_b, L->sk_b, L->sv_b};
        float *qkv_y[3] = {d->q, d->k, d->v};
        ac_matmul_multi(d->a, R, qkv, qkv_b, qkv_y, 3);
        for (int r = 0; r < rows; r++) {
            memcpy(cache_row(d, d->kc, l, beam[r], pos[r]), d->k + r * D, D * sizeof(float));
            memcpy(cache_row(d, d->vc, l, beam[r], pos[r]), d->v + r * D, D * sizeof(float));
        }
        for (int r = 0; r < rows; r++) {
            size_t n = (size_t)pos[r] + 1;
            attend(&(attn_job){.d = d, .q = d->q + r * D, .K = cache_row(d, d->kc, l, beam[r], 0),
                               .V = cache_row(d, d->vc, l, beam[r], 0), .n = n, .n_valid = n, .ctx = d->ctx + r * D});
        }
        ac_matmul(d->ctx, &L->so_w, L->so_b, d->a, R);
        ac_axpy(d->h, d->a, 1.0f, R * D);

        /* cross-attention over the valid encoder frames */
        ac_layernorm(d->h, d->a, R, D, L->ln2_w, L->ln2_b, LN_EPS);
        ac_matmul(d->a, &L->cq_w, L->cq_b, d->q, R);
        size_t H = (size_t)c->dec_heads;
        for (int r = 0; r < rows; r++)
            attend(&(attn_job){.d = d, .q = d->q + r * D, .Km = d->ck + l * H, .Vm = d->cv + l * H, .n = t,
                               .n_valid = (size_t)d->T_valid, .ctx = d->ctx + r * D});
        ac_matmul(d->ctx, &L->co_w, L->co_b, d->a, R);
        ac_axpy(d->h, d->a, 1.0f, R * D);

        /* ReLU feed-forward */
        ac_layernorm(d->h, d->a, R, D, L->ln3_w, L->ln3_b, LN_EPS);
        ac_matmul(d->a, &L->ff_in_w, L->ff_in_b, d->ff, R);
        ac_relu(d->ff, R * d->F);
        ac_matmul(d->ff, &L->ff_out_w, L->ff_out_b, d->a, R);
        ac_axpy(d->h, d->a, 1.0f, R * D);
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
    size_t row = (size_t)len * d->D;
    for (int l = 0; l < d->m->cfg.dec_layers; l++)
        for (int which = 0; which < 2; which++) {
            float *c = which ? d->vc : d->kc;
            for (int b = 0; b < d->beams; b++) memcpy(d->tmp + b * row, cache_row(d, c, l, parent[b], 0), row * 4);
            for (int b = 0; b < d->beams; b++) memcpy(cache_row(d, c, l, b, 0), d->tmp + b * row, row * 4);
        }
}
