/* Hviske ASR (Cohere Transcribe, model_type "cohere_asr"): a FastConformer
 * encoder and a Transformer decoder. The spec of the family is
 * docs/models/hviske_asr.md; this header is shared by the files of the
 * family (config, load, frontend, encoder, decoder, transcribe). */
#ifndef AC_MODELS_HVISKE_MODEL_H
#define AC_MODELS_HVISKE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "audio/mel.h"
#include "io/weights.h"
#include "tensor/mat.h"
#include "text/sentencepiece.h"

#define HVISKE_MAX_LANGS 256

typedef struct hviske_config {
    /* front end */
    int sample_rate, n_mels, n_fft, win, hop, pad_to;
    double dither;
    /* encoder */
    int d_model, n_layers, n_heads, ff_dim, conv_kernel, sub_channels, sub_factor, pos_max;
    /* decoder */
    int dec_dim, dec_inner, dec_layers, dec_heads, max_seq;
    int vocab;
    int log_softmax;
    /* long audio */
    double max_clip_s, overlap_s;
    int energy_window;
    /* tokens */
    int eos, decoder_start;
    char languages[HVISKE_MAX_LANGS][16];
    int n_languages;
} hviske_config;

/* Matrices (ac_mat) stay in the checkpoint's type, in place; vectors are f32. */
typedef struct {
    const float *ln_ff1_w, *ln_ff1_b, *ff1_b1, *ff1_b2;
    ac_mat ff1_w1, ff1_w2;
    const float *ln_att_w, *ln_att_b, *bq, *bk, *bv, *bo;
    ac_mat wq, wk, wv, wo, wpos;
    const float *pos_u, *pos_v;          /* [heads][d_head] */
    const float *ln_conv_w, *ln_conv_b, *pw1_b, *dw_b, *pw2_b;
    ac_mat pw1_w, pw2_w;
    float *dw_w;                         /* [kernel][d_model] */
    float *bn_scale, *bn_shift;
    const float *ln_ff2_w, *ln_ff2_b, *ff2_b1, *ff2_b2;
    ac_mat ff2_w1, ff2_w2;
    const float *ln_out_w, *ln_out_b;
} hviske_enc_layer;

typedef struct {
    const float *ln1_w, *ln1_b, *sq_b, *sk_b, *sv_b, *so_b;
    const float *ln2_w, *ln2_b, *cq_b, *ck_b, *cv_b, *co_b;
    const float *ln3_w, *ln3_b, *ff_in_b, *ff_out_b;
    ac_mat sq_w, sk_w, sv_w, so_w, cq_w, ck_w, cv_w, co_w, ff_in_w, ff_out_w;
} hviske_dec_layer;

typedef struct hviske_model {
    hviske_config cfg;
    ac_weights *weights;
    ac_sp *sp;
    /* front end */
    const float *window;       /* [win] */
    const float *fb;           /* [n_mels][n_fft/2+1] */
    ac_melbank mel;
    /* subsampling (time-major, channels last) */
    ac_mat sub0_w;             /* [C][9] f32 (1 input channel) */
    const float *sub0_b;
    float *sub_dw_w[2];        /* [9][C] */
    const float *sub_dw_b[2], *sub_pw_b[2];
    ac_mat sub_pw_w[2];
    ac_mat sub_out_w;          /* [E][F3*C] f32, columns reordered to our (f, c) layout */
    const float *sub_out_b;
    hviske_enc_layer *enc;
    ac_mat proj_w;
    const float *proj_b;
    /* decoder */
    ac_mat tok_emb;
    const float *pos_enc, *emb_ln_w, *emb_ln_b;
    hviske_dec_layer *dec;
    const float *final_ln_w, *final_ln_b, *cls_b;
    ac_mat cls_w;
} hviske_model;

/* config.c: config.json (and generation_config.json, when GEN_TEXT is not
 * NULL) of the package WHERE names in messages. */
ac_status hviske_config_parse(const char *text, size_t len, const char *gen_text, size_t gen_len,
                              const char *where, hviske_config *cfg);
/* Index of language CODE in the config, or -1. */
int hviske_language(const hviske_config *cfg, const char *code);

/* load.c: PATH is a package folder, or a single-file GGUF package that
 * embeds config.json, generation_config.json and tokenizer.model. */
ac_status hviske_load(const char *path, ac_weight_type type, hviske_model **out);
void hviske_free(hviske_model *m);

/* Length of a stride-2, kernel-3, padding-1 stage. */
static inline int64_t hviske_sub_len(int64_t n) { return n <= 0 ? 0 : (n - 1) / 2 + 1; }

#endif
