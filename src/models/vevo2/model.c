/* Loading a Vevo2 package: the configs at once, checked against each other;
 * the weights of the conversion when it first runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"
#include "models/vevo2/vevo2.h"

/* The FM config.json: its preprocess block (the mel both the FM and the
 * timbre prompt use), model.flow_matching_transformer, and model.coco, the
 * content-style tokenizer upstream builds from it. */
static ac_status read_fm_config(vevo2_model *m)
{
    ac_config *c;
    AC_TRY(vevo2_read_config(&m->paths, VEVO2_FILE_FM_CONFIG, m->paths.fm_config, &c));
    const cJSON *pre, *model, *fmt, *coco;
    ac_status s = ac_config_object(c, NULL, NULL, "preprocess", &pre);
    if (!s) s = vevo2_mel_config_parse(c, pre, "preprocess", &m->mel);
    if (!s) s = ac_config_object(c, NULL, NULL, "model", &model);
    if (!s) s = ac_config_object(c, model, "model", "flow_matching_transformer", &fmt);
    if (!s) s = vevo2_fm_config_parse(c, fmt, "model.flow_matching_transformer", &m->fm_cfg);
    if (!s) s = ac_config_object(c, model, "model", "coco", &coco);
    if (!s) s = vevo2_coco_config_parse(c, coco, "model.coco", &m->content_cfg);
    if (!s && m->content_cfg.type != VEVO2_COCO_CONTENT_STYLE)
        s = ac_error(AC_ERR_MODEL, "%s: model.coco.coco_type must be \"content_style\"", c->file);
    if (!s && m->fm_cfg.cond_codebook != m->content_cfg.codebook_size)
        s = ac_error(AC_ERR_MODEL,
                     "%s: model.flow_matching_transformer.cond_codebook_size %d is not model.coco.codebook_size %d",
                     c->file, m->fm_cfg.cond_codebook, m->content_cfg.codebook_size);
    if (!s && m->fm_cfg.mel_dim != m->mel.n_mels)
        s = ac_error(AC_ERR_MODEL, "%s: model.flow_matching_transformer.mel_dim %d is not preprocess.num_mels %d",
                     c->file, m->fm_cfg.mel_dim, m->mel.n_mels);
    if (!s && m->fm_cfg.cond_scale_factor != m->content_cfg.downsample_rate)
        s = ac_error(AC_ERR_MODEL,
                     "%s: model.flow_matching_transformer.cond_scale_factor %d is not model.coco.downsample_rate %d",
                     c->file, m->fm_cfg.cond_scale_factor, m->content_cfg.downsample_rate);
    ac_config_free(c);
    return s;
}

/* vocoder/config.json: model.vocos, whose mel must be the FM's. */
static ac_status read_vocoder_config(vevo2_model *m)
{
    ac_config *c;
    AC_TRY(vevo2_read_config(&m->paths, VEVO2_FILE_VOCODER_CONFIG, m->paths.vocoder_config, &c));
    const cJSON *model, *vocos;
    ac_status s = ac_config_object(c, NULL, NULL, "model", &model);
    if (!s) s = ac_config_object(c, model, "model", "vocos", &vocos);
    if (!s) s = vevo2_vocoder_config_parse(c, vocos, "model.vocos", &m->vocoder_cfg);
    const vevo2_vocoder_config *v = &m->vocoder_cfg;
    if (!s && (v->input_channels != m->mel.n_mels || v->hop != m->mel.hop))
        s = ac_error(AC_ERR_MODEL,
                     "%s: model.vocos takes %d mels at hop %d; the flow matching makes %d mels at hop %d (%s)",
                     c->file, v->input_channels, v->hop, m->mel.n_mels, m->mel.hop, m->paths.fm_config);
    ac_config_free(c);
    return s;
}

ac_status vevo2_load(const char *dir, const char *whisper, vevo2_model **out)
{
    *out = NULL;
    vevo2_model *m = ac_calloc(1, sizeof *m);
    if (!m) return AC_ERR_NOMEM;
    pthread_mutex_init(&m->lock, NULL);
    ac_status s = vevo2_paths_find(dir, whisper, &m->paths);
    if (!s) s = read_fm_config(m);
    if (!s) s = read_vocoder_config(m);
    if (!s && m->mel.hop * m->content_cfg.downsample_rate <= 0)
        s = ac_error(AC_ERR_MODEL, "%s: bad hop size", m->paths.fm_config);
    if (!s) s = ac_sinc_resampler_init(&m->to_whisper, m->mel.sample_rate, VEVO2_WHISPER_RATE);
    if (!s) s = vevo2_timbre_mel_init(&m->mel, &m->timbre);
    if (s) {
        vevo2_free(m);
        return s;
    }
    *out = m;
    return AC_OK;
}

void vevo2_free(vevo2_model *m)
{
    if (!m) return;
    whisper_encoder_free(m->whisper);
    whisper_stats_free(m->stats);
    vevo2_coco_free(m->content);
    vevo2_fm_free(m->fm);
    vevo2_vocoder_free(m->vocoder);
    vevo2_coco_free(m->prosody);
    ac_bpe_free(m->text);
    qwen2_free(m->ar);
    vevo2_timbre_mel_free(&m->timbre);
    ac_sinc_resampler_free(&m->to_whisper);
    vevo2_paths_close(&m->paths);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

/* A part's weights (its file, or its namespace of a GGUF package), its
 * matrices held in the type the model was asked for. */
static ac_status open_part(vevo2_model *m, vevo2_part part, const char *path, ac_weights **out)
{
    AC_TRY(vevo2_open_part(&m->paths, part, path, out));
    ac_status s = ac_weights_set_type(*out, m->weights);
    if (s) ac_weights_free(*out);
    return s;
}

/* The Whisper encoder: the one the user named, else a GGUF package's own,
 * else found in or beside the package or in openai-whisper's cache. */
static ac_status load_whisper(vevo2_model *m)
{
    vevo2_paths *p = &m->paths;
    if (!p->whisper[0] && p->gguf_file && vevo2_has_part(p, VEVO2_PART_WHISPER)) {
        snprintf(p->whisper, sizeof p->whisper, "%s (%s)", p->gguf, p->ns[VEVO2_PART_WHISPER]);
        p->whisper_in_gguf = 1;
        ac_config *c;
        AC_TRY(vevo2_read_config(p, VEVO2_FILE_WHISPER_CONFIG, NULL, &c));
        ac_weights *w;
        ac_status s = open_part(m, VEVO2_PART_WHISPER, NULL, &w);
        if (s) {
            ac_config_free(c);
            return s;
        }
        return whisper_encoder_load_from(w, c, &m->whisper);
    }
    AC_TRY(vevo2_find_whisper(p));
    return whisper_encoder_load(p->whisper, m->weights, &m->whisper);
}

/* The parts of a conversion, each checked against the others. */
static ac_status load_parts(vevo2_model *m)
{
    vevo2_paths *p = &m->paths;
    ac_weights *w;
    if (!m->whisper) AC_TRY(load_whisper(m));
    const int d = m->whisper->cfg.d;
    if (m->content_cfg.whisper_dim != d)
        return ac_error(AC_ERR_MODEL, "%s: model.coco.whisper_dim %d, but the Whisper encoder %s has %d channels",
                        p->fm_config, m->content_cfg.whisper_dim, p->whisper, d);
    if (!m->stats) {
        AC_TRY(open_part(m, VEVO2_PART_STATS, p->whisper_stats, &w));
        AC_TRY(whisper_stats_load_from(w, d, &m->stats));
    }
    if (!m->content) {
        AC_TRY(open_part(m, VEVO2_PART_CONTENT_STYLE, p->content_style, &w));
        AC_TRY(vevo2_coco_load_from(w, &m->content_cfg, &m->content));
    }
    if (!m->fm) {
        AC_TRY(open_part(m, VEVO2_PART_FM, p->fm_weights, &w));
        AC_TRY(vevo2_fm_load_from(w, &m->fm_cfg, &m->fm));
    }
    if (!m->vocoder) {
        AC_TRY(open_part(m, VEVO2_PART_VOCODER, p->vocoder_weights, &w));
        AC_TRY(vevo2_vocoder_load_from(w, &m->vocoder_cfg, &m->vocoder));
    }
    return AC_OK;
}

static ac_status load_ar_parts(vevo2_model *m);

/* The conversion's parts, or with AR those of the AR routes, under the
 * model's lock unless the part each loads last is there. */
static ac_status load_once(vevo2_model *m, int ar)
{
    pthread_mutex_lock(&m->lock);
    ac_status s = ar ? (m->ar ? AC_OK : load_ar_parts(m)) : (m->vocoder ? AC_OK : load_parts(m));
    pthread_mutex_unlock(&m->lock);
    return s;
}

ac_status vevo2_load_conversion(vevo2_model *m) { return load_once(m, 0); }

/* amphion_config.json beside the AR model: model.coco_style, the prosody tokenizer. */
static ac_status read_prosody_config(vevo2_model *m)
{
    char path[VEVO2_PATH + 32];
    snprintf(path, sizeof path, "%s/amphion_config.json", m->paths.ar_dir);
    ac_config *c;
    AC_TRY(vevo2_read_config(&m->paths, VEVO2_FILE_AR_AMPHION, path, &c));
    const cJSON *model, *coco;
    ac_status s = ac_config_object(c, NULL, NULL, "model", &model);
    if (!s) s = ac_config_object(c, model, "model", "coco_style", &coco);
    if (!s) s = vevo2_coco_config_parse(c, coco, "model.coco_style", &m->prosody_cfg);
    if (!s && m->prosody_cfg.type != VEVO2_COCO_STYLE)
        s = ac_error(AC_ERR_MODEL, "%s: model.coco_style.coco_type must be \"style\"", c->file);
    if (!s && m->prosody_cfg.chroma_dim != m->content_cfg.chroma_dim)
        s = ac_error(AC_ERR_MODEL, "%s: model.coco_style.chromagram_dim %d is not the content-style tokenizer's %d",
                     c->file, m->prosody_cfg.chroma_dim, m->content_cfg.chroma_dim);
    ac_config_free(c);
    return s;
}

/* The id of TAG, which the tokenizer must read as that one token wherever
 * it stands in a prompt (an added token), below the AR model's VOCAB. */
static ac_status tag_id(const vevo2_model *m, const char *tag, int vocab, int *id)
{
    int *ids = NULL;
    size_t n = 0;
    AC_TRY(ac_bpe_encode(m->text, tag, strlen(tag), &ids, &n));
    int ok = n == 1 && ids[0] == ac_bpe_token_to_id(m->text, tag);
    *id = n ? ids[0] : -1;
    free(ids);
    if (!ok) return ac_error(AC_ERR_MODEL, "%s: the tokenizer has no added token %s", m->paths.ar_dir, tag);
    if (*id >= vocab)
        return ac_error(AC_ERR_MODEL, "%s: %s is id %d, outside the AR model's vocabulary of %d", m->paths.ar_dir,
                        tag, *id, vocab);
    return AC_OK;
}

static ac_status check_tags(vevo2_model *m, int vocab)
{
    static const char *const fixed[] = {"<|im_start|>", "<|im_end|>", "<|prosody_start|>", "<|prosody_end|>",
                                        "<|content_style_start|>"};
    int id;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) AC_TRY(tag_id(m, fixed[i], vocab, &id));
    AC_TRY(tag_id(m, "<|im_end|>", vocab, &m->im_end));
    const struct { const char *name; int n; } codes[] = {{"content_style", m->content_cfg.codebook_size},
                                                         {"prosody", m->prosody_cfg.codebook_size}};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < codes[k].n; i++) {
            char tag[64];
            snprintf(tag, sizeof tag, "<|%s_%d|>", codes[k].name, i);
            AC_TRY(tag_id(m, tag, vocab, &id));
        }
    return AC_OK;
}

/* The AR model: its folder, or a GGUF package's part with its embedded
 * config.json and (optional) generation_config.json. */
static ac_status load_qwen2(vevo2_model *m, qwen2_model **ar)
{
    vevo2_paths *p = &m->paths;
    if (!p->gguf_file) return qwen2_load(p->ar_dir, m->weights, ar);
    const ac_embedded_file *cfg = vevo2_embedded(p, VEVO2_FILE_AR_CONFIG);
    const ac_embedded_file *gen = vevo2_embedded(p, VEVO2_FILE_AR_GENERATION);
    if (!cfg)
        return ac_error(AC_ERR_MODEL, "%s: no embedded file '%s' (the AR model's config.json)", p->gguf,
                        p->file[VEVO2_FILE_AR_CONFIG]);
    ac_weights *w;
    AC_TRY(open_part(m, VEVO2_PART_AR, NULL, &w));
    return qwen2_load_from(w, cfg->data, cfg->size, gen ? gen->data : NULL, gen ? gen->size : 0, p->gguf, ar);
}

/* The AR tokenizer: the AR folder's files, or a GGUF package's embedded tokenizer.json. */
static ac_status load_text(vevo2_model *m)
{
    vevo2_paths *p = &m->paths;
    if (!p->gguf_file) return ac_bpe_load_dir(p->ar_dir, &m->text);
    const ac_embedded_file *e = vevo2_embedded(p, VEVO2_FILE_AR_TOKENIZER);
    if (!e)
        return ac_error(AC_ERR_MODEL, "%s: no embedded file '%s' (the AR tokenizer)", p->gguf,
                        p->file[VEVO2_FILE_AR_TOKENIZER]);
    char name[2 * VEVO2_PATH];
    snprintf(name, sizeof name, "%s in %s", p->file[VEVO2_FILE_AR_TOKENIZER], p->gguf);
    return ac_bpe_parse_json(e->data, e->size, name, &m->text);
}

static ac_status load_ar_parts(vevo2_model *m)
{
    vevo2_paths *p = &m->paths;
    if (!m->prosody) {
        AC_TRY(read_prosody_config(m));
        ac_weights *w;
        AC_TRY(open_part(m, VEVO2_PART_PROSODY, p->prosody, &w));
        AC_TRY(vevo2_coco_load_from(w, &m->prosody_cfg, &m->prosody));
    }
    if (!m->text) AC_TRY(load_text(m));
    qwen2_model *ar;
    AC_TRY(load_qwen2(m, &ar));
    ac_status s = check_tags(m, ar->cfg.vocab);
    if (s) {
        qwen2_free(ar);
        return s;
    }
    m->ar = ar;
    return AC_OK;
}

ac_status vevo2_load_ar(vevo2_model *m) { return load_once(m, 1); }
