/* Loading the encoder from any of its three forms (spec vevo2.md §2.0):
 * the form decides the dims' source and the tensor names; every tensor of
 * §4.1 is checked against the shape the dims imply. Matrices stay in their
 * stored type; the conv kernels are rearranged once into f32. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/mem.h"
#include "models/whisper/whisper.h"
#include "tensor/kernels.h"

#define PATH_MAX_LEN 4200

/* The Hugging Face names of the OpenAI ones the loader asks for (under
 * the namespace "model." in a Hugging Face folder). */
#define HF_BLOCK(oa, hf) {"encoder.blocks.%d." oa, "encoder.layers.%d." hf}
static const ac_weight_name hf_names[] = {
    {"encoder.conv1.weight", "encoder.conv1.weight"},
    {"encoder.conv1.bias", "encoder.conv1.bias"},
    {"encoder.conv2.weight", "encoder.conv2.weight"},
    {"encoder.conv2.bias", "encoder.conv2.bias"},
    {"encoder.positional_embedding", "encoder.embed_positions.weight"},
    HF_BLOCK("attn_ln.weight", "self_attn_layer_norm.weight"),
    HF_BLOCK("attn_ln.bias", "self_attn_layer_norm.bias"),
    HF_BLOCK("attn.query.weight", "self_attn.q_proj.weight"),
    HF_BLOCK("attn.query.bias", "self_attn.q_proj.bias"),
    HF_BLOCK("attn.key.weight", "self_attn.k_proj.weight"),
    HF_BLOCK("attn.value.weight", "self_attn.v_proj.weight"),
    HF_BLOCK("attn.value.bias", "self_attn.v_proj.bias"),
    HF_BLOCK("attn.out.weight", "self_attn.out_proj.weight"),
    HF_BLOCK("attn.out.bias", "self_attn.out_proj.bias"),
    HF_BLOCK("mlp_ln.weight", "final_layer_norm.weight"),
    HF_BLOCK("mlp_ln.bias", "final_layer_norm.bias"),
    HF_BLOCK("mlp.0.weight", "fc1.weight"),
    HF_BLOCK("mlp.0.bias", "fc1.bias"),
    HF_BLOCK("mlp.2.weight", "fc2.weight"),
    HF_BLOCK("mlp.2.bias", "fc2.bias"),
    {"encoder.ln_post.weight", "encoder.layer_norm.weight"},
    {"encoder.ln_post.bias", "encoder.layer_norm.bias"},
};

static ac_status load_block(whisper_encoder *m, int i)
{
    whisper_block *B = &m->block[i];
    ac_weights *w = m->weights;
    int D = m->cfg.d, F = m->cfg.ffn;
    AC_TRY(ac_weights_norm(w, D, &B->attn_ln_w, &B->attn_ln_b, "encoder.blocks.%d.attn_ln", i));
    AC_TRY(ac_weights_linear(w, D, D, &B->wq, &B->bq, "encoder.blocks.%d.attn.query", i));
    AC_TRY(ac_weights_linear(w, D, D, &B->wk, NULL, "encoder.blocks.%d.attn.key", i));
    AC_TRY(ac_weights_linear(w, D, D, &B->wv, &B->bv, "encoder.blocks.%d.attn.value", i));
    AC_TRY(ac_weights_linear(w, D, D, &B->wo, &B->bo, "encoder.blocks.%d.attn.out", i));
    AC_TRY(ac_weights_norm(w, D, &B->mlp_ln_w, &B->mlp_ln_b, "encoder.blocks.%d.mlp_ln", i));
    AC_TRY(ac_weights_linear(w, F, D, &B->fc1, &B->b_fc1, "encoder.blocks.%d.mlp.0", i));
    return ac_weights_linear(w, D, F, &B->fc2, &B->b_fc2, "encoder.blocks.%d.mlp.2", i);
}

/* Conv1d weights [cout][cin][3] are used in place by ac_conv1d_mat. */
static ac_status load_weights(whisper_encoder *m, const char *ns)
{
    const whisper_config *c = &m->cfg;
    ac_weights *w = m->weights;
    if (c->names == WHISPER_NAMES_HF) AC_TRY(ac_weights_set_names(w, hf_names, sizeof hf_names / sizeof *hf_names));
    AC_TRY(ac_weights_set_namespace(w, ns));
    /* the rule: the stem's small convolution keeps its precision, the rest at least 16 bits */
    ac_weights_keep(w, AC_KEEP_STORED);
    AC_TRY(ac_weights_mat(w, AC_SHAPE(c->d, c->n_mels, 3), &m->conv1_w, "encoder.conv1.weight"));
    ac_weights_keep(w, AC_KEEP_16);
    AC_TRY(ac_weights_vec(w, c->d, &m->conv1_b, "encoder.conv1.bias"));
    AC_TRY(ac_weights_mat(w, AC_SHAPE(c->d, c->d, 3), &m->conv2_w, "encoder.conv2.weight"));
    AC_TRY(ac_weights_vec(w, c->d, &m->conv2_b, "encoder.conv2.bias"));
    if (!c->rope_dim) AC_TRY(ac_weights_f32(w, AC_SHAPE(c->n_ctx, c->d), &m->pos, "encoder.positional_embedding"));
    m->block = ac_calloc((size_t)c->layers, sizeof *m->block);
    if (!m->block) return AC_ERR_NOMEM;
    for (int i = 0; i < c->layers; i++) AC_TRY(load_block(m, i));
    return ac_weights_norm(w, c->d, &m->ln_post_w, &m->ln_post_b, "encoder.ln_post");
}

/* The front end's constants: the window and the Slaney filterbank for n_mels. */
static ac_status load_frontend(whisper_encoder *m)
{
    int bins = WHISPER_N_FFT / 2 + 1;
    ac_hann(WHISPER_N_FFT, 1, m->window);
    m->mel_fb = ac_calloc((size_t)m->cfg.n_mels * (size_t)bins, sizeof *m->mel_fb);
    if (!m->mel_fb) return AC_ERR_NOMEM;
    ac_mel_slaney(m->cfg.n_mels, WHISPER_N_FFT, WHISPER_RATE, 0, WHISPER_RATE / 2, m->mel_fb);
    return ac_melbank_init(&m->mel, m->mel_fb, m->cfg.n_mels, bins);
}

/* Takes W (freed on error) when OWNS; its names are read under NS, its
 * namespace left cleared and its keep rule as it was. */
static ac_status finish(ac_weights *w, int owns, const char *ns, const whisper_config *cfg, whisper_encoder **out)
{
    whisper_encoder *m = ac_calloc(1, sizeof *m);
    if (!m) {
        if (owns) ac_weights_free(w);
        return AC_ERR_NOMEM;
    }
    m->cfg = *cfg;
    m->weights = w;
    m->owns_weights = owns;
    int keep = ac_weights_keep(w, 0);
    ac_status s = load_weights(m, ns);
    ac_weights_keep(w, keep);
    ac_weights_set_names(w, NULL, 0);
    ac_weights_set_namespace(w, "");
    if (!s) s = load_frontend(m);
    if (s) {
        whisper_encoder_free(m);
        return s;
    }
    *out = m;
    return AC_OK;
}

/* config.json of the safetensors forms: OpenAI dims under "audio_encoder"
 * (the port's file) or Hugging Face's WhisperConfig. Frees C. */
static ac_status parse_config(ac_config *c, whisper_config *cfg)
{
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(c->root, "audio_encoder");
    ac_status s;
    if (dims) {
        s = ac_config_object(c, NULL, NULL, "audio_encoder", &dims);
        if (!s) s = whisper_config_parse(c, dims, "audio_encoder", cfg);
    } else if (cJSON_GetObjectItemCaseSensitive(c->root, "d_model")) {
        s = whisper_config_parse_hf(c, NULL, NULL, cfg);
    } else {
        s = ac_error(AC_ERR_MODEL, "%s: neither 'audio_encoder' (OpenAI dims) nor 'd_model' (Hugging Face WhisperConfig)",
                     c->file);
    }
    ac_config_free(c);
    return s;
}

static ac_status read_config(const char *path, whisper_config *cfg)
{
    ac_config *c;
    AC_TRY(ac_config_load_relaxed(path, &c));
    return parse_config(c, cfg);
}

ac_status whisper_encoder_load_from(ac_weights *w, ac_config *config, whisper_encoder **out)
{
    *out = NULL;
    whisper_config cfg;
    ac_status s = parse_config(config, &cfg);
    if (s) {
        ac_weights_free(w);
        return s;
    }
    /* the part's namespace, then a Hugging Face folder's own */
    char ns[sizeof w->ns];
    snprintf(ns, sizeof ns, "%s%s", w->ns, cfg.names == WHISPER_NAMES_HF ? "model." : "");
    return finish(w, 1, ns, &cfg, out);
}

/* A torch.save file carries its dims; safetensors take config.json from
 * the same folder. */
static ac_status load_file(const char *path, ac_weight_type type, whisper_encoder **out)
{
    ac_weights *w;
    whisper_config cfg;
    AC_TRY(ac_weights_open_as(path, type, &w));
    const ac_config *v = ac_weights_values(w);
    ac_status s;
    /* OpenAI's medium.pt carries its dims beside model_state_dict; Hugging
     * Face's pytorch_model.bin, a bare state dict, takes config.json as
     * safetensors do */
    if (v && (cJSON_GetObjectItemCaseSensitive(v->root, "dims") ||
              cJSON_GetObjectItemCaseSensitive(v->root, "model_state_dict"))) {
        const cJSON *dims;
        s = ac_config_object(v, NULL, NULL, "dims", &dims);
        if (!s) s = whisper_config_parse(v, dims, "dims", &cfg);
    } else {
        char p[PATH_MAX_LEN];
        const char *slash = strrchr(path, '/');
        int dir = slash ? (int)(slash - path) : 1;
        snprintf(p, sizeof p, "%.*s/config.json", dir, slash ? path : ".");
        s = read_config(p, &cfg);
    }
    if (s) {
        ac_weights_free(w);
        return s;
    }
    return finish(w, 1, cfg.names == WHISPER_NAMES_HF ? "model." : "", &cfg, out);
}

ac_status whisper_encoder_shared(ac_weights *w, const whisper_config *cfg, const char *ns, whisper_encoder **out)
{
    *out = NULL;
    return finish(w, 0, ns, cfg, out);
}

/* The one .pt file of folder DIR into P (the folder has no model.safetensors
 * and no pytorch_model.bin). */
static ac_status find_torch_file(const char *dir, char *p, size_t size)
{
    DIR *d = opendir(dir);
    if (!d) return ac_error(AC_ERR_IO, "%s: cannot open the folder (%s)", dir, strerror(errno));
    int found = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".pt") != 0) continue;
        if (found++ == 0) snprintf(p, size, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (found == 1) return AC_OK;
    if (found)
        return ac_error(AC_ERR_MODEL, "%s: no model.safetensors, no pytorch_model.bin and %d .pt files (name one)", dir,
                        found);
    return ac_error(AC_ERR_MODEL, "%s: no model.safetensors, no pytorch_model.bin and no .pt file", dir);
}

ac_status whisper_encoder_load(const char *path, ac_weight_type type, whisper_encoder **out)
{
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb) != 0) return ac_error(AC_ERR_IO, "%s: cannot open (%s)", path, strerror(errno));
    if (!S_ISDIR(sb.st_mode)) return load_file(path, type, out);
    char p[PATH_MAX_LEN];
    snprintf(p, sizeof p, "%s/model.safetensors", path);
    if (stat(p, &sb) != 0) snprintf(p, sizeof p, "%s/pytorch_model.bin", path);
    if (stat(p, &sb) != 0) AC_TRY(find_torch_file(path, p, sizeof p));
    return load_file(p, type, out);
}

void whisper_encoder_free(whisper_encoder *m)
{
    if (!m) return;
    ac_melbank_free(&m->mel);
    free(m->mel_fb);
    free(m->block);
    if (m->owns_weights) ac_weights_free(m->weights);
    free(m);
}
