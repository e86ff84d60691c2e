/* The encoder graph (spec vevo2.md §4.1 step 4): x = GELU(conv2(GELU(
 * conv1(mel)))) + pos, then per block x += attn(LN(x)), x += mlp(LN(x)),
 * and ln_post. Every product runs on all n_ctx rows at once. */
#include <string.h>

#include "base/error.h"
#include "models/whisper/whisper.h"
#include "nn/attention.h"
#include "nn/ffn.h"
#include "tensor/kernels.h"

#define LN_EPS 1e-5f

static size_t max2(size_t a, size_t b) { return a > b ? a : b; }

static ac_ffn mlp(const whisper_block *B)
{
    return (ac_ffn){.up = &B->fc1, .down = &B->fc2, .b_up = B->b_fc1, .b_down = B->b_fc2, .act = AC_ACT_GELU};
}

ac_status whisper_encode(const whisper_encoder *m, const float *mel, const ac_trace *trace, ac_arena *a,
                         float *out)
{
    return whisper_encode_frames(m, mel, whisper_mel_frames(&m->cfg), trace, a, out);
}

ac_status whisper_encode_frames(const whisper_encoder *m, const float *mel, size_t frames, const ac_trace *trace,
                                ac_arena *a, float *out)
{
    const whisper_config *c = &m->cfg;
    size_t F = frames, T = (frames + 1) / 2, D = (size_t)c->d;
    if (F < 2 || F % 2 || (m->pos && T > (size_t)c->n_ctx))
        return ac_error(AC_ERR_ARG, "whisper: %zu mel frames (an even number, at most %d with the positional table)",
                        F, 2 * c->n_ctx);
    ac_conv1d_shape s1 = {.cin = c->n_mels, .cout = c->d, .kernel = 3, .stride = 1, .pad = 1, .dilation = 1};
    ac_conv1d_shape s2 = {.cin = c->d, .cout = c->d, .kernel = 3, .stride = 2, .pad = 1, .dilation = 1};
    ac_attn_opts o = {.heads = c->heads, .kv_heads = c->heads, .head_dim = c->d / c->heads,
                      .rope_theta = c->rope_dim ? c->rope_theta : 0, .rope_dim = c->rope_dim,
                      .tiles = m->attn_bf16 && m->block[0].wq.dtype == AC_DTYPE_BF16, .bf16 = 1};
    ac_ffn f = mlp(&m->block[0]);
    size_t scratch = max2(max2(ac_conv1d_scratch(&s1, 1, F), ac_conv1d_scratch(&s2, 1, F)),
                          max2(ac_attn_layer_scratch(&o, T, T), ac_ffn_scratch(&f, T)));
    /* conv1's output [F][D] (F = 2T) is dead once conv2 has read it: it
     * lies over the layers' n and y */
    float *x = ac_arena_floats(a, T * D), *n = ac_arena_floats(a, F * D), *sc = ac_arena_floats(a, scratch);
    if (!x || !n || !sc) return AC_ERR_NOMEM;
    float *x1 = n, *y = n + T * D;

    ac_conv1d_mat(&s1, mel, 1, F, &m->conv1_w, m->conv1_b, x1, sc);
    ac_gelu(x1, F * D);
    ac_conv1d_mat(&s2, x1, 1, F, &m->conv2_w, m->conv2_b, x, sc);
    ac_gelu(x, T * D);
    if (m->pos) ac_axpy(x, m->pos, 1.0f, T * D);
    ac_trace_put(trace, "conv", -1, x, T * D * sizeof *x);
    for (int l = 0; l < c->layers; l++) {
        const whisper_block *B = &m->block[l];
        ac_attn_weights w = {.wq = &B->wq, .wk = &B->wk, .wv = &B->wv, .wo = &B->wo, .bq = B->bq, .bv = B->bv,
                             .bo = B->bo};
        ac_layernorm(x, n, T, D, B->attn_ln_w, B->attn_ln_b, LN_EPS);
        ac_attn_self(&o, &w, n, T, NULL, NULL, y, sc);
        ac_axpy(x, y, 1.0f, T * D);
        ac_layernorm(x, n, T, D, B->mlp_ln_w, B->mlp_ln_b, LN_EPS);
        f = mlp(B);
        ac_ffn_forward(&f, n, T, y, sc);
        ac_axpy(x, y, 1.0f, T * D);
        ac_trace_put(trace, "layer", l, x, T * D * sizeof *x);
    }
    ac_layernorm(x, out, T, D, m->ln_post_w, m->ln_post_b, LN_EPS);
    return AC_OK;
}

ac_status whisper_encode_audio(const whisper_encoder *m, const float *x, size_t n, const ac_trace *trace,
                               ac_arena *a, float *out)
{
    float *mel = ac_arena_floats(a, whisper_mel_frames(&m->cfg) * (size_t)m->cfg.n_mels);
    if (!mel) return AC_ERR_NOMEM;
    AC_TRY(whisper_logmel(m, x, n, mel));
    return whisper_encode(m, mel, trace, a, out);
}

ac_status whisper_features(const whisper_config *c, const float *enc, int T, const whisper_stats *stats, float *feat)
{
    size_t D = (size_t)c->d;
    if (T < 0) return ac_error(AC_ERR_ARG, "whisper: %d feature frames", T);
    if (stats && stats->dim != c->d)
        return ac_error(AC_ERR_ARG, "whisper: stats of %d channels for features of %d", stats->dim, c->d);
    for (int t = 0; t < T; t++) {
        const float *src = enc + (size_t)(t < c->n_ctx ? t : c->n_ctx - 1) * D;
        float *dst = feat + (size_t)t * D;
        if (!stats) {
            memcpy(dst, src, D * sizeof *dst);
            continue;
        }
        for (size_t i = 0; i < D; i++) dst[i] = (src[i] - stats->mean[i]) / stats->std[i];
    }
    return AC_OK;
}
