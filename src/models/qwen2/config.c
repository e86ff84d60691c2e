/* config.json and generation_config.json of a Hugging Face Qwen2 or Qwen3
 * folder, or the decoder's object inside another model's config.json.
 * Keys that fix the architecture are required; the others take
 * transformers' defaults (Qwen2Config, GenerationConfig). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "io/config.h"
#include "models/qwen2/qwen2.h"

/* "WHERE." before a key of a sub-object in messages. */
static const char *at(const char *where, char *buf, size_t size)
{
    snprintf(buf, size, "%s%s", where ? where : "", where ? "." : "");
    return buf;
}

static ac_status positive(const ac_config *c, const char *where, const char *key, int v)
{
    char w[128];
    if (v < 1) return ac_error(AC_ERR_MODEL, "%s: '%s%s' = %d must be positive", c->file, at(where, w, sizeof w), key, v);
    return AC_OK;
}

static int has(const ac_config *c, const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj ? obj : c->root, key) != NULL;
}

static ac_status number_opt(const ac_config *c, const cJSON *obj, const char *where, const char *key, double def,
                            float *out)
{
    double d = def;
    if (has(c, obj, key)) AC_TRY(ac_config_double(c, obj, where, key, &d));
    *out = (float)d;
    return AC_OK;
}

/* model_type: qwen2 (q/k/v biases) or qwen3 (RMSNorm of q and k per
 * head, biases as attention_bias says, none by default). */
static ac_status parse_type(const ac_config *c, const cJSON *obj, const char *where, const char *def, qwen2_config *g)
{
    const char *type = def;
    if (has(c, obj, "model_type")) AC_TRY(ac_config_string(c, obj, where, "model_type", &type));
    char w[128];
    if (!type || (strcmp(type, "qwen2") != 0 && strcmp(type, "qwen3") != 0))
        return ac_error(AC_ERR_MODEL, "%s: '%smodel_type' '%s' is not qwen2 or qwen3", c->file, at(where, w, sizeof w),
                        type ? type : "null");
    g->qk_norm = strcmp(type, "qwen3") == 0;
    g->attn_bias = !g->qk_norm;
    if (g->qk_norm && has(c, obj, "attention_bias")) AC_TRY(ac_config_bool(c, obj, where, "attention_bias", &g->attn_bias));
    return AC_OK;
}

static ac_status parse_model(const ac_config *c, const cJSON *obj, const char *where, const char *def_type,
                             qwen2_config *g)
{
    char w[128];
    const char *pre = at(where, w, sizeof w);
    AC_TRY(parse_type(c, obj, where, def_type, g));
    AC_TRY(ac_config_int(c, obj, where, "hidden_size", &g->hidden));
    AC_TRY(ac_config_int(c, obj, where, "intermediate_size", &g->intermediate));
    AC_TRY(ac_config_int(c, obj, where, "num_hidden_layers", &g->layers));
    AC_TRY(ac_config_int(c, obj, where, "num_attention_heads", &g->heads));
    AC_TRY(ac_config_int_opt(c, obj, where, "num_key_value_heads", g->heads, &g->kv_heads));
    AC_TRY(ac_config_int(c, obj, where, "vocab_size", &g->vocab));
    AC_TRY(ac_config_int_opt(c, obj, where, "max_position_embeddings", 32768, &g->max_positions));
    const char *keys[] = {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                          "num_key_value_heads", "vocab_size", "max_position_embeddings"};
    int vals[] = {g->hidden, g->intermediate, g->layers, g->heads, g->kv_heads, g->vocab, g->max_positions};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) AC_TRY(positive(c, where, keys[i], vals[i]));
    /* an explicit head_dim frees the width from the heads (Qwen3: heads x head_dim != hidden_size) */
    int explicit_dim = has(c, obj, "head_dim");
    if (!explicit_dim && g->hidden % g->heads)
        return ac_error(AC_ERR_MODEL, "%s: %snum_attention_heads %d does not divide %shidden_size %d", c->file, pre,
                        g->heads, pre, g->hidden);
    if (g->heads % g->kv_heads)
        return ac_error(AC_ERR_MODEL, "%s: %snum_key_value_heads %d does not divide %snum_attention_heads %d", c->file,
                        pre, g->kv_heads, pre, g->heads);
    AC_TRY(ac_config_int_opt(c, obj, where, "head_dim", g->hidden / g->heads, &g->head_dim));
    AC_TRY(positive(c, where, "head_dim", g->head_dim));
    if (g->head_dim % 2)
        return ac_error(AC_ERR_MODEL, "%s: %shead_dim %d is odd (RoPE turns pairs)", c->file, pre, g->head_dim);
    AC_TRY(number_opt(c, obj, where, "rope_theta", 10000.0, &g->rope_theta));
    AC_TRY(number_opt(c, obj, where, "rms_norm_eps", 1e-6, &g->rms_eps));
    if (!(g->rope_theta > 0) || !(g->rms_eps > 0))
        return ac_error(AC_ERR_MODEL, "%s: %srope_theta %g and rms_norm_eps %g must be positive", c->file, pre,
                        g->rope_theta, g->rms_eps);
    g->tied = 1; /* Qwen2Config's default */
    if (has(c, obj, "tie_word_embeddings")) AC_TRY(ac_config_bool(c, obj, where, "tie_word_embeddings", &g->tied));
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(obj ? obj : c->root, "rope_scaling");
    if (rs && !cJSON_IsNull(rs))
        return ac_error(AC_ERR_UNSUPPORTED, "%s: %srope_scaling is not supported (plain RoPE only)", c->file, pre);
    int sliding = 0;
    if (has(c, obj, "use_sliding_window")) AC_TRY(ac_config_bool(c, obj, where, "use_sliding_window", &sliding));
    if (sliding) return ac_error(AC_ERR_UNSUPPORTED, "%s: %suse_sliding_window is not supported", c->file, pre);
    const char *act = "silu";
    if (has(c, obj, "hidden_act")) AC_TRY(ac_config_string(c, obj, where, "hidden_act", &act));
    if (!act || strcmp(act, "silu") != 0)
        return ac_error(AC_ERR_UNSUPPORTED, "%s: %shidden_act '%s' is not supported (silu)", c->file, pre,
                        act ? act : "null");
    return AC_OK;
}

ac_status qwen2_config_parse_obj(const ac_config *c, const cJSON *obj, const char *where, const char *def_type,
                                 qwen2_config *cfg)
{
    *cfg = (qwen2_config){0};
    return parse_model(c, obj, where, def_type, cfg);
}

/* eos_token_id: absent, null, a number or a list of numbers. */
static ac_status parse_eos(const ac_config *c, const qwen2_config *g, qwen2_generation *gen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->root, "eos_token_id");
    if (!v || cJSON_IsNull(v)) return AC_OK;
    const cJSON *items = cJSON_IsArray(v) ? v->child : v;
    int n = 0;
    for (const cJSON *it = items; it; it = cJSON_IsArray(v) ? it->next : NULL) {
        if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || it->valuedouble < 0 ||
            it->valuedouble >= g->vocab)
            return ac_error(AC_ERR_MODEL, "%s: eos_token_id must be ids below vocab_size %d", c->file, g->vocab);
        if (n == QWEN2_MAX_STOP)
            return ac_error(AC_ERR_MODEL, "%s: more than %d eos_token_id values", c->file, QWEN2_MAX_STOP);
        gen->eos[n++] = (int)it->valuedouble;
    }
    gen->n_eos = n;
    return AC_OK;
}

static ac_status parse_generation(const ac_config *c, const qwen2_config *g, qwen2_generation *gen)
{
    AC_TRY(parse_eos(c, g, gen));
    const cJSON *pad = cJSON_GetObjectItemCaseSensitive(c->root, "pad_token_id");
    if (pad && !cJSON_IsNull(pad)) AC_TRY(ac_config_int(c, NULL, NULL, "pad_token_id", &gen->pad));
    if (cJSON_GetObjectItemCaseSensitive(c->root, "do_sample"))
        AC_TRY(ac_config_bool(c, NULL, NULL, "do_sample", &gen->do_sample));
    AC_TRY(ac_config_int_opt(c, NULL, NULL, "top_k", gen->top_k, &gen->top_k));
    AC_TRY(number_opt(c, NULL, NULL, "top_p", gen->top_p, &gen->top_p));
    AC_TRY(number_opt(c, NULL, NULL, "temperature", gen->temperature, &gen->temperature));
    AC_TRY(number_opt(c, NULL, NULL, "repetition_penalty", gen->repetition_penalty, &gen->repetition_penalty));
    AC_TRY(ac_config_int_opt(c, NULL, NULL, "min_new_tokens", gen->min_new_tokens, &gen->min_new_tokens));
    AC_TRY(ac_config_int_opt(c, NULL, NULL, "max_new_tokens", gen->max_new_tokens, &gen->max_new_tokens));
    AC_TRY(ac_config_int_opt(c, NULL, NULL, "max_length", gen->max_length, &gen->max_length));
    ac_sampler_options so = ac_sampler_defaults();
    so.top_k = gen->top_k, so.top_p = gen->top_p, so.temperature = gen->temperature;
    so.repetition_penalty = gen->repetition_penalty;
    ac_status s = ac_sampler_check(&so, g->vocab);
    if (s) return ac_error_prefix(s, "%s", c->file);
    if (gen->min_new_tokens < 0) return ac_error(AC_ERR_MODEL, "%s: min_new_tokens must be >= 0", c->file);
    if (gen->pad >= g->vocab)
        return ac_error(AC_ERR_MODEL, "%s: pad_token_id %d is outside vocab_size %d", c->file, gen->pad, g->vocab);
    return AC_OK;
}

static ac_status parse_file(const char *text, size_t len, const char *name,
                            ac_status (*fn)(const ac_config *, qwen2_config *, qwen2_generation *), qwen2_config *g,
                            qwen2_generation *gen)
{
    ac_config *c;
    AC_TRY(ac_config_parse(text, len, name, &c));
    ac_status s = fn(c, g, gen);
    ac_config_free(c);
    return s;
}

static ac_status model_file(const ac_config *c, qwen2_config *g, qwen2_generation *gen)
{
    AC_TRY(parse_model(c, NULL, NULL, "qwen2", g));
    /* config.json's eos_token_id stands when generation_config.json has none */
    return parse_eos(c, g, gen);
}

static ac_status generation_file(const ac_config *c, qwen2_config *g, qwen2_generation *gen)
{
    return parse_generation(c, g, gen);
}

ac_status qwen2_config_parse(const char *text, size_t len, const char *gen_text, size_t gen_len,
                             const char *where, qwen2_config *cfg, qwen2_generation *gen)
{
    char name[4200];
    *cfg = (qwen2_config){0};
    *gen = (qwen2_generation){.pad = -1, .top_k = 50, .top_p = 1, .temperature = 1, .repetition_penalty = 1,
                              .max_new_tokens = -1, .max_length = 20};
    snprintf(name, sizeof name, "%s/config.json", where);
    AC_TRY(parse_file(text, len, name, model_file, cfg, gen));
    if (!gen_text) return AC_OK;
    snprintf(name, sizeof name, "%s/generation_config.json", where);
    return parse_file(gen_text, gen_len, name, generation_file, cfg, gen);
}
