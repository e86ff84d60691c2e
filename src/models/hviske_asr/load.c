/* Loading a cohere_asr package: config, tokenizer and every tensor, each
 * checked against the shape the config implies. Weights are f32 views of
 * the mapping where possible; a few are rearranged once for our layouts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/file.h"
#include "base/mem.h"
#include "models/hviske_asr/model.h"
#include "tensor/kernels.h"

#define BN_EPS 1e-5f
#define MAX_CONFIG (256u << 20)

typedef struct {
    hviske_model *m;
    char prefix[160];
} loader;

/* "<prefix><name>" as f32, of shape SHAPE. */
static ac_status get(loader *l, const char *name, int ndim, const int64_t *shape, const float **out)
{
    char full[256];
    snprintf(full, sizeof full, "%s%s", l->prefix, name);
    return ac_weights_f32(l->m->weights, full, ndim, shape, out);
}

static ac_status get_copy(loader *l, const char *name, int ndim, const int64_t *shape, float **out)
{
    char full[256];
    snprintf(full, sizeof full, "%s%s", l->prefix, name);
    return ac_weights_f32_copy(l->m->weights, full, ndim, shape, out);
}

#define GET(name, out, ...) AC_TRY(get(l, name, AC_SHAPE(__VA_ARGS__), &(out)))

static ac_status mat(loader *l, const char *name, int ndim, const int64_t *shape, ac_mat *out)
{
    char full[256];
    snprintf(full, sizeof full, "%s%s", l->prefix, name);
    return ac_weights_mat(l->m->weights, full, ndim, shape, out);
}

#define MAT(name, out, ...) AC_TRY(mat(l, name, AC_SHAPE(__VA_ARGS__), &(out)))

static ac_status linear(loader *l, const char *name, int out, int in, ac_mat *w, const float **b)
{
    char n[128];
    snprintf(n, sizeof n, "%s.weight", name);
    AC_TRY(mat(l, n, AC_SHAPE(out, in), w));
    snprintf(n, sizeof n, "%s.bias", name);
    return get(l, n, AC_SHAPE(out), b);
}

static ac_status norm(loader *l, const char *name, int dim, const float **w, const float **b)
{
    char n[128];
    snprintf(n, sizeof n, "%s.weight", name);
    AC_TRY(get(l, n, AC_SHAPE(dim), w));
    snprintf(n, sizeof n, "%s.bias", name);
    return get(l, n, AC_SHAPE(dim), b);
}

/* A depthwise 3x3 conv [C][1][3][3] as [9][C]. */
static ac_status dw3x3(loader *l, const char *name, int C, float **w)
{
    float *t;
    AC_TRY(get_copy(l, name, AC_SHAPE(C, 1, 3, 3), &t));
    *w = ac_weights_scratch(l->m->weights, (size_t)9 * C);
    if (!*w) return AC_ERR_NOMEM;
    for (int c = 0; c < C; c++)
        for (int k = 0; k < 9; k++) (*w)[(size_t)k * C + c] = t[(size_t)c * 9 + k];
    return AC_OK;
}

static ac_status load_subsampling(loader *l)
{
    hviske_model *m = l->m;
    int C = m->cfg.sub_channels, E = m->cfg.d_model;
    int F3 = (int)hviske_sub_len(hviske_sub_len(hviske_sub_len(m->cfg.n_mels)));
    snprintf(l->prefix, sizeof l->prefix, "encoder.pre_encode.");
    const float *w0;
    GET("conv.0.weight", w0, C, 1, 3, 3);
    m->sub0_w = ac_mat_f32(w0, (size_t)C, 9); /* [C][1][3][3] is already [C][9] */
    GET("conv.0.bias", m->sub0_b, C);
    AC_TRY(dw3x3(l, "conv.2.weight", C, &m->sub_dw_w[0]));
    GET("conv.2.bias", m->sub_dw_b[0], C);
    MAT("conv.3.weight", m->sub_pw_w[0], C, C, 1, 1);
    GET("conv.3.bias", m->sub_pw_b[0], C);
    AC_TRY(dw3x3(l, "conv.5.weight", C, &m->sub_dw_w[1]));
    GET("conv.5.bias", m->sub_dw_b[1], C);
    MAT("conv.6.weight", m->sub_pw_w[1], C, C, 1, 1);
    GET("conv.6.bias", m->sub_pw_b[1], C);
    /* upstream flattens (channel, freq) as c*F3 + f; our activations are
     * [freq][channel], so the columns are reordered to f*C + c once */
    const float *ow;
    GET("out.weight", ow, E, (int64_t)C * F3);
    GET("out.bias", m->sub_out_b, E);
    float *w = ac_weights_scratch(m->weights, (size_t)E * C * F3);
    if (!w) return AC_ERR_NOMEM;
    for (int e = 0; e < E; e++)
        for (int c = 0; c < C; c++)
            for (int f = 0; f < F3; f++) w[((size_t)e * F3 + f) * C + c] = ow[((size_t)e * C + c) * F3 + f];
    m->sub_out_w = ac_mat_f32(w, (size_t)E, (size_t)C * F3);
    return AC_OK;
}

static ac_status load_enc_layer(loader *l, int i)
{
    hviske_model *m = l->m;
    hviske_enc_layer *L = &m->enc[i];
    int E = m->cfg.d_model, F = m->cfg.ff_dim, H = m->cfg.n_heads, K = m->cfg.conv_kernel;
    snprintf(l->prefix, sizeof l->prefix, "encoder.layers.%d.", i);
    AC_TRY(norm(l, "norm_feed_forward1", E, &L->ln_ff1_w, &L->ln_ff1_b));
    AC_TRY(linear(l, "feed_forward1.linear1", F, E, &L->ff1_w1, &L->ff1_b1));
    AC_TRY(linear(l, "feed_forward1.linear2", E, F, &L->ff1_w2, &L->ff1_b2));
    AC_TRY(norm(l, "norm_self_att", E, &L->ln_att_w, &L->ln_att_b));
    AC_TRY(linear(l, "self_attn.linear_q", E, E, &L->wq, &L->bq));
    AC_TRY(linear(l, "self_attn.linear_k", E, E, &L->wk, &L->bk));
    AC_TRY(linear(l, "self_attn.linear_v", E, E, &L->wv, &L->bv));
    AC_TRY(linear(l, "self_attn.linear_out", E, E, &L->wo, &L->bo));
    MAT("self_attn.linear_pos.weight", L->wpos, E, E);
    GET("self_attn.pos_bias_u", L->pos_u, H, E / H);
    GET("self_attn.pos_bias_v", L->pos_v, H, E / H);
    AC_TRY(norm(l, "norm_conv", E, &L->ln_conv_w, &L->ln_conv_b));
    MAT("conv.pointwise_conv1.weight", L->pw1_w, 2 * E, E, 1);
    GET("conv.pointwise_conv1.bias", L->pw1_b, 2 * E);
    const float *dw;
    GET("conv.depthwise_conv.weight", dw, E, 1, K);
    GET("conv.depthwise_conv.bias", L->dw_b, E);
    L->dw_w = ac_weights_scratch(m->weights, (size_t)E * K);
    if (!L->dw_w) return AC_ERR_NOMEM;
    ac_depthwise_weight_from_torch(dw, L->dw_w, E, K);
    const float *g, *b, *mean, *var;
    GET("conv.batch_norm.weight", g, E);
    GET("conv.batch_norm.bias", b, E);
    GET("conv.batch_norm.running_mean", mean, E);
    GET("conv.batch_norm.running_var", var, E);
    L->bn_scale = ac_weights_scratch(m->weights, (size_t)E);
    L->bn_shift = ac_weights_scratch(m->weights, (size_t)E);
    if (!L->bn_scale || !L->bn_shift) return AC_ERR_NOMEM;
    for (int c = 0; c < E; c++)
        if (!(var[c] + BN_EPS > 0))
            return ac_error(AC_ERR_MODEL, "%s: %sconv.batch_norm.running_var has a negative value",
                            m->weights->file, l->prefix);
    ac_batchnorm_fold(g, b, mean, var, BN_EPS, (size_t)E, L->bn_scale, L->bn_shift);
    MAT("conv.pointwise_conv2.weight", L->pw2_w, E, E, 1);
    GET("conv.pointwise_conv2.bias", L->pw2_b, E);
    AC_TRY(norm(l, "norm_feed_forward2", E, &L->ln_ff2_w, &L->ln_ff2_b));
    AC_TRY(linear(l, "feed_forward2.linear1", F, E, &L->ff2_w1, &L->ff2_b1));
    AC_TRY(linear(l, "feed_forward2.linear2", E, F, &L->ff2_w2, &L->ff2_b2));
    return norm(l, "norm_out", E, &L->ln_out_w, &L->ln_out_b);
}

static ac_status load_dec_layer(loader *l, int j)
{
    hviske_model *m = l->m;
    hviske_dec_layer *L = &m->dec[j];
    int D = m->cfg.dec_dim, F = m->cfg.dec_inner;
    snprintf(l->prefix, sizeof l->prefix, "transf_decoder._decoder.layers.%d.", j);
    AC_TRY(norm(l, "layer_norm_1", D, &L->ln1_w, &L->ln1_b));
    AC_TRY(linear(l, "first_sub_layer.query_net", D, D, &L->sq_w, &L->sq_b));
    AC_TRY(linear(l, "first_sub_layer.key_net", D, D, &L->sk_w, &L->sk_b));
    AC_TRY(linear(l, "first_sub_layer.value_net", D, D, &L->sv_w, &L->sv_b));
    AC_TRY(linear(l, "first_sub_layer.out_projection", D, D, &L->so_w, &L->so_b));
    AC_TRY(norm(l, "layer_norm_2", D, &L->ln2_w, &L->ln2_b));
    AC_TRY(linear(l, "second_sub_layer.query_net", D, D, &L->cq_w, &L->cq_b));
    AC_TRY(linear(l, "second_sub_layer.key_net", D, D, &L->ck_w, &L->ck_b));
    AC_TRY(linear(l, "second_sub_layer.value_net", D, D, &L->cv_w, &L->cv_b));
    AC_TRY(linear(l, "second_sub_layer.out_projection", D, D, &L->co_w, &L->co_b));
    AC_TRY(norm(l, "layer_norm_3", D, &L->ln3_w, &L->ln3_b));
    AC_TRY(linear(l, "third_sub_layer.dense_in", F, D, &L->ff_in_w, &L->ff_in_b));
    return linear(l, "third_sub_layer.dense_out", D, F, &L->ff_out_w, &L->ff_out_b);
}

/* The front-end tensors are optional: computed when absent. */
static ac_status load_frontend(loader *l)
{
    hviske_model *m = l->m;
    hviske_config *c = &m->cfg;
    int bins = c->n_fft / 2 + 1;
    l->prefix[0] = 0;
    if (ac_weights_has(m->weights, "preprocessor.featurizer.window")) {
        GET("preprocessor.featurizer.window", m->window, c->win);
    } else {
        float *w = ac_weights_scratch(m->weights, (size_t)c->win);
        if (!w) return AC_ERR_NOMEM;
        ac_hann(c->win, 0, w);
        m->window = w;
    }
    if (ac_weights_has(m->weights, "preprocessor.featurizer.fb")) {
        GET("preprocessor.featurizer.fb", m->fb, 1, c->n_mels, bins);
    } else {
        float *fb = ac_weights_scratch(m->weights, (size_t)c->n_mels * bins);
        if (!fb) return AC_ERR_NOMEM;
        ac_mel_slaney(c->n_mels, c->n_fft, c->sample_rate, 0, c->sample_rate / 2.0, fb);
        m->fb = fb;
    }
    return ac_melbank_init(&m->mel, m->fb, c->n_mels, bins);
}

static ac_status check_tokens(hviske_model *m)
{
    hviske_config *c = &m->cfg;
    int n = ac_sp_size(m->sp);
    if (c->vocab == 0) c->vocab = n;
    if (c->vocab != n)
        return ac_error(AC_ERR_MODEL, "tokenizer.model has %d pieces but the config says vocab_size %d", n, c->vocab);
    if (c->eos < 0) c->eos = ac_sp_piece_to_id(m->sp, "<|endoftext|>");
    if (c->decoder_start < 0) c->decoder_start = ac_sp_piece_to_id(m->sp, "\xe2\x96\x81");
    if (c->eos < 0 || c->eos >= n || c->decoder_start < 0 || c->decoder_start >= n)
        return ac_error(AC_ERR_MODEL, "tokenizer.model: no end-of-text or start token");
    return AC_OK;
}

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Config and tokenizer: files in the folder, or files inside the GGUF. */
static ac_status load_package_files(hviske_model *m, const char *path, int folder)
{
    char p[4200];
    if (!folder) {
        const ac_embedded_file *cfg = ac_weights_embedded(m->weights, "config.json");
        const ac_embedded_file *gen = ac_weights_embedded(m->weights, "generation_config.json");
        const ac_embedded_file *tok = ac_weights_embedded(m->weights, "tokenizer.model");
        if (!cfg || !tok)
            return ac_error(AC_ERR_MODEL, "%s: no embedded config.json and tokenizer.model (not a cohere_asr package)",
                            path);
        AC_TRY(hviske_config_parse(cfg->data, cfg->size, gen ? gen->data : NULL, gen ? gen->size : 0, path, &m->cfg));
        snprintf(p, sizeof p, "%s/tokenizer.model", path);
        return ac_sp_parse(tok->data, tok->size, p, &m->sp);
    }
    char *cfg, *gen;
    size_t n_cfg, n_gen;
    snprintf(p, sizeof p, "%s/config.json", path);
    AC_TRY(ac_read_file(p, MAX_CONFIG, &cfg, &n_cfg));
    snprintf(p, sizeof p, "%s/generation_config.json", path);
    struct stat sb;
    gen = NULL;
    n_gen = 0;
    ac_status s = stat(p, &sb) == 0 ? ac_read_file(p, MAX_CONFIG, &gen, &n_gen) : AC_OK;   /* optional */
    if (!s) s = hviske_config_parse(cfg, n_cfg, gen, n_gen, path, &m->cfg);
    free(cfg);
    free(gen);
    AC_TRY(s);
    snprintf(p, sizeof p, "%s/tokenizer.model", path);
    return ac_sp_load(p, &m->sp);
}

static ac_status load_all(hviske_model *m, const char *path)
{
    int folder = is_dir(path);
    char p[4200];
    if (folder) snprintf(p, sizeof p, "%s/model.safetensors", path);
    else snprintf(p, sizeof p, "%s", path);
    if (!folder) AC_TRY(ac_weights_open(p, &m->weights));
    AC_TRY(load_package_files(m, path, folder));
    AC_TRY(check_tokens(m));
    if (folder) AC_TRY(ac_weights_open(p, &m->weights));
    const hviske_config *c = &m->cfg;
    loader ld = {.m = m}, *l = &ld;
    AC_TRY(load_frontend(l));
    AC_TRY(load_subsampling(l));
    m->enc = ac_calloc((size_t)c->n_layers, sizeof *m->enc);
    m->dec = ac_calloc((size_t)c->dec_layers, sizeof *m->dec);
    if (!m->enc || !m->dec) return AC_ERR_NOMEM;
    for (int i = 0; i < c->n_layers; i++) AC_TRY(load_enc_layer(l, i));
    l->prefix[0] = 0;
    AC_TRY(linear(l, "encoder_decoder_proj", c->dec_dim, c->d_model, &m->proj_w, &m->proj_b));
    snprintf(l->prefix, sizeof l->prefix, "transf_decoder._embedding.");
    MAT("token_embedding.weight", m->tok_emb, c->vocab, c->dec_dim);
    GET("position_embedding.pos_enc", m->pos_enc, c->max_seq, c->dec_dim);
    AC_TRY(norm(l, "layer_norm", c->dec_dim, &m->emb_ln_w, &m->emb_ln_b));
    for (int j = 0; j < c->dec_layers; j++) AC_TRY(load_dec_layer(l, j));
    snprintf(l->prefix, sizeof l->prefix, "transf_decoder._decoder.");
    AC_TRY(norm(l, "final_layer_norm", c->dec_dim, &m->final_ln_w, &m->final_ln_b));
    l->prefix[0] = 0;
    AC_TRY(linear(l, "log_softmax.mlp.layer0", c->vocab, c->dec_dim, &m->cls_w, &m->cls_b));
    /* what every decoding step reads in full */
    size_t n = 0, cap = (size_t)c->dec_layers * 8 + 1;
    ac_mat **hot = ac_calloc(cap, sizeof *hot);
    if (!hot) return AC_ERR_NOMEM;
    for (int j = 0; j < c->dec_layers; j++) {
        hviske_dec_layer *L = &m->dec[j];
        ac_mat *per_step[] = {&L->sq_w, &L->sk_w, &L->sv_w, &L->so_w, &L->cq_w, &L->co_w, &L->ff_in_w, &L->ff_out_w};
        for (size_t k = 0; k < 8; k++) hot[n++] = per_step[k];
    }
    hot[n++] = &m->cls_w;
    ac_status s = ac_weights_make_hot(m->weights, hot, n);
    free(hot);
    return s;
}

ac_status hviske_load(const char *dir, hviske_model **out)
{
    *out = NULL;
    hviske_model *m = ac_calloc(1, sizeof *m);
    if (!m) return AC_ERR_NOMEM;
    ac_status s = load_all(m, dir);
    if (s) {
        hviske_free(m);
        return s;
    }
    *out = m;
    return AC_OK;
}

void hviske_free(hviske_model *m)
{
    if (!m) return;
    ac_melbank_free(&m->mel);
    free(m->enc);
    free(m->dec);
    ac_weights_free(m->weights);
    ac_sp_free(m->sp);
    free(m);
}
