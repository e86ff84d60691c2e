/* Loading the FM model.safetensors: every tensor of spec vevo2.md §4.9,
 * its shape checked against the config. Matrices stay in their stored
 * type; the transposed convolutions are rearranged once to our layout.
 * The REPA head (repa_mlp_layer.*) only served training and is not read. */
#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "base/mem.h"
#include "models/vevo2/fm.h"
#include "tensor/kernels.h"

enum { UP_KERNEL = 4 };

/* PREFIX.0 (in -> 4h) and PREFIX.2 (4h -> out), both with biases. */
static ac_status load_mlp(vevo2_fm *m, const char *prefix, int in, int out, vevo2_fm_mlp *p)
{
    int wide = 4 * m->cfg.hidden;
    AC_TRY(ac_weights_linear(m->weights, wide, in, &p->w0, &p->b0, "%s.0", prefix));
    return ac_weights_linear(m->weights, out, wide, &p->w2, &p->b2, "%s.2", prefix);
}

/* The adaptive norm's projection PREFIX.to_weight (the timestep to a scale). */
static ac_status load_norm(vevo2_fm *m, const char *prefix, int layer, ac_mat *w, const float **b)
{
    int D = m->cfg.hidden;
    if (layer < 0) return ac_weights_linear(m->weights, D, D, w, b, "%s.to_weight", prefix);
    return ac_weights_linear(m->weights, D, D, w, b, "diff_estimator.layers.%d.%s.to_weight", layer, prefix);
}

static ac_status load_layer(vevo2_fm *m, int i)
{
    vevo2_fm_layer *L = &m->layer[i];
    ac_weights *w = m->weights;
    int D = m->cfg.hidden, W = 4 * D;
    AC_TRY(load_norm(m, "input_layernorm", i, &L->norm_in, &L->norm_in_b));
    AC_TRY(load_norm(m, "post_attention_layernorm", i, &L->norm_post, &L->norm_post_b));
    AC_TRY(ac_weights_linear(w, D, D, &L->wq, NULL, "diff_estimator.layers.%d.self_attn.q_proj", i));
    AC_TRY(ac_weights_linear(w, D, D, &L->wk, NULL, "diff_estimator.layers.%d.self_attn.k_proj", i));
    AC_TRY(ac_weights_linear(w, D, D, &L->wv, NULL, "diff_estimator.layers.%d.self_attn.v_proj", i));
    AC_TRY(ac_weights_linear(w, D, D, &L->wo, NULL, "diff_estimator.layers.%d.self_attn.o_proj", i));
    AC_TRY(ac_weights_linear(w, W, D, &L->gate, NULL, "diff_estimator.layers.%d.mlp.gate_proj", i));
    AC_TRY(ac_weights_linear(w, W, D, &L->up, NULL, "diff_estimator.layers.%d.mlp.up_proj", i));
    return ac_weights_linear(w, D, W, &L->down, NULL, "diff_estimator.layers.%d.mlp.down_proj", i);
}

/* resampling_layers.{0,2}: ConvTranspose1d(D, D, 4, 2, 1), torch [in][out][k]. */
static ac_status load_upsampler(vevo2_fm *m, int i)
{
    int D = m->cfg.hidden;
    const float *w;
    AC_TRY(ac_weights_f32(m->weights, AC_SHAPE(D, D, UP_KERNEL), &w, "resampling_layers.%d.weight", 2 * i));
    float *ours = ac_weights_scratch(m->weights, (size_t)D * D * UP_KERNEL);
    if (!ours) return AC_ERR_NOMEM;
    ac_conv_transpose1d_weight_from_torch(w, ours, D, D, UP_KERNEL);
    ac_weights_done(m->weights, w, (size_t)D * D * UP_KERNEL);
    m->up_w[i] = ours;
    return ac_weights_vec(m->weights, D, &m->up_b[i], "resampling_layers.%d.bias", 2 * i);
}

static ac_status load_weights(vevo2_fm *m)
{
    const vevo2_fm_config *c = &m->cfg;
    int D = c->hidden;
    int keep = ac_weights_keep(m->weights, AC_KEEP_STORED); /* the code embedding keeps its precision */
    AC_TRY(ac_weights_mat(m->weights, AC_SHAPE(c->cond_codebook, D), &m->cond_emb, "cond_emb.weight"));
    ac_weights_keep(m->weights, keep);
    for (int i = 0; i < 2; i++) AC_TRY(load_upsampler(m, i));
    AC_TRY(load_mlp(m, "diff_estimator.mel_mlp", c->mel_dim, D, &m->mel_mlp));
    AC_TRY(load_mlp(m, "diff_estimator.cond_mlp", D, D, &m->cond_mlp));
    AC_TRY(load_mlp(m, "diff_estimator.diff_step_mlp", D, D, &m->step_mlp));
    AC_TRY(load_mlp(m, "diff_estimator.mel_out_mlp", D, c->mel_dim, &m->out_mlp));
    m->layer = ac_calloc((size_t)c->layers, sizeof *m->layer);
    if (!m->layer) return AC_ERR_NOMEM;
    for (int i = 0; i < c->layers; i++) AC_TRY(load_layer(m, i));
    return load_norm(m, "diff_estimator.norm", -1, &m->norm, &m->norm_b);
}

ac_status vevo2_fm_load_from(ac_weights *w, const vevo2_fm_config *cfg, vevo2_fm **out)
{
    *out = NULL;
    vevo2_fm *m = ac_calloc(1, sizeof *m);
    if (!m) {
        ac_weights_free(w);
        return AC_ERR_NOMEM;
    }
    m->cfg = *cfg;
    m->weights = w;
    ac_status s = load_weights(m);
    if (s) {
        vevo2_fm_free(m);
        return s;
    }
    *out = m;
    return AC_OK;
}

void vevo2_fm_free(vevo2_fm *m)
{
    if (!m) return;
    free(m->layer);
    ac_weights_free(m->weights);
    free(m);
}
