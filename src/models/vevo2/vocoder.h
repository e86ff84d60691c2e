/* Vevo2's vocoder (Amphion Vocos), spec vevo2.md §4.11: the normalized
 * log-mel [F][input_channels] -> Vocos backbone -> head.out Linear ->
 * magnitude min(exp, 100) and phase -> ISTFT with "same" padding -> F*hop
 * samples. */
#ifndef AC_MODELS_VEVO2_VOCODER_H
#define AC_MODELS_VEVO2_VOCODER_H

#include <stddef.h>

#include "base/arena.h"
#include "io/config.h"
#include "io/weights.h"
#include "nn/vocos_backbone.h"

typedef struct vevo2_vocoder_config {
    int input_channels, dim, intermediate, layers, n_fft, hop;
} vevo2_vocoder_config;

/* OBJ = vocoder/config.json -> model.vocos; padding must be "same" when given. */
ac_status vevo2_vocoder_config_parse(const ac_config *c, const cJSON *obj, const char *where,
                                     vevo2_vocoder_config *out);

typedef struct vevo2_vocoder {
    vevo2_vocoder_config cfg;
    ac_weights *weights;
    ac_vocos_backbone backbone;
    ac_mat head;                  /* head.out: [n_fft + 2][dim] */
    const float *head_b, *window; /* [n_fft + 2], head.istft.window [n_fft] */
} vevo2_vocoder;

ac_status vevo2_vocoder_load(const char *weights_path, const vevo2_vocoder_config *cfg, ac_weight_type type,
                             vevo2_vocoder **out);
/* The same over weights W opened by the caller (a part of a GGUF package); W is
 * the model's from here on, freed on error too. */
ac_status vevo2_vocoder_load_from(ac_weights *w, const vevo2_vocoder_config *cfg, vevo2_vocoder **out);
void vevo2_vocoder_free(vevo2_vocoder *v);

/* MEL[F][input_channels] -> WAV[F * hop]. Scratch from A. */
ac_status vevo2_vocoder_forward(const vevo2_vocoder *v, const float *mel, size_t F, ac_arena *a, float *wav);

#endif
