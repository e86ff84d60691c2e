/* Loading a Hugging Face Qwen2 folder: the configs and every tensor of
 * spec vevo2.md §4.7, each checked against the shape the config implies.
 * Matrices are used in place in their stored type; vectors as f32. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/file.h"
#include "base/mem.h"
#include "models/qwen2/qwen2.h"

#define MAX_CONFIG (16u << 20)

static ac_status vec(qwen2_model *m, const char *name, int n, const float **out)
{
    return ac_weights_f32(m->weights, name, AC_SHAPE(n), out);
}

static ac_status mat(qwen2_model *m, const char *name, int rows, int cols, ac_mat *out)
{
    return ac_weights_mat(m->weights, name, AC_SHAPE(rows, cols), out);
}

static ac_status load_layer(qwen2_model *m, int i)
{
    const qwen2_config *c = &m->cfg;
    qwen2_layer *L = &m->layer[i];
    int D = c->hidden, Q = c->heads * c->head_dim, KV = c->kv_heads * c->head_dim, F = c->intermediate;
    char n[160];
#define NAME(suffix) (snprintf(n, sizeof n, "model.layers.%d.%s", i, suffix), n)
    AC_TRY(vec(m, NAME("input_layernorm.weight"), D, &L->ln_in));
    AC_TRY(mat(m, NAME("self_attn.q_proj.weight"), Q, D, &L->wq));
    AC_TRY(vec(m, NAME("self_attn.q_proj.bias"), Q, &L->bq));
    AC_TRY(mat(m, NAME("self_attn.k_proj.weight"), KV, D, &L->wk));
    AC_TRY(vec(m, NAME("self_attn.k_proj.bias"), KV, &L->bk));
    AC_TRY(mat(m, NAME("self_attn.v_proj.weight"), KV, D, &L->wv));
    AC_TRY(vec(m, NAME("self_attn.v_proj.bias"), KV, &L->bv));
    AC_TRY(mat(m, NAME("self_attn.o_proj.weight"), D, Q, &L->wo));
    AC_TRY(vec(m, NAME("post_attention_layernorm.weight"), D, &L->ln_post));
    AC_TRY(mat(m, NAME("mlp.gate_proj.weight"), F, D, &L->gate));
    AC_TRY(mat(m, NAME("mlp.up_proj.weight"), F, D, &L->up));
    return mat(m, NAME("mlp.down_proj.weight"), D, F, &L->down);
#undef NAME
}

/* The embedding rows must be vocab_size: a mismatch is a config error,
 * reported as such rather than as a shape. */
static ac_status check_vocab(qwen2_model *m, const char *name)
{
    const ac_tensor *t = ac_tensor_file_find(m->weights->st, name);
    if (t && t->ndim == 2 && t->shape[0] != m->cfg.vocab)
        return ac_error(AC_ERR_MODEL, "%s: tensor '%s' has %lld rows but config.json says vocab_size %d",
                        m->weights->file, name, (long long)t->shape[0], m->cfg.vocab);
    return AC_OK;
}

static ac_status load_weights(qwen2_model *m)
{
    const qwen2_config *c = &m->cfg;
    AC_TRY(check_vocab(m, "model.embed_tokens.weight"));
    AC_TRY(mat(m, "model.embed_tokens.weight", c->vocab, c->hidden, &m->embed));
    m->layer = ac_calloc((size_t)c->layers, sizeof *m->layer);
    if (!m->layer) return AC_ERR_NOMEM;
    for (int i = 0; i < c->layers; i++) AC_TRY(load_layer(m, i));
    AC_TRY(vec(m, "model.norm.weight", c->hidden, &m->norm));
    if (!c->tied) {
        AC_TRY(check_vocab(m, "lm_head.weight"));
        AC_TRY(mat(m, "lm_head.weight", c->vocab, c->hidden, &m->head));
    }
    /* what every decoding step reads in full; a tied head is the embedding */
    size_t n = 0, per = 7;
    ac_mat **hot = ac_calloc((size_t)c->layers * per + 1, sizeof *hot);
    if (!hot) return AC_ERR_NOMEM;
    for (int i = 0; i < c->layers; i++) {
        qwen2_layer *L = &m->layer[i];
        ac_mat *step[] = {&L->wq, &L->wk, &L->wv, &L->wo, &L->gate, &L->up, &L->down};
        for (size_t k = 0; k < per; k++) hot[n++] = step[k];
    }
    hot[n++] = c->tied ? &m->embed : &m->head;
    ac_status s = ac_weights_make_hot(m->weights, hot, n);
    free(hot);
    if (c->tied) m->head = m->embed;
    return s;
}

static ac_status load_configs(qwen2_model *m, const char *dir)
{
    char p[4200], *cfg, *gen = NULL;
    size_t n_cfg, n_gen = 0;
    struct stat sb;
    snprintf(p, sizeof p, "%s/config.json", dir);
    AC_TRY(ac_read_file(p, MAX_CONFIG, &cfg, &n_cfg));
    snprintf(p, sizeof p, "%s/generation_config.json", dir);
    ac_status s = stat(p, &sb) == 0 ? ac_read_file(p, MAX_CONFIG, &gen, &n_gen) : AC_OK; /* optional */
    if (!s) s = qwen2_config_parse(cfg, n_cfg, gen, n_gen, dir, &m->cfg, &m->gen);
    free(cfg);
    free(gen);
    return s;
}

ac_status qwen2_load(const char *dir, qwen2_model **out)
{
    *out = NULL;
    qwen2_model *m = ac_calloc(1, sizeof *m);
    if (!m) return AC_ERR_NOMEM;
    char p[4200];
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    ac_status s = load_configs(m, dir);
    if (!s) s = ac_weights_open(p, &m->weights);
    if (!s) s = load_weights(m);
    if (s) {
        qwen2_free(m);
        return s;
    }
    *out = m;
    return AC_OK;
}

void qwen2_free(qwen2_model *m)
{
    if (!m) return;
    free(m->layer);
    ac_weights_free(m->weights);
    free(m);
}
