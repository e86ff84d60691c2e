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

static ac_status load_layer(qwen2_model *m, int i)
{
    const qwen2_config *c = &m->cfg;
    ac_weights *w = m->weights;
    qwen2_layer *L = &m->layer[i];
    int D = c->hidden, Q = c->heads * c->head_dim, KV = c->kv_heads * c->head_dim, F = c->intermediate;
    int b = c->attn_bias;
    AC_TRY(ac_weights_vec(w, D, &L->ln_in, "model.layers.%d.input_layernorm.weight", i));
    AC_TRY(ac_weights_linear(w, Q, D, &L->wq, b ? &L->bq : NULL, "model.layers.%d.self_attn.q_proj", i));
    AC_TRY(ac_weights_linear(w, KV, D, &L->wk, b ? &L->bk : NULL, "model.layers.%d.self_attn.k_proj", i));
    AC_TRY(ac_weights_linear(w, KV, D, &L->wv, b ? &L->bv : NULL, "model.layers.%d.self_attn.v_proj", i));
    if (c->qk_norm) {
        AC_TRY(ac_weights_vec(w, c->head_dim, &L->q_norm, "model.layers.%d.self_attn.q_norm.weight", i));
        AC_TRY(ac_weights_vec(w, c->head_dim, &L->k_norm, "model.layers.%d.self_attn.k_norm.weight", i));
    }
    AC_TRY(ac_weights_linear(w, D, Q, &L->wo, NULL, "model.layers.%d.self_attn.o_proj", i));
    AC_TRY(ac_weights_vec(w, D, &L->ln_post, "model.layers.%d.post_attention_layernorm.weight", i));
    AC_TRY(ac_weights_linear(w, F, D, &L->gate, NULL, "model.layers.%d.mlp.gate_proj", i));
    AC_TRY(ac_weights_linear(w, F, D, &L->up, NULL, "model.layers.%d.mlp.up_proj", i));
    return ac_weights_linear(w, D, F, &L->down, NULL, "model.layers.%d.mlp.down_proj", i);
}

/* The embedding rows must be vocab_size: a mismatch is a config error,
 * reported as such rather than as a shape. */
static ac_status check_vocab(qwen2_model *m, const char *name)
{
    const ac_tensor *t = ac_weights_find(m->weights, "%s", name);
    if (t && t->ndim == 2 && t->shape[0] != m->cfg.vocab)
        return ac_error(AC_ERR_MODEL, "%s: tensor '%s%s' has %lld rows but config.json says vocab_size %d",
                        m->weights->file, m->weights->ns, name, (long long)t->shape[0], m->cfg.vocab);
    return AC_OK;
}

static ac_status load_weights(qwen2_model *m)
{
    const qwen2_config *c = &m->cfg;
    AC_TRY(check_vocab(m, "model.embed_tokens.weight"));
    /* the embedding keeps its precision unless it is also the head */
    int keep = ac_weights_keep(m->weights, c->tied ? 0 : AC_KEEP_STORED);
    AC_TRY(ac_weights_mat(m->weights, AC_SHAPE(c->vocab, c->hidden), &m->embed, "model.embed_tokens.weight"));
    ac_weights_keep(m->weights, keep);
    m->layer = ac_calloc((size_t)c->layers, sizeof *m->layer);
    if (!m->layer) return AC_ERR_NOMEM;
    for (int i = 0; i < c->layers; i++) AC_TRY(load_layer(m, i));
    AC_TRY(ac_weights_vec(m->weights, c->hidden, &m->norm, "model.norm.weight"));
    if (!c->tied) {
        AC_TRY(check_vocab(m, "lm_head.weight"));
        AC_TRY(ac_weights_linear(m->weights, c->vocab, c->hidden, &m->head, NULL, "lm_head"));
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

ac_status qwen2_load_shared(ac_weights *w, const qwen2_config *cfg, const char *ns, qwen2_model **out)
{
    *out = NULL;
    qwen2_model *m = ac_calloc(1, sizeof *m);
    if (!m) return AC_ERR_NOMEM;
    m->cfg = *cfg;
    m->gen = (qwen2_generation){.pad = -1, .top_k = 50, .top_p = 1, .temperature = 1, .repetition_penalty = 1,
                                .max_new_tokens = -1, .max_length = 20};
    m->weights = w;
    ac_status s = ac_weights_set_namespace(w, ns);
    if (!s) s = load_weights(m);
    ac_weights_set_namespace(w, "");
    if (s) {
        qwen2_free(m);
        return s;
    }
    *out = m;
    return AC_OK;
}

ac_status qwen2_load_from(ac_weights *w, const char *cfg, size_t n_cfg, const char *gen, size_t n_gen,
                          const char *name, qwen2_model **out)
{
    *out = NULL;
    qwen2_model *m = ac_calloc(1, sizeof *m);
    if (!m) {
        ac_weights_free(w);
        return AC_ERR_NOMEM;
    }
    m->weights = w;
    m->owns_weights = 1;
    ac_status s = qwen2_config_parse(cfg, n_cfg, gen, n_gen, name, &m->cfg, &m->gen);
    if (!s) s = load_weights(m);
    if (s) {
        qwen2_free(m);
        return s;
    }
    *out = m;
    return AC_OK;
}

ac_status qwen2_load(const char *dir, ac_weight_type type, qwen2_model **out)
{
    *out = NULL;
    qwen2_model *m = ac_calloc(1, sizeof *m);
    if (!m) return AC_ERR_NOMEM;
    m->owns_weights = 1;
    char p[4200];
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    ac_status s = load_configs(m, dir);
    if (!s) s = ac_weights_open_as(p, type, &m->weights);
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
    if (m->owns_weights) ac_weights_free(m->weights);
    free(m);
}
