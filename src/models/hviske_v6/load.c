/* Loading a Hviske v6 package: the published folder (config.json, the
 * tokenizer, model.safetensors) or the ggml runtime's single GGUF file
 * (the same files embedded, the tensors under the namespace "weights/").
 * The tokenizer's tokens must hold the ids the prompt and the stop need;
 * the tensors are read by the encoder (no namespace of their own), the
 * projector and the decoder ("llm."), each checked against the config. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/file.h"
#include "base/mem.h"
#include "models/hviske_v6/hviske_v6.h"

#define MAX_CONFIG (16u << 20)
#define PATH_LEN 4200

/* The tokenizer has the tokens config.json names: bos and eos, and each
 * style token as the token of its name (special or not: they are barred
 * from the search, so never decoded). TOK names the file in messages. */
static ac_status check_tokenizer(const hv6_model *m, const char *tok)
{
    const hv6_config *c = &m->cfg;
    const int ids[] = {c->bos, c->eos};
    const char *keys[] = {"bos_token_id", "eos_token_id"};
    for (int i = 0; i < 2; i++)
        if (!ac_bpe_token(m->tok, ids[i]))
            return ac_error(AC_ERR_MODEL, "%s: no token has id %d (config.json's %s)", tok, ids[i], keys[i]);
    for (int i = 0; i < HV6_N_STYLE; i++) {
        const char *t = ac_bpe_token(m->tok, c->style[i]);
        if (!t || strcmp(t, hv6_style_key(i)) != 0)
            return ac_error(AC_ERR_MODEL, "%s: id %d is %s%s%s, not the token '%s' of config.json's style_tokens",
                            tok, c->style[i], t ? "'" : "no token", t ? t : "", t ? "'" : "", hv6_style_key(i));
    }
    return AC_OK;
}

/* config.json and the tokenizer of folder DIR. */
static ac_status read_folder(hv6_model *m, const char *dir, char *tok, size_t n_tok)
{
    char p[PATH_LEN], *text;
    size_t n;
    snprintf(p, sizeof p, "%s/config.json", dir);
    AC_TRY(ac_read_file(p, MAX_CONFIG, &text, &n));
    ac_status s = hv6_config_parse(text, n, p, &m->cfg);
    free(text);
    AC_TRY(s);
    snprintf(tok, n_tok, "%s/tokenizer.json", dir);
    return ac_bpe_load_dir(dir, &m->tok);
}

/* An embedded file of the GGUF at PATH, required. */
static ac_status embedded(const hv6_model *m, const char *path, const char *name, const ac_embedded_file **out)
{
    *out = ac_weights_embedded(m->weights, name);
    if (!*out)
        return ac_error(AC_ERR_MODEL, "%s: no embedded file '%s' (a Hviske v6 GGUF embeds the package's config.json "
                        "and tokenizer.json)", path, name);
    return AC_OK;
}

/* config.json and tokenizer.json embedded in the GGUF at PATH. */
static ac_status read_gguf(hv6_model *m, const char *path, char *tok, size_t n_tok)
{
    const ac_embedded_file *cfg, *tj;
    AC_TRY(embedded(m, path, "config.json", &cfg));
    AC_TRY(embedded(m, path, "tokenizer.json", &tj));
    char name[PATH_LEN];
    snprintf(name, sizeof name, "config.json in %s", path);
    AC_TRY(hv6_config_parse(cfg->data, cfg->size, name, &m->cfg));
    snprintf(tok, n_tok, "tokenizer.json in %s", path);
    return ac_bpe_parse_json(tj->data, tj->size, tok, &m->tok);
}

/* The GGUF at PATH holds the package's tensors under HV6_GGUF_NS. */
static ac_status check_namespace(const hv6_model *m, const char *path)
{
    if (!ac_weights_find(m->weights, "%sproj.weight", HV6_GGUF_NS))
        return ac_error(AC_ERR_MODEL, "%s: no tensor '%sproj.weight' (a Hviske v6 GGUF holds the package's tensors "
                        "under the namespace '%s')", path, HV6_GGUF_NS, HV6_GGUF_NS);
    return AC_OK;
}

/* The tensors under the namespace NS ("" or HV6_GGUF_NS). */
static ac_status load_tensors(hv6_model *m, const char *ns)
{
    const hv6_config *c = &m->cfg;
    char dec_ns[64];
    snprintf(dec_ns, sizeof dec_ns, "%sllm.", ns);
    AC_TRY(whisper_encoder_shared(m->weights, &c->enc, ns, &m->enc));
    m->enc->attn_bf16 = 1; /* measured to keep every held figure; faster (docs/models/hviske_v6.md) */
    int S = c->stack * c->enc.d;
    AC_TRY(ac_weights_set_namespace(m->weights, ns));
    ac_status s = ac_weights_vec(m->weights, S, &m->norm, "norm.weight");
    if (!s) s = ac_weights_linear(m->weights, c->dec.hidden, S, &m->proj, NULL, "proj");
    ac_weights_set_namespace(m->weights, "");
    AC_TRY(s);
    return qwen2_load_shared(m->weights, &c->dec, dec_ns, &m->dec);
}

/* A folder, its model.safetensors (the folder is read), or a GGUF file. */
static ac_status load_all(hv6_model *m, const char *path, ac_weight_type type)
{
    struct stat sb;
    char dir[PATH_LEN], tok[PATH_LEN + 32];
    size_t n = strlen(path);
    int folder = stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
    int gguf = !folder && !(n >= 12 && strcmp(path + n - 12, ".safetensors") == 0);
    if (gguf) {
        snprintf(m->weights_path, sizeof m->weights_path, "%s", path);
        m->gguf = 1;
        AC_TRY(ac_weights_open_as(path, type, &m->weights));
        AC_TRY(read_gguf(m, path, tok, sizeof tok));
    } else {
        const char *slash = strrchr(path, '/');
        if (folder) snprintf(dir, sizeof dir, "%s", path);
        else snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
        AC_TRY(read_folder(m, dir, tok, sizeof tok));
        snprintf(m->weights_path, sizeof m->weights_path, "%s/model.safetensors", dir);
        AC_TRY(ac_weights_open_as(m->weights_path, type, &m->weights));
    }
    AC_TRY(check_tokenizer(m, tok));
    if (gguf) AC_TRY(check_namespace(m, path));
    return load_tensors(m, gguf ? HV6_GGUF_NS : "");
}

ac_status hv6_load(const char *path, ac_weight_type type, hv6_model **out)
{
    *out = NULL;
    hv6_model *m = ac_calloc(1, sizeof *m);
    if (!m) return AC_ERR_NOMEM;
    ac_status s = load_all(m, path, type);
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
