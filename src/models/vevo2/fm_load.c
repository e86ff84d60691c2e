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

static ac_status vec(vevo2_fm *m, const char *name, int n, const float **out)
{
    return ac_weights_f32(m->weights, name, AC_SHAPE(n), out);
}

static ac_status mat(vevo2_fm *m, const char *name, int rows, int cols, ac_mat *out)
{
    return ac_weights_mat(m->weights, name, AC_SHAPE(rows, cols), out);
}

/* PREFIX.0 (in -> 4h) and PREFIX.2 (4h -> out), both with biases. */
static ac_status load_mlp(vevo2_fm *m, const char *prefix, int in, int out, vevo2_fm_mlp *p)
{
    int wide = 4 * m->cfg.hidden;
    char n[160];
    snprintf(n, sizeof n, "%s.0.weight", prefix);
    AC_TRY(mat(m, n, wide, in, &p->w0));
    snprintf(n, sizeof n, "%s.0.bias", prefix);
    AC_TRY(vec(m, n, wide, &p->b0));
    snprintf(n, sizeof n, "%s.2.weight", prefix);
    AC_TRY(mat(m, n, out, wide, &p->w2));
    snprintf(n, sizeof n, "%s.2.bias", prefix);
    return vec(m, n, out, &p->b2);
}

static ac_status load_norm(vevo2_fm *m, const char *prefix, ac_mat *w, const float **b)
{
    int D = m->cfg.hidden;
    char n[160];
    snprintf(n, sizeof n, "%s.to_weight.weight", prefix);
    AC_TRY(mat(m, n, D, D, w));
    snprintf(n, sizeof n, "%s.to_weight.bias", prefix);
    return vec(m, n, D, b);
}

static ac_status load_layer(vevo2_fm *m, int i)
{
    vevo2_fm_layer *L = &m->layer[i];
    int D = m->cfg.hidden, W = 4 * D;
    char n[160];
#define NAME(suffix) (snprintf(n, sizeof n, "diff_estimator.layers.%d.%s", i, suffix), n)
    AC_TRY(load_norm(m, NAME("input_layernorm"), &L->norm_in, &L->norm_in_b));
    AC_TRY(load_norm(m, NAME("post_attention_layernorm"), &L->norm_post, &L->norm_post_b));
    AC_TRY(mat(m, NAME("self_attn.q_proj.weight"), D, D, &L->wq));
    AC_TRY(mat(m, NAME("self_attn.k_proj.weight"), D, D, &L->wk));
    AC_TRY(mat(m, NAME("self_attn.v_proj.weight"), D, D, &L->wv));
    AC_TRY(mat(m, NAME("self_attn.o_proj.weight"), D, D, &L->wo));
    AC_TRY(mat(m, NAME("mlp.gate_proj.weight"), W, D, &L->gate));
    AC_TRY(mat(m, NAME("mlp.up_proj.weight"), W, D, &L->up));
    return mat(m, NAME("mlp.down_proj.weight"), D, W, &L->down);
#undef NAME
}

/* resampling_layers.{0,2}: ConvTranspose1d(D, D, 4, 2, 1), torch [in][out][k]. */
static ac_status load_upsampler(vevo2_fm *m, int i)
{
    int D = m->cfg.hidden;
    char n[160];
    const float *w;
    snprintf(n, sizeof n, "resampling_layers.%d.weight", 2 * i);
    AC_TRY(ac_weights_f32(m->weights, n, AC_SHAPE(D, D, UP_KERNEL), &w));
    float *ours = ac_weights_scratch(m->weights, (size_t)D * D * UP_KERNEL);
    if (!ours) return AC_ERR_NOMEM;
    ac_conv_transpose1d_weight_from_torch(w, ours, D, D, UP_KERNEL);
    m->up_w[i] = ours;
    snprintf(n, sizeof n, "resampling_layers.%d.bias", 2 * i);
    return vec(m, n, D, &m->up_b[i]);
}

static ac_status load_weights(vevo2_fm *m)
{
    const vevo2_fm_config *c = &m->cfg;
    int D = c->hidden;
    AC_TRY(mat(m, "cond_emb.weight", c->cond_codebook, D, &m->cond_emb));
    for (int i = 0; i < 2; i++) AC_TRY(load_upsampler(m, i));
    AC_TRY(load_mlp(m, "diff_estimator.mel_mlp", c->mel_dim, D, &m->mel_mlp));
    AC_TRY(load_mlp(m, "diff_estimator.cond_mlp", D, D, &m->cond_mlp));
    AC_TRY(load_mlp(m, "diff_estimator.diff_step_mlp", D, D, &m->step_mlp));
    AC_TRY(load_mlp(m, "diff_estimator.mel_out_mlp", D, c->mel_dim, &m->out_mlp));
    m->layer = ac_calloc((size_t)c->layers, sizeof *m->layer);
    if (!m->layer) return AC_ERR_NOMEM;
    for (int i = 0; i < c->layers; i++) AC_TRY(load_layer(m, i));
    return load_norm(m, "diff_estimator.norm", &m->norm, &m->norm_b);
}

ac_status vevo2_fm_load(const char *weights_path, const vevo2_fm_config *cfg, vevo2_fm **out)
{
    *out = NULL;
    vevo2_fm *m = ac_calloc(1, sizeof *m);
    if (!m) return AC_ERR_NOMEM;
    m->cfg = *cfg;
    ac_status s = ac_weights_open(weights_path, &m->weights);
    if (!s) s = load_weights(m);
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
