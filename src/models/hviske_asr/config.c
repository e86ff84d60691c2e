/* config.json and generation_config.json of a cohere_asr package. Keys
 * that fix the architecture are required; keys with an upstream default
 * or that can be derived (vocab_size, min_energy_window_samples, ...) are
 * not. Keys of the real package that inference does not use are known and
 * ignored; others get a warning. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "io/config.h"
#include "models/hviske_asr/budget.h"
#include "models/hviske_asr/model.h"

static const char *const root_keys[] = {
    "sample_rate", "use_loss_mask_for_prompt", "log_prediction", "log_batch_stats", "prompt_format",
    "prompt_defaults", "multitask_metrics_cfg", "model_defaults", "preprocessor", "encoder",
    "transf_encoder", "transf_decoder", "head", "decoding", "model_type", "architectures",
    "is_encoder_decoder", "max_seq_len", "max_audio_clip_s", "overlap_chunk_second",
    "supported_languages", "batch_size", "vocab_size", "min_energy_window_samples", "auto_map",
    "torch_dtype", "transformers_version", "_name_or_path", NULL};

static ac_status get_obj(const ac_config *c, const cJSON *parent, const char *key, const cJSON **out)
{
    *out = cJSON_GetObjectItemCaseSensitive(parent ? parent : c->root, key);
    if (!cJSON_IsObject(*out)) return ac_error(AC_ERR_MODEL, "%s: missing object '%s'", c->file, key);
    return AC_OK;
}

/* A number that may be written as 5 or 5.0. */
static ac_status get_number_opt(const ac_config *c, const cJSON *obj, const char *where, const char *key,
                                double def, double *out)
{
    if (!cJSON_GetObjectItemCaseSensitive(obj ? obj : c->root, key)) {
        *out = def;
        return AC_OK;
    }
    return ac_config_double(c, obj, where, key, out);
}

static ac_status positive(const ac_config *c, const char *key, int v, int max)
{
    if (v < 1 || v > max) return ac_error(AC_ERR_MODEL, "%s: '%s' = %d is out of range 1..%d", c->file, key, v, max);
    return AC_OK;
}

static ac_status parse(const ac_config *c, hviske_config *g)
{
    const char *type;
    AC_TRY(ac_config_string(c, NULL, NULL, "model_type", &type));
    if (!type || strcmp(type, "cohere_asr") != 0)
        return ac_error(AC_ERR_MODEL, "%s: model_type '%s' is not cohere_asr", c->file, type ? type : "null");
    ac_config_warn_unknown(c, NULL, NULL, root_keys);

    const cJSON *pre, *enc, *dec, *dcfg, *head;
    AC_TRY(get_obj(c, NULL, "preprocessor", &pre));
    AC_TRY(get_obj(c, NULL, "encoder", &enc));
    AC_TRY(get_obj(c, NULL, "transf_decoder", &dec));
    AC_TRY(get_obj(c, dec, "config_dict", &dcfg));
    double win_s, hop_s;
    AC_TRY(ac_config_int_opt(c, pre, "preprocessor", "sample_rate", 16000, &g->sample_rate));
    AC_TRY(ac_config_int(c, pre, "preprocessor", "features", &g->n_mels));
    AC_TRY(ac_config_int(c, pre, "preprocessor", "n_fft", &g->n_fft));
    AC_TRY(ac_config_double(c, pre, "preprocessor", "window_size", &win_s));
    AC_TRY(ac_config_double(c, pre, "preprocessor", "window_stride", &hop_s));
    AC_TRY(ac_config_int_opt(c, pre, "preprocessor", "pad_to", 0, &g->pad_to));
    AC_TRY(get_number_opt(c, pre, "preprocessor", "dither", 1e-5, &g->dither));
    const char *norm = "per_feature";
    if (cJSON_GetObjectItemCaseSensitive(pre, "normalize"))
        AC_TRY(ac_config_string(c, pre, "preprocessor", "normalize", &norm));
    if (!norm || strcmp(norm, "per_feature") != 0)
        return ac_error(AC_ERR_UNSUPPORTED, "%s: preprocessor.normalize '%s' is not supported (per_feature)",
                        c->file, norm ? norm : "null");

    int feat_in;
    AC_TRY(ac_config_int(c, enc, "encoder", "feat_in", &feat_in));
    AC_TRY(ac_config_int(c, enc, "encoder", "d_model", &g->d_model));
    AC_TRY(ac_config_int(c, enc, "encoder", "n_layers", &g->n_layers));
    AC_TRY(ac_config_int(c, enc, "encoder", "n_heads", &g->n_heads));
    int ff_mult;
    AC_TRY(ac_config_int(c, enc, "encoder", "ff_expansion_factor", &ff_mult));
    AC_TRY(ac_config_int(c, enc, "encoder", "conv_kernel_size", &g->conv_kernel));
    AC_TRY(ac_config_int(c, enc, "encoder", "subsampling_conv_channels", &g->sub_channels));
    AC_TRY(ac_config_int_opt(c, enc, "encoder", "subsampling_factor", 8, &g->sub_factor));
    AC_TRY(ac_config_int_opt(c, enc, "encoder", "pos_emb_max_len", 5000, &g->pos_max));

    AC_TRY(ac_config_int(c, dcfg, "transf_decoder.config_dict", "hidden_size", &g->dec_dim));
    AC_TRY(ac_config_int(c, dcfg, "transf_decoder.config_dict", "inner_size", &g->dec_inner));
    AC_TRY(ac_config_int(c, dcfg, "transf_decoder.config_dict", "num_layers", &g->dec_layers));
    AC_TRY(ac_config_int(c, dcfg, "transf_decoder.config_dict", "num_attention_heads", &g->dec_heads));
    AC_TRY(ac_config_int(c, dcfg, "transf_decoder.config_dict", "max_sequence_length", &g->max_seq));

    g->log_softmax = 1;
    g->vocab = 0;
    if (cJSON_IsObject(head = cJSON_GetObjectItemCaseSensitive(c->root, "head"))) {
        if (cJSON_GetObjectItemCaseSensitive(head, "log_softmax"))
            AC_TRY(ac_config_bool(c, head, "head", "log_softmax", &g->log_softmax));
        AC_TRY(ac_config_int_opt(c, head, "head", "num_classes", 0, &g->vocab));
    }
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(c->root, "vocab_size")))
        AC_TRY(ac_config_int(c, NULL, NULL, "vocab_size", &g->vocab));
    AC_TRY(get_number_opt(c, NULL, NULL, "max_audio_clip_s", 35, &g->max_clip_s));
    AC_TRY(get_number_opt(c, NULL, NULL, "overlap_chunk_second", 5, &g->overlap_s));
    AC_TRY(ac_config_int_opt(c, NULL, NULL, "min_energy_window_samples", 1600, &g->energy_window));

    const cJSON *langs = cJSON_GetObjectItemCaseSensitive(c->root, "supported_languages");
    g->n_languages = 0;
    if (langs) {
        if (!cJSON_IsArray(langs))
            return ac_error(AC_ERR_MODEL, "%s: 'supported_languages' must be an array", c->file);
        for (const cJSON *l = langs->child; l; l = l->next) {
            if (!cJSON_IsString(l) || strlen(l->valuestring) >= sizeof g->languages[0] ||
                g->n_languages == HVISKE_MAX_LANGS)
                return ac_error(AC_ERR_MODEL, "%s: 'supported_languages' holds a bad entry", c->file);
            snprintf(g->languages[g->n_languages++], sizeof g->languages[0], "%s", l->valuestring);
        }
    }

    /* derived values and the limits of what this implementation runs */
    g->win = (int)lround(win_s * g->sample_rate);
    g->hop = (int)lround(hop_s * g->sample_rate);
    g->ff_dim = ff_mult * g->d_model;
    AC_TRY(positive(c, "preprocessor.features", g->n_mels, 1024));
    AC_TRY(positive(c, "encoder.d_model", g->d_model, 16384));
    AC_TRY(positive(c, "encoder.n_layers", g->n_layers, 1024));
    AC_TRY(positive(c, "encoder.n_heads", g->n_heads, 1024));
    AC_TRY(positive(c, "encoder.ff_expansion_factor", ff_mult, 64));
    AC_TRY(positive(c, "encoder.subsampling_conv_channels", g->sub_channels, 16384));
    AC_TRY(positive(c, "encoder.pos_emb_max_len", g->pos_max, 1 << 20));
    AC_TRY(positive(c, "transf_decoder.config_dict.hidden_size", g->dec_dim, 16384));
    AC_TRY(positive(c, "transf_decoder.config_dict.inner_size", g->dec_inner, 1 << 20));
    AC_TRY(positive(c, "transf_decoder.config_dict.num_layers", g->dec_layers, 1024));
    AC_TRY(positive(c, "transf_decoder.config_dict.num_attention_heads", g->dec_heads, 1024));
    AC_TRY(positive(c, "transf_decoder.config_dict.max_sequence_length", g->max_seq, 1 << 20));
    if (g->sample_rate != 16000)
        return ac_error(AC_ERR_UNSUPPORTED, "%s: sample_rate %d (only 16000 is supported)", c->file, g->sample_rate);
    if (g->n_fft < 2 || g->n_fft % 2 || g->n_fft > 65536 || g->win < 1 || g->win > g->n_fft || g->hop < 1)
        return ac_error(AC_ERR_MODEL, "%s: preprocessor n_fft %d / window %d / hop %d do not fit", c->file,
                        g->n_fft, g->win, g->hop);
    if (feat_in != g->n_mels)
        return ac_error(AC_ERR_MODEL, "%s: encoder.feat_in %d differs from preprocessor.features %d", c->file,
                        feat_in, g->n_mels);
    if (g->sub_factor != 8)
        return ac_error(AC_ERR_UNSUPPORTED, "%s: encoder.subsampling_factor %d (only 8 is supported)", c->file,
                        g->sub_factor);
    if (g->d_model % g->n_heads || g->dec_dim % g->dec_heads)
        return ac_error(AC_ERR_MODEL, "%s: model widths must be multiples of the head counts", c->file);
    if (g->conv_kernel < 1 || g->conv_kernel % 2 == 0 || g->conv_kernel > 255)
        return ac_error(AC_ERR_MODEL, "%s: encoder.conv_kernel_size %d must be odd", c->file, g->conv_kernel);
    if (g->pad_to < 0 || g->pad_to > 4096)
        return ac_error(AC_ERR_MODEL, "%s: preprocessor.pad_to %d is out of range", c->file, g->pad_to);
    if (!(g->max_clip_s > 0 && g->max_clip_s < 3600 && g->overlap_s >= 0 && g->overlap_s < g->max_clip_s))
        return ac_error(AC_ERR_MODEL, "%s: max_audio_clip_s / overlap_chunk_second do not fit", c->file);
    if (g->energy_window < 1)
        return ac_error(AC_ERR_MODEL, "%s: min_energy_window_samples must be positive", c->file);
    if (!(g->dither >= 0 && g->dither < 1))
        return ac_error(AC_ERR_MODEL, "%s: preprocessor.dither %g is out of range", c->file, g->dither);
    /* a full chunk must fit the scratch bound (the decoder's share, which
     * depends on the request, is checked per chunk) */
    double need = hviske_chunk_bytes(g, llround(g->max_clip_s * g->sample_rate), 1, 1);
    if (need > HVISKE_MAX_CHUNK_BYTES)
        return ac_error(AC_ERR_MODEL, "%s: max_audio_clip_s %g makes chunks that need %.1f GB of scratch each "
                        "(limit %.0f GB)", c->file, g->max_clip_s, need / (1 << 30), HVISKE_MAX_CHUNK_BYTES / (1 << 30));
    return AC_OK;
}

static ac_status parse_generation(const ac_config *c, hviske_config *g)
{
    AC_TRY(ac_config_int_opt(c, NULL, NULL, "eos_token_id", -1, &g->eos));
    AC_TRY(ac_config_int_opt(c, NULL, NULL, "decoder_start_token_id", -1, &g->decoder_start));
    return AC_OK;
}

ac_status hviske_config_parse(const char *text, size_t len, const char *gen_text, size_t gen_len,
                              const char *where, hviske_config *cfg)
{
    char name[4200];
    ac_config *c;
    memset(cfg, 0, sizeof *cfg);
    snprintf(name, sizeof name, "%s/config.json", where);
    AC_TRY(ac_config_parse(text, len, name, &c));
    ac_status s = parse(c, cfg);
    ac_config_free(c);
    AC_TRY(s);
    /* generation_config.json is optional: the tokenizer supplies the ids */
    cfg->eos = cfg->decoder_start = -1;
    if (!gen_text) return AC_OK;
    snprintf(name, sizeof name, "%s/generation_config.json", where);
    AC_TRY(ac_config_parse(gen_text, gen_len, name, &c));
    s = parse_generation(c, cfg);
    ac_config_free(c);
    return s;
}

int hviske_language(const hviske_config *cfg, const char *code)
{
    for (int i = 0; i < cfg->n_languages; i++)
        if (strcmp(cfg->languages[i], code) == 0) return i;
    return -1;
}
