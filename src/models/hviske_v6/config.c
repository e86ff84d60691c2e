/* config.json of a Hviske v6 package: the root (model_type "whisper_qwen",
 * the encoder's rope_theta, stack, the token ids, style_tokens) and its
 * "whisper" and "qwen" objects. Every dimension and id is read here; each
 * error names the file and the key. Unknown keys are ignored. */
#include <math.h>
#include <string.h>

#include "base/error.h"
#include "io/config.h"
#include "models/hviske_v6/hviske_v6.h"

static const char *const style_keys[HV6_N_STYLE] = {"<|cased|>", "<|nocase|>", "<|punc|>", "<|nopunc|>"};

static ac_status token_id(const ac_config *c, const cJSON *obj, const char *where, const char *key, int vocab, int *id)
{
    AC_TRY(ac_config_int(c, obj, where, key, id));
    if (*id < 0 || *id >= vocab)
        return ac_error(AC_ERR_MODEL, "%s: '%s%s%s' = %d is outside qwen.vocab_size %d", c->file, where ? where : "",
                        where ? "." : "", key, *id, vocab);
    return AC_OK;
}

static ac_status parse(const ac_config *c, hv6_config *g)
{
    const char *type;
    AC_TRY(ac_config_string(c, NULL, NULL, "model_type", &type));
    if (!type || strcmp(type, "whisper_qwen") != 0)
        return ac_error(AC_ERR_MODEL, "%s: 'model_type' '%s' is not whisper_qwen (Hviske v6)", c->file,
                        type ? type : "null");
    double theta;
    const cJSON *w, *q, *st;
    AC_TRY(ac_config_double(c, NULL, NULL, "rope_theta", &theta));
    AC_TRY(ac_config_object(c, NULL, NULL, "whisper", &w));
    AC_TRY(ac_config_object(c, NULL, NULL, "qwen", &q));
    AC_TRY(whisper_config_parse_rotary(c, w, "whisper", (float)theta, &g->enc));
    AC_TRY(qwen2_config_parse_obj(c, q, "qwen", "qwen3", &g->dec));
    if (!g->dec.qk_norm)
        return ac_error(AC_ERR_MODEL, "%s: 'qwen.model_type' is qwen2, but Hviske v6's decoder is Qwen3", c->file);
    g->dec.tied = 1; /* the head is the embedding, whatever the file says (docs/models/hviske_v6.md) */
    AC_TRY(ac_config_int(c, NULL, NULL, "stack", &g->stack));
    /* the shortest window (2 s) gives 100 encoder frames: at least one row */
    if (g->stack < 1 || g->stack > 100)
        return ac_error(AC_ERR_MODEL, "%s: 'stack' = %d must be from 1 to 100 (encoder frames per audio row)", c->file,
                        g->stack);
    int V = g->dec.vocab;
    AC_TRY(token_id(c, NULL, NULL, "bos_token_id", V, &g->bos));
    AC_TRY(token_id(c, NULL, NULL, "eos_token_id", V, &g->eos));
    g->pad = -1;
    if (cJSON_GetObjectItemCaseSensitive(c->root, "pad_token_id"))
        AC_TRY(token_id(c, NULL, NULL, "pad_token_id", V, &g->pad));
    AC_TRY(ac_config_object(c, NULL, NULL, "style_tokens", &st));
    for (int i = 0; i < HV6_N_STYLE; i++) AC_TRY(token_id(c, st, "style_tokens", style_keys[i], V, &g->style[i]));
    for (int i = 0; i < HV6_N_STYLE; i++)
        if (g->style[i] == g->eos || g->style[i] == g->bos)
            return ac_error(AC_ERR_MODEL, "%s: 'style_tokens.%s' = %d is also bos_token_id or eos_token_id", c->file,
                            style_keys[i], g->style[i]);
    return AC_OK;
}

ac_status hv6_config_parse(const char *text, size_t len, const char *file, hv6_config *cfg)
{
    ac_config *c;
    *cfg = (hv6_config){0};
    AC_TRY(ac_config_parse(text, len, file, &c));
    ac_status s = parse(c, cfg);
    ac_config_free(c);
    return s;
}

const char *hv6_style_key(int i) { return i >= 0 && i < HV6_N_STYLE ? style_keys[i] : NULL; }
