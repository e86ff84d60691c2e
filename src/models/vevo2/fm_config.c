/* The FM config.json (spec vevo2.md §2.1): the architecture keys of
 * model.flow_matching_transformer are required; cfg_scale (the training
 * condition-dropout rate, not a guidance scale), sigma, time_scheduler and
 * repa only matter for training. */
#include <stdio.h>

#include "base/error.h"
#include "models/vevo2/fm.h"

static const char *const known_keys[] = {
    "mel_dim", "hidden_size", "num_layers", "num_heads", "cond_codebook_size", "cond_scale_factor",
    "use_cond_code", "use_text_as_condition", "text_cond_codebook_size", "cfg_scale", "sigma",
    "time_scheduler", "repa", NULL};

static ac_status bool_opt(const ac_config *c, const cJSON *obj, const char *where, const char *key, int def,
                          int *out)
{
    *out = def;
    if (!cJSON_GetObjectItemCaseSensitive(obj, key)) return AC_OK;
    return ac_config_bool(c, obj, where, key, out);
}

ac_status vevo2_fm_config_parse(const ac_config *c, const cJSON *obj, const char *where, vevo2_fm_config *out)
{
    vevo2_fm_config g = {0};
    const char *keys[] = {"mel_dim", "hidden_size", "num_layers", "num_heads", "cond_codebook_size",
                          "cond_scale_factor"};
    int *vals[] = {&g.mel_dim, &g.hidden, &g.layers, &g.heads, &g.cond_codebook, &g.cond_scale_factor};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        AC_TRY(ac_config_int(c, obj, where, keys[i], vals[i]));
        if (*vals[i] < 1)
            return ac_error(AC_ERR_MODEL, "%s: %s.%s = %d must be positive", c->file, where, keys[i], *vals[i]);
    }
    if (g.hidden % g.heads || (g.hidden / g.heads) % 2)
        return ac_error(AC_ERR_MODEL, "%s: %s.num_heads %d must split hidden_size %d into even head sizes", c->file,
                        where, g.heads, g.hidden);
    if (g.cond_scale_factor != 4)
        return ac_error(AC_ERR_UNSUPPORTED, "%s: %s.cond_scale_factor %d is not supported (4: two 2x upsamplers)",
                        c->file, where, g.cond_scale_factor);
    int use_code;
    AC_TRY(bool_opt(c, obj, where, "use_cond_code", 1, &use_code));
    if (!use_code)
        return ac_error(AC_ERR_UNSUPPORTED, "%s: %s.use_cond_code false is not supported (conditions are ids)",
                        c->file, where);
    AC_TRY(bool_opt(c, obj, where, "use_text_as_condition", 0, &g.text_condition));
    ac_config_warn_unknown(c, obj, where, known_keys);
    *out = g;
    return AC_OK;
}

ac_status vevo2_fm_config_load(const char *path, vevo2_fm_config *out)
{
    ac_config *c;
    AC_TRY(ac_config_load_relaxed(path, &c));
    const cJSON *model, *fmt, *pre;
    int mels = 0;
    ac_status s = ac_config_object(c, NULL, NULL, "model", &model);
    if (!s) s = ac_config_object(c, model, "model", "flow_matching_transformer", &fmt);
    if (!s) s = vevo2_fm_config_parse(c, fmt, "model.flow_matching_transformer", out);
    if (!s) s = ac_config_object(c, NULL, NULL, "preprocess", &pre);
    if (!s) s = ac_config_int(c, pre, "preprocess", "num_mels", &mels);
    if (!s && mels != out->mel_dim)
        s = ac_error(AC_ERR_MODEL, "%s: preprocess.num_mels %d differs from model.flow_matching_transformer.mel_dim %d",
                     c->file, mels, out->mel_dim);
    ac_config_free(c);
    return s;
}
