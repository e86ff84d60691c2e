/* The encoder's dims from OpenAI's "dims" object or Hugging Face's
 * config.json. Every dim is required: nothing is assumed about the size. */
#include <string.h>

#include "base/error.h"
#include "models/whisper/whisper.h"

static ac_status check(const ac_config *c, const char *where, const char *const *keys, whisper_config *g)
{
    const int vals[] = {g->n_mels, g->n_ctx, g->d, g->heads, g->layers, g->ffn};
    const char *dot = where ? "." : "";
    where = where ? where : "";
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        if (vals[i] < 1)
            return ac_error(AC_ERR_MODEL, "%s: '%s%s%s' = %d must be positive", c->file, where, dot, keys[i], vals[i]);
    if (g->d % g->heads)
        return ac_error(AC_ERR_MODEL, "%s: '%s%s%s' = %d heads do not divide the width %d", c->file, where, dot,
                        keys[3], g->heads, g->d);
    return AC_OK;
}

ac_status whisper_config_parse(const ac_config *c, const cJSON *obj, const char *where, whisper_config *g)
{
    static const char *const keys[] = {"n_mels", "n_audio_ctx", "n_audio_state", "n_audio_head", "n_audio_layer",
                                       "4 * n_audio_state"};
    *g = (whisper_config){.names = WHISPER_NAMES_OPENAI};
    AC_TRY(ac_config_int(c, obj, where, "n_mels", &g->n_mels));
    AC_TRY(ac_config_int(c, obj, where, "n_audio_ctx", &g->n_ctx));
    AC_TRY(ac_config_int(c, obj, where, "n_audio_state", &g->d));
    AC_TRY(ac_config_int(c, obj, where, "n_audio_head", &g->heads));
    AC_TRY(ac_config_int(c, obj, where, "n_audio_layer", &g->layers));
    g->ffn = g->d > 0 ? 4 * g->d : 0; /* OpenAI's MLP: n_mlp = 4 * n_state */
    return check(c, where, keys, g);
}

static ac_status parse_hf(const ac_config *c, const cJSON *obj, const char *where, int rotary, whisper_config *g)
{
    static const char *const keys[] = {"num_mel_bins", "max_source_positions", "d_model", "encoder_attention_heads",
                                       "encoder_layers", "encoder_ffn_dim"};
    *g = (whisper_config){.names = WHISPER_NAMES_HF};
    const char *type = NULL, *act = NULL;
    const cJSON *o = obj ? obj : c->root;
    if (cJSON_GetObjectItemCaseSensitive(o, "model_type")) AC_TRY(ac_config_string(c, obj, where, "model_type", &type));
    if (type && strcmp(type, "whisper") != 0)
        return ac_error(AC_ERR_MODEL, "%s: model_type '%s' is not whisper", c->file, type);
    AC_TRY(ac_config_int(c, obj, where, "num_mel_bins", &g->n_mels));
    if (rotary) /* no table: the positions it would bound are unused */
        AC_TRY(ac_config_int_opt(c, obj, where, "max_source_positions", 1500, &g->n_ctx));
    else
        AC_TRY(ac_config_int(c, obj, where, "max_source_positions", &g->n_ctx));
    AC_TRY(ac_config_int(c, obj, where, "d_model", &g->d));
    AC_TRY(ac_config_int(c, obj, where, "encoder_attention_heads", &g->heads));
    AC_TRY(ac_config_int(c, obj, where, "encoder_layers", &g->layers));
    AC_TRY(ac_config_int(c, obj, where, "encoder_ffn_dim", &g->ffn));
    if (cJSON_GetObjectItemCaseSensitive(o, "activation_function"))
        AC_TRY(ac_config_string(c, obj, where, "activation_function", &act));
    if (act && strcmp(act, "gelu") != 0)
        return ac_error(AC_ERR_UNSUPPORTED, "%s: activation_function '%s' is not supported (gelu)", c->file, act);
    return check(c, where, keys, g);
}

ac_status whisper_config_parse_hf(const ac_config *c, const cJSON *obj, const char *where, whisper_config *g)
{
    return parse_hf(c, obj, where, 0, g);
}

ac_status whisper_config_parse_rotary(const ac_config *c, const cJSON *obj, const char *where, float rope_theta,
                                      whisper_config *g)
{
    AC_TRY(parse_hf(c, obj, where, 1, g));
    AC_TRY(ac_config_int(c, obj, where, "encoder_rotary_dim", &g->rope_dim));
    const char *dot = where ? "." : "";
    where = where ? where : "";
    int dh = g->d / g->heads;
    if (g->rope_dim < 2 || g->rope_dim % 2 || g->rope_dim > dh)
        return ac_error(AC_ERR_MODEL, "%s: '%s%sencoder_rotary_dim' = %d must be even, from 2 to the head size %d "
                        "(d_model %d / encoder_attention_heads %d)", c->file, where, dot, g->rope_dim, dh, g->d,
                        g->heads);
    if (!(rope_theta > 0))
        return ac_error(AC_ERR_MODEL, "%s: the encoder's rope_theta %g must be positive", c->file, rope_theta);
    g->rope_theta = rope_theta;
    return AC_OK;
}
