/* Subsampling (three stride-2 stages, x8 in time and frequency) and the
 * FastConformer layers with relative-position attention (spec §3).
 * Activations are time-major: [T][channels], or [T][freq][channels]. */
#include <math.h>
#include <string.h>

#include "base/error.h"
#include "models/hviske_asr/frontend.h"
#include "nn/attention.h"
#include "nn/ffn.h"
#include "tensor/kernels.h"
#include "tensor/mat.h"

#define LN_EPS 1e-5f

/* Zeroes rows [valid, rows) of x[rows][width]. */
static void mask_rows(float *x, int64_t rows, int64_t valid, size_t width)
{
    if (valid < rows) memset(x + (size_t)valid * width, 0, (size_t)(rows - valid) * width * sizeof *x);
}

/* Stage 1: Conv2d 1 -> C, 3x3, stride 2, padding 1 on a [T][F] image. */
static void conv_first(const hviske_model *m, const float *in, int64_t T, int64_t F, float *cols, float *out)
{
    int64_t To = hviske_sub_len(T), Fo = hviske_sub_len(F);
    for (int64_t t = 0; t < To; t++)
        for (int64_t f = 0; f < Fo; f++) {
            float *row = cols + (t * Fo + f) * 9;
            for (int dt = 0; dt < 3; dt++)
                for (int df = 0; df < 3; df++) {
                    int64_t ti = 2 * t - 1 + dt, fi = 2 * f - 1 + df;
                    row[dt * 3 + df] = ti >= 0 && ti < T && fi >= 0 && fi < F ? in[ti * F + fi] : 0.0f;
                }
        }
    ac_matmul(cols, &m->sub0_w, m->sub0_b, out, (size_t)(To * Fo));
}

/* Depthwise 3x3, stride 2, padding 1 on [T][F][C]; w is [9][C]. */
static void conv_depthwise(const float *in, int64_t T, int64_t F, int C, const float *w, const float *b,
                           float *out)
{
    int64_t To = hviske_sub_len(T), Fo = hviske_sub_len(F);
    for (int64_t t = 0; t < To; t++)
        for (int64_t f = 0; f < Fo; f++) {
            float *o = out + (t * Fo + f) * C;
            memcpy(o, b, (size_t)C * sizeof *o);
            for (int dt = 0; dt < 3; dt++)
                for (int df = 0; df < 3; df++) {
                    int64_t ti = 2 * t - 1 + dt, fi = 2 * f - 1 + df;
                    if (ti < 0 || ti >= T || fi < 0 || fi >= F) continue;
                    const float *x = in + (ti * F + fi) * C, *wk = w + (dt * 3 + df) * C;
                    for (int c = 0; c < C; c++) o[c] += x[c] * wk[c];
                }
        }
}

static ac_status subsample(const hviske_model *m, const float *feat, int64_t T0, int64_t len0, ac_arena *a,
                           float **out, int64_t *T3, int64_t *len3)
{
    int C = m->cfg.sub_channels;
    int64_t F0 = m->cfg.n_mels, T1 = hviske_sub_len(T0), F1 = hviske_sub_len(F0);
    int64_t T2 = hviske_sub_len(T1), F2 = hviske_sub_len(F1), T3_ = hviske_sub_len(T2), F3 = hviske_sub_len(F2);
    int64_t len1 = hviske_sub_len(len0), len2 = hviske_sub_len(len1), len3_ = hviske_sub_len(len2);
    float *cols = ac_arena_floats(a, (size_t)(T1 * F1 * 9));
    float *s1 = ac_arena_floats(a, (size_t)(T1 * F1 * C));
    float *d2 = ac_arena_floats(a, (size_t)(T2 * F2 * C)), *s2 = ac_arena_floats(a, (size_t)(T2 * F2 * C));
    float *d3 = ac_arena_floats(a, (size_t)(T3_ * F3 * C)), *s3 = ac_arena_floats(a, (size_t)(T3_ * F3 * C));
    float *x = ac_arena_floats(a, (size_t)T3_ * m->cfg.d_model);
    if (!cols || !s1 || !d2 || !s2 || !d3 || !s3 || !x) return AC_ERR_NOMEM;

    conv_first(m, feat, T0, F0, cols, s1);
    ac_relu(s1, (size_t)(T1 * F1 * C));
    mask_rows(s1, T1, len1, (size_t)(F1 * C));

    conv_depthwise(s1, T1, F1, C, m->sub_dw_w[0], m->sub_dw_b[0], d2);
    mask_rows(d2, T2, len2, (size_t)(F2 * C));
    ac_matmul(d2, &m->sub_pw_w[0], m->sub_pw_b[0], s2, (size_t)(T2 * F2));
    ac_relu(s2, (size_t)(T2 * F2 * C));
    mask_rows(s2, T2, len2, (size_t)(F2 * C));

    conv_depthwise(s2, T2, F2, C, m->sub_dw_w[1], m->sub_dw_b[1], d3);
    mask_rows(d3, T3_, len3_, (size_t)(F3 * C));
    ac_matmul(d3, &m->sub_pw_w[1], m->sub_pw_b[1], s3, (size_t)(T3_ * F3));
    ac_relu(s3, (size_t)(T3_ * F3 * C));
    mask_rows(s3, T3_, len3_, (size_t)(F3 * C));

    ac_matmul(s3, &m->sub_out_w, m->sub_out_b, x, (size_t)T3_);
    *out = x;
    *T3 = T3_;
    *len3 = len3_;
    return AC_OK;
}

/* Sinusoids for relative distances T-1 down to -(T-1): R[2T-1][d]. */
static void rel_positions(float *R, int64_t T, int d)
{
    for (int64_t k = 0; k < 2 * T - 1; k++) {
        double r = (double)(T - 1 - k);
        for (int n = 0; n < d / 2; n++) {
            double w = pow(10000.0, -2.0 * n / d);
            R[k * d + 2 * n] = (float)sin(r * w);
            R[k * d + 2 * n + 1] = (float)cos(r * w);
        }
    }
}

typedef struct {
    float *ln, *ff, *q, *k, *v, *qu, *qv, *pos, *bias, *bd, *attn, *ctx, *conv, *glu, *dw;
} layer_scratch;

static ac_attn_opts attn_opts(const hviske_config *c)
{
    return (ac_attn_opts){.heads = c->n_heads, .kv_heads = c->n_heads, .head_dim = c->d_model / c->n_heads};
}

static ac_status scratch_alloc(const hviske_config *c, int64_t T, ac_arena *a, layer_scratch *s)
{
    size_t E = (size_t)c->d_model, t = (size_t)T, H = (size_t)c->n_heads;
    ac_attn_opts o = attn_opts(c);
    float **bufs[] = {&s->ln, &s->q, &s->k, &s->v, &s->qu, &s->qv, &s->ctx, &s->glu, &s->dw};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (!(*bufs[i] = ac_arena_floats(a, t * E))) return AC_ERR_NOMEM;
    s->ff = ac_arena_floats(a, t * (size_t)c->ff_dim); /* a plain FFN: its hidden rows */
    s->pos = ac_arena_floats(a, (2 * t - 1) * E);
    s->bias = ac_arena_floats(a, H * t * t);
    s->bd = ac_arena_floats(a, t * (2 * t - 1));
    s->attn = ac_arena_floats(a, ac_attention_scratch(&o, t, t));
    s->conv = ac_arena_floats(a, t * 2 * E);
    return s->ff && s->pos && s->bias && s->bd && s->attn && s->conv ? AC_OK : AC_ERR_NOMEM;
}

/* x += 0.5 * FF(LN(x)), FF = Linear2(SiLU(Linear1)). */
static void feed_forward(const hviske_config *c, float *x, int64_t T, const float *lnw, const float *lnb,
                         const ac_mat *w1, const float *b1, const ac_mat *w2, const float *b2, layer_scratch *s)
{
    size_t E = (size_t)c->d_model, t = (size_t)T;
    ac_layernorm(x, s->ln, t, E, lnw, lnb, LN_EPS);
    ac_ffn ffn = {.up = w1, .down = w2, .b_up = b1, .b_down = b2, .act = AC_ACT_SILU};
    ac_ffn_forward(&ffn, s->ln, t, s->q, s->ff);
    ac_axpy(x, s->q, 0.5f, t * E);
}

/* x += MHSA_rel(LN(x)): scores s * ((q + u).k + (q + v).P(i - j)), the
 * position term given to the attention as a per-head additive mask;
 * padded queries and keys see nothing. */
static void self_attention(const hviske_config *c, const hviske_enc_layer *L, float *x, int64_t T, int64_t Tv,
                           const float *R, layer_scratch *s)
{
    size_t E = (size_t)c->d_model, H = (size_t)c->n_heads, dk = E / H, t = (size_t)T, P = 2 * t - 1;
    float scale = 1.0f / sqrtf((float)dk);
    ac_layernorm(x, s->ln, t, E, L->ln_att_w, L->ln_att_b, LN_EPS);
    const ac_mat *mats[3] = {&L->wq, &L->wk, &L->wv};
    const float *bias[3] = {L->bq, L->bk, L->bv};
    float *outs[3] = {s->q, s->k, s->v};
    ac_matmul_multi(s->ln, t, mats, bias, outs, 3);
    ac_matmul(R, &L->wpos, NULL, s->pos, P);
    for (size_t i = 0; i < t; i++)
        for (size_t e = 0; e < E; e++) {
            s->qu[i * E + e] = s->q[i * E + e] + L->pos_u[e];
            s->qv[i * E + e] = s->q[i * E + e] + L->pos_v[e];
        }
    for (size_t h = 0; h < H; h++) {
        ac_matmul_nt(s->qv + h * dk, E, s->pos + h * dk, E, NULL, s->bd, P, t, P, dk);
        for (size_t i = 0; i < t; i++) {
            float *row = s->bias + (h * t + i) * t;
            const float *bd = s->bd + i * P + (t - 1 - i); /* distance i - j at column T-1-i+j */
            for (size_t j = 0; j < t; j++) row[j] = (int64_t)i < Tv ? scale * bd[j] : -INFINITY;
        }
    }
    ac_attn_opts o = attn_opts(c);
    ac_mask mask = {.keys = (size_t)Tv, .add = s->bias, .ld = t, .head_stride = t * t};
    ac_attention(&o, s->qu, t, E, &(ac_attn_kv){.n = t, .k = s->k, .v = s->v, .ld = E}, &mask, s->ctx, E, s->attn);
    ac_matmul(s->ctx, &L->wo, L->bo, s->q, t);
    ac_axpy(x, s->q, 1.0f, t * E);
}

/* x += ConvModule(LN(x)): pointwise, GLU, mask, depthwise, BN, SiLU, pointwise. */
static void conv_module(const hviske_config *c, const hviske_enc_layer *L, float *x, int64_t T, int64_t Tv,
                        layer_scratch *s)
{
    size_t E = (size_t)c->d_model, t = (size_t)T;
    ac_layernorm(x, s->ln, t, E, L->ln_conv_w, L->ln_conv_b, LN_EPS);
    ac_matmul(s->ln, &L->pw1_w, L->pw1_b, s->conv, t);
    ac_glu(s->conv, s->glu, t, E);
    mask_rows(s->glu, T, Tv, E);
    ac_conv1d_shape dw = {.cin = (int)E, .cout = (int)E, .kernel = c->conv_kernel,
                          .stride = 1, .pad = (c->conv_kernel - 1) / 2, .dilation = 1};
    ac_conv1d_depthwise(&dw, s->glu, 1, t, L->dw_w, L->dw_b, s->dw);
    ac_channel_affine(s->dw, t, E, L->bn_scale, L->bn_shift, 0);
    ac_silu(s->dw, t * E);
    ac_matmul(s->dw, &L->pw2_w, L->pw2_b, s->q, t);
    ac_axpy(x, s->q, 1.0f, t * E);
}

static void conformer_layer(const hviske_config *c, const hviske_enc_layer *L, float *x, int64_t T, int64_t Tv,
                            const float *R, layer_scratch *s)
{
    feed_forward(c, x, T, L->ln_ff1_w, L->ln_ff1_b, &L->ff1_w1, L->ff1_b1, &L->ff1_w2, L->ff1_b2, s);
    self_attention(c, L, x, T, Tv, R, s);
    conv_module(c, L, x, T, Tv, s);
    feed_forward(c, x, T, L->ln_ff2_w, L->ln_ff2_b, &L->ff2_w1, L->ff2_b1, &L->ff2_w2, L->ff2_b2, s);
    ac_layernorm(x, x, (size_t)T, (size_t)c->d_model, L->ln_out_w, L->ln_out_b, LN_EPS);
}

ac_status hviske_encode(const hviske_model *m, const float *feat, int64_t n_frames, int64_t n_valid,
                        const ac_trace *trace, ac_arena *a, hviske_encoded *out)
{
    const hviske_config *c = &m->cfg;
    memset(out, 0, sizeof *out);
    float *x;
    int64_t T, Tv;
    AC_TRY(subsample(m, feat, n_frames, n_valid, a, &x, &T, &Tv));
    if (T > c->pos_max)
        return ac_error(AC_ERR_UNSUPPORTED, "audio chunk of %lld encoder frames exceeds pos_emb_max_len %d",
                        (long long)T, c->pos_max);
    size_t E = (size_t)c->d_model;
    ac_trace_put(trace, "subsampling", -1, x, (size_t)T * E * sizeof *x);
    float *R = ac_arena_floats(a, (size_t)(2 * T - 1) * E);
    layer_scratch s;
    if (!R) return AC_ERR_NOMEM;
    AC_TRY(scratch_alloc(c, T, a, &s));
    rel_positions(R, T, (int)E);
    for (int i = 0; i < c->n_layers; i++) {
        conformer_layer(c, &m->enc[i], x, T, Tv, R, &s);
        ac_trace_put(trace, "layer", i, x, (size_t)T * E * sizeof *x);
    }
    out->proj = ac_arena_floats(a, (size_t)T * c->dec_dim);
    if (!out->proj) return AC_ERR_NOMEM;
    ac_matmul(x, &m->proj_w, m->proj_b, out->proj, (size_t)T);
    ac_trace_put(trace, "encoder_proj", -1, out->proj, (size_t)T * c->dec_dim * sizeof *out->proj);
    out->x = x;
    out->T = T;
    out->T_valid = Tv;
    return AC_OK;
}
