/* Vevo2's Coco tokenizers (Amphion CocoContentStyle / CocoStyle), encoder
 * side, spec vevo2.md §4.5: frame features at 50 Hz -> input Linear(s) ->
 * log2(rate) x (Conv1d k3 s2 p1 + GELU) -> Vocos backbone -> Linear ->
 * factorized cosine VQ. The content-style tokenizer takes Whisper features
 * (normalized by the caller) and the chromagram, the prosody one (type
 * "style") the chromagram only. Decoder-side tensors are not loaded. */
#ifndef AC_MODELS_VEVO2_COCO_H
#define AC_MODELS_VEVO2_COCO_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "io/config.h"
#include "io/weights.h"
#include "nn/vocos_backbone.h"
#include "nn/vq.h"

#define VEVO2_COCO_MAX_DOWN 8   /* downsample_rate up to 256 */

typedef enum { VEVO2_COCO_CONTENT_STYLE, VEVO2_COCO_STYLE } vevo2_coco_type;

typedef struct vevo2_coco_config {
    vevo2_coco_type type;        /* coco_type "content_style" or "style" */
    int downsample_rate;         /* a power of two */
    int codebook_size, hidden, codebook_dim;
    int vocos_dim, vocos_intermediate, vocos_layers;   /* encoder.* */
    int whisper_dim, chroma_dim; /* whisper_dim: optional for "style" (0 when absent) */
    int use_normed_whisper;      /* optional (false): the caller normalizes with the stats */
} vevo2_coco_config;

/* The object OBJ of C holding the keys (amphion_config.json ->
 * model.coco_content_style or model.coco_style), WHERE its path for messages. */
ac_status vevo2_coco_config_parse(const ac_config *c, const cJSON *obj, const char *where, vevo2_coco_config *out);

typedef struct vevo2_coco {
    vevo2_coco_config cfg;
    ac_weights *weights;
    ac_mat whisper_in, chroma_in;                 /* whisper_in unused for "style" */
    const float *whisper_in_b, *chroma_in_b;
    int n_down;
    ac_conv1d_shape down;
    ac_mat down_w[VEVO2_COCO_MAX_DOWN];          /* [H][H*3] in the stored type (ac_conv1d_mat) */
    const float *down_b[VEVO2_COCO_MAX_DOWN];
    ac_vocos_backbone encoder;
    ac_mat encoder_out;                           /* encoder.1: [hidden][vocos_dim] */
    const float *encoder_out_b;
    ac_fvq vq;
} vevo2_coco;

/* model.safetensors of a tokenizer folder, checked against CFG. */
ac_status vevo2_coco_load(const char *weights_path, const vevo2_coco_config *cfg, ac_weight_type type,
                          vevo2_coco **out);
/* The same over weights W opened by the caller (a part of a GGUF package); W is
 * the model's from here on, freed on error too. */
ac_status vevo2_coco_load_from(ac_weights *w, const vevo2_coco_config *cfg, vevo2_coco **out);
void vevo2_coco_free(vevo2_coco *m);

/* Tokens of T frames: ceil(T / downsample_rate). */
size_t vevo2_coco_tokens(const vevo2_coco_config *cfg, size_t T);

/* WHISPER[T][whisper_dim] (content_style; NULL for style) and
 * CHROMA[T][chroma_dim] -> LATENTS[n][codebook_dim] (the normalized
 * projections the codes are matched with), IDS[n] and GAPS[n] (top-2
 * cosine margin; may be NULL), n = vevo2_coco_tokens(T). Scratch from A. */
ac_status vevo2_coco_encode(const vevo2_coco *m, const float *whisper, const float *chroma, size_t T, ac_arena *a,
                            float *latents, int32_t *ids, float *gaps);

#endif
