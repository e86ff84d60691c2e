/* Loading a Hviske v6 package folder: config.json, the tokenizer (whose
 * added tokens must hold the ids the prompt and the stop need), and
 * model.safetensors read by the encoder (no namespace), the projector and
 * the decoder (namespace "llm."), each tensor checked against the config. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "base/mem.h"
#include "models/hviske_v6/hviske_v6.h"

#define MAX_CONFIG (16u << 20)
#define PATH_LEN 4200

static ac_status read_config(const char *dir, hv6_config *cfg)
{
    char p[PATH_LEN], *text;
    size_t n;
    snprintf(p, sizeof p, "%s/config.json", dir);
    AC_TRY(ac_read_file(p, MAX_CONFIG, &text, &n));
    ac_status s = hv6_config_parse(text, n, p, cfg);
    free(text);
    return s;
}

/* The tokenizer has the tokens config.json names: bos and eos, and each
 * style token as the token of its name (special or not: they are barred
 * from the search, so never decoded). */
static ac_status check_tokenizer(const hv6_model *m, const char *dir)
{
    const hv6_config *c = &m->cfg;
    const int ids[] = {c->bos, c->eos};
    const char *keys[] = {"bos_token_id", "eos_token_id"};
    for (int i = 0; i < 2; i++)
        if (!ac_bpe_token(m->tok, ids[i]))
            return ac_error(AC_ERR_MODEL, "%s/tokenizer.json: no token has id %d (config.json's %s)", dir, ids[i],
                            keys[i]);
    for (int i = 0; i < HV6_N_STYLE; i++) {
        const char *t = ac_bpe_token(m->tok, c->style[i]);
        if (!t || strcmp(t, hv6_style_key(i)) != 0)
            return ac_error(AC_ERR_MODEL, "%s/tokenizer.json: id %d is %s%s%s, not the token '%s' of config.json's "
                            "style_tokens", dir, c->style[i], t ? "'" : "no token", t ? t : "", t ? "'" : "",
                            hv6_style_key(i));
    }
    return AC_OK;
}

static ac_status load_parts(hv6_model *m, const char *dir, ac_weight_type type)
{
    const hv6_config *c = &m->cfg;
    char p[PATH_LEN];
    AC_TRY(ac_bpe_load_dir(dir, &m->tok));
    AC_TRY(check_tokenizer(m, dir));
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    AC_TRY(ac_weights_open_as(p, type, &m->weights));
    AC_TRY(whisper_encoder_shared(m->weights, &c->enc, "", &m->enc));
    int S = c->stack * c->enc.d;
    AC_TRY(ac_weights_vec(m->weights, S, &m->norm, "norm.weight"));
    AC_TRY(ac_weights_linear(m->weights, c->dec.hidden, S, &m->proj, NULL, "proj"));
    return qwen2_load_shared(m->weights, &c->dec, "llm.", &m->dec);
}

ac_status hv6_load(const char *dir, ac_weight_type type, hv6_model **out)
{
    *out = NULL;
    hv6_model *m = ac_calloc(1, sizeof *m);
    if (!m) return AC_ERR_NOMEM;
    ac_status s = read_config(dir, &m->cfg);
    if (!s) s = load_parts(m, dir, type);
    if (s) {
        hv6_free(m);
        return s;
    }
    *out = m;
    return AC_OK;
}

void hv6_free(hv6_model *m)
{
    if (!m) return;
    qwen2_free(m->dec);
    whisper_encoder_free(m->enc);
    ac_weights_free(m->weights);
    ac_bpe_free(m->tok);
    free(m);
}
