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

/* A depthwise 3x3 conv [C][1][3][3] as [9][C]. */
static ac_status dw3x3(ac_weights *w, int C, float **out, const char *name)
{
    float *t;
    AC_TRY(ac_weights_f32_copy(w, AC_SHAPE(C, 1, 3, 3), &t, "%s", name));
    *out = ac_weights_scratch(w, (size_t)9 * C);
    if (!*out) return AC_ERR_NOMEM;
    for (int c = 0; c < C; c++)
        for (int k = 0; k < 9; k++) (*out)[(size_t)k * C + c] = t[(size_t)c * 9 + k];
    return AC_OK;
}

#define SUB "encoder.pre_encode."

static ac_status load_subsampling(hviske_model *m)
{
    ac_weights *w = m->weights;
    int C = m->cfg.sub_channels, E = m->cfg.d_model;
    int F3 = (int)hviske_sub_len(hviske_sub_len(hviske_sub_len(m->cfg.n_mels)));
    const float *w0;
    AC_TRY(ac_weights_f32(w, AC_SHAPE(C, 1, 3, 3), &w0, SUB "conv.0.weight"));
    m->sub0_w = ac_mat_f32(w0, (size_t)C, 9); /* [C][1][3][3] is already [C][9] */
    AC_TRY(ac_weights_vec(w, C, &m->sub0_b, SUB "conv.0.bias"));
    AC_TRY(dw3x3(w, C, &m->sub_dw_w[0], SUB "conv.2.weight"));
    AC_TRY(ac_weights_vec(w, C, &m->sub_dw_b[0], SUB "conv.2.bias"));
    int keep = ac_weights_keep(w, AC_KEEP_STORED); /* the subsampling stem keeps its precision */
    AC_TRY(ac_weights_mat(w, AC_SHAPE(C, C, 1, 1), &m->sub_pw_w[0], SUB "conv.3.weight"));
    AC_TRY(ac_weights_vec(w, C, &m->sub_pw_b[0], SUB "conv.3.bias"));
    AC_TRY(dw3x3(w, C, &m->sub_dw_w[1], SUB "conv.5.weight"));
    AC_TRY(ac_weights_vec(w, C, &m->sub_dw_b[1], SUB "conv.5.bias"));
    AC_TRY(ac_weights_mat(w, AC_SHAPE(C, C, 1, 1), &m->sub_pw_w[1], SUB "conv.6.weight"));
    ac_weights_keep(w, keep);
    AC_TRY(ac_weights_vec(w, C, &m->sub_pw_b[1], SUB "conv.6.bias"));
    /* upstream flattens (channel, freq) as c*F3 + f; our activations are
     * [freq][channel], so the columns are reordered to f*C + c once */
    const float *ow;
    AC_TRY(ac_weights_f32(w, AC_SHAPE(E, (int64_t)C * F3), &ow, SUB "out.weight"));
    AC_TRY(ac_weights_vec(w, E, &m->sub_out_b, SUB "out.bias"));
    float *r = ac_weights_scratch(w, (size_t)E * C * F3);
    if (!r) return AC_ERR_NOMEM;
    for (int e = 0; e < E; e++)
        for (int c = 0; c < C; c++)
            for (int f = 0; f < F3; f++) r[((size_t)e * F3 + f) * C + c] = ow[((size_t)e * C + c) * F3 + f];
    ac_weights_done(w, ow, (size_t)E * C * F3);
    m->sub_out_w = ac_mat_f32(r, (size_t)E, (size_t)C * F3);
    return AC_OK;
}

#define ENC "encoder.layers.%d."

static ac_status load_enc_layer(hviske_model *m, int i)
{
    ac_weights *w = m->weights;
    hviske_enc_layer *L = &m->enc[i];
    int E = m->cfg.d_model, F = m->cfg.ff_dim, H = m->cfg.n_heads, K = m->cfg.conv_kernel;
    AC_TRY(ac_weights_norm(w, E, &L->ln_ff1_w, &L->ln_ff1_b, ENC "norm_feed_forward1", i));
    AC_TRY(ac_weights_linear(w, F, E, &L->ff1_w1, &L->ff1_b1, ENC "feed_forward1.linear1", i));
    AC_TRY(ac_weights_linear(w, E, F, &L->ff1_w2, &L->ff1_b2, ENC "feed_forward1.linear2", i));
    AC_TRY(ac_weights_norm(w, E, &L->ln_att_w, &L->ln_att_b, ENC "norm_self_att", i));
    AC_TRY(ac_weights_linear(w, E, E, &L->wq, &L->bq, ENC "self_attn.linear_q", i));
    AC_TRY(ac_weights_linear(w, E, E, &L->wk, &L->bk, ENC "self_attn.linear_k", i));
    AC_TRY(ac_weights_linear(w, E, E, &L->wv, &L->bv, ENC "self_attn.linear_v", i));
    AC_TRY(ac_weights_linear(w, E, E, &L->wo, &L->bo, ENC "self_attn.linear_out", i));
    AC_TRY(ac_weights_linear(w, E, E, &L->wpos, NULL, ENC "self_attn.linear_pos", i));
    AC_TRY(ac_weights_f32(w, AC_SHAPE(H, E / H), &L->pos_u, ENC "self_attn.pos_bias_u", i));
    AC_TRY(ac_weights_f32(w, AC_SHAPE(H, E / H), &L->pos_v, ENC "self_attn.pos_bias_v", i));
    AC_TRY(ac_weights_norm(w, E, &L->ln_conv_w, &L->ln_conv_b, ENC "norm_conv", i));
    AC_TRY(ac_weights_mat(w, AC_SHAPE(2 * E, E, 1), &L->pw1_w, ENC "conv.pointwise_conv1.weight", i));
    AC_TRY(ac_weights_vec(w, 2 * E, &L->pw1_b, ENC "conv.pointwise_conv1.bias", i));
    const float *dw;
    AC_TRY(ac_weights_f32(w, AC_SHAPE(E, 1, K), &dw, ENC "conv.depthwise_conv.weight", i));
    AC_TRY(ac_weights_vec(w, E, &L->dw_b, ENC "conv.depthwise_conv.bias", i));
    L->dw_w = ac_weights_scratch(w, (size_t)E * K);
    if (!L->dw_w) return AC_ERR_NOMEM;
    ac_depthwise_weight_from_torch(dw, L->dw_w, E, K);
    ac_weights_done(w, dw, (size_t)E * K);
    AC_TRY(ac_weights_batchnorm(w, E, BN_EPS, &L->bn_scale, &L->bn_shift, ENC "conv.batch_norm", i));
    AC_TRY(ac_weights_mat(w, AC_SHAPE(E, E, 1), &L->pw2_w, ENC "conv.pointwise_conv2.weight", i));
    AC_TRY(ac_weights_vec(w, E, &L->pw2_b, ENC "conv.pointwise_conv2.bias", i));
    AC_TRY(ac_weights_norm(w, E, &L->ln_ff2_w, &L->ln_ff2_b, ENC "norm_feed_forward2", i));
    AC_TRY(ac_weights_linear(w, F, E, &L->ff2_w1, &L->ff2_b1, ENC "feed_forward2.linear1", i));
    AC_TRY(ac_weights_linear(w, E, F, &L->ff2_w2, &L->ff2_b2, ENC "feed_forward2.linear2", i));
    return ac_weights_norm(w, E, &L->ln_out_w, &L->ln_out_b, ENC "norm_out", i);
}

#define DEC "transf_decoder._decoder.layers.%d."

static ac_status load_dec_layer(hviske_model *m, int j)
{
    ac_weights *w = m->weights;
    hviske_dec_layer *L = &m->dec[j];
    int D = m->cfg.dec_dim, F = m->cfg.dec_inner;
    AC_TRY(ac_weights_norm(w, D, &L->ln1_w, &L->ln1_b, DEC "layer_norm_1", j));
    AC_TRY(ac_weights_linear(w, D, D, &L->sq_w, &L->sq_b, DEC "first_sub_layer.query_net", j));
    AC_TRY(ac_weights_linear(w, D, D, &L->sk_w, &L->sk_b, DEC "first_sub_layer.key_net", j));
    AC_TRY(ac_weights_linear(w, D, D, &L->sv_w, &L->sv_b, DEC "first_sub_layer.value_net", j));
    AC_TRY(ac_weights_linear(w, D, D, &L->so_w, &L->so_b, DEC "first_sub_layer.out_projection", j));
    AC_TRY(ac_weights_norm(w, D, &L->ln2_w, &L->ln2_b, DEC "layer_norm_2", j));
    AC_TRY(ac_weights_linear(w, D, D, &L->cq_w, &L->cq_b, DEC "second_sub_layer.query_net", j));
    AC_TRY(ac_weights_linear(w, D, D, &L->ck_w, &L->ck_b, DEC "second_sub_layer.key_net", j));
    AC_TRY(ac_weights_linear(w, D, D, &L->cv_w, &L->cv_b, DEC "second_sub_layer.value_net", j));
    AC_TRY(ac_weights_linear(w, D, D, &L->co_w, &L->co_b, DEC "second_sub_layer.out_projection", j));
    AC_TRY(ac_weights_norm(w, D, &L->ln3_w, &L->ln3_b, DEC "layer_norm_3", j));
    AC_TRY(ac_weights_linear(w, F, D, &L->ff_in_w, &L->ff_in_b, DEC "third_sub_layer.dense_in", j));
    return ac_weights_linear(w, D, F, &L->ff_out_w, &L->ff_out_b, DEC "third_sub_layer.dense_out", j);
}

/* The front-end tensors are optional: computed when absent. */
static ac_status load_frontend(hviske_model *m)
{
    hviske_config *c = &m->cfg;
    int bins = c->n_fft / 2 + 1;
    if (ac_weights_find(m->weights, "preprocessor.featurizer.window")) {
        AC_TRY(ac_weights_vec(m->weights, c->win, &m->window, "preprocessor.featurizer.window"));
    } else {
        float *w = ac_weights_scratch(m->weights, (size_t)c->win);
        if (!w) return AC_ERR_NOMEM;
        ac_hann(c->win, 0, w);
        m->window = w;
    }
    if (ac_weights_find(m->weights, "preprocessor.featurizer.fb")) {
        AC_TRY(ac_weights_f32(m->weights, AC_SHAPE(1, c->n_mels, bins), &m->fb, "preprocessor.featurizer.fb"));
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

static ac_status load_all(hviske_model *m, const char *path, ac_weight_type type)
{
    int folder = is_dir(path);
    char p[4200];
    if (folder) snprintf(p, sizeof p, "%s/model.safetensors", path);
    else snprintf(p, sizeof p, "%s", path);
    if (!folder) AC_TRY(ac_weights_open(p, &m->weights));
    AC_TRY(load_package_files(m, path, folder));
    AC_TRY(check_tokens(m));
    if (folder) AC_TRY(ac_weights_open(p, &m->weights));
    AC_TRY(ac_weights_set_type(m->weights, type));
    const hviske_config *c = &m->cfg;
    ac_weights *w = m->weights;
    AC_TRY(load_frontend(m));
    AC_TRY(load_subsampling(m));
    m->enc = ac_calloc((size_t)c->n_layers, sizeof *m->enc);
    m->dec = ac_calloc((size_t)c->dec_layers, sizeof *m->dec);
    if (!m->enc || !m->dec) return AC_ERR_NOMEM;
    for (int i = 0; i < c->n_layers; i++) AC_TRY(load_enc_layer(m, i));
    AC_TRY(ac_weights_linear(w, c->dec_dim, c->d_model, &m->proj_w, &m->proj_b, "encoder_decoder_proj"));
    int keep = ac_weights_keep(w, AC_KEEP_STORED); /* the token embedding keeps its precision */
    AC_TRY(ac_weights_mat(w, AC_SHAPE(c->vocab, c->dec_dim), &m->tok_emb,
                          "transf_decoder._embedding.token_embedding.weight"));
    ac_weights_keep(w, keep);
    AC_TRY(ac_weights_f32(w, AC_SHAPE(c->max_seq, c->dec_dim), &m->pos_enc,
                          "transf_decoder._embedding.position_embedding.pos_enc"));
    AC_TRY(ac_weights_norm(w, c->dec_dim, &m->emb_ln_w, &m->emb_ln_b, "transf_decoder._embedding.layer_norm"));
    for (int j = 0; j < c->dec_layers; j++) AC_TRY(load_dec_layer(m, j));
    AC_TRY(ac_weights_norm(w, c->dec_dim, &m->final_ln_w, &m->final_ln_b, "transf_decoder._decoder.final_layer_norm"));
    AC_TRY(ac_weights_linear(w, c->vocab, c->dec_dim, &m->cls_w, &m->cls_b, "log_softmax.mlp.layer0"));
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

ac_status hviske_load(const char *dir, ac_weight_type type, hviske_model **out)
{
    *out = NULL;
    hviske_model *m = ac_calloc(1, sizeof *m);
    if (!m) return AC_ERR_NOMEM;
    ac_status s = load_all(m, dir, type);
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
