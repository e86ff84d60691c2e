/* Hviske ASR front end and encoder (per chunk of audio). */
#ifndef AC_MODELS_HVISKE_FRONTEND_H
#define AC_MODELS_HVISKE_FRONTEND_H

#include "base/arena.h"
#include "base/trace.h"
#include "models/hviske_asr/model.h"

/* Feature frames (after pad_to) for N samples. */
int64_t hviske_feature_frames(const hviske_config *c, int64_t n_samples);

/* Normalized log-mel features [n_frames][n_mels] of X[N] (16 kHz mono);
 * n_valid frames are real, the rest zero. Allocated in A. */
ac_status hviske_features(const hviske_model *m, const float *x, int64_t n, ac_arena *a, float **feat,
                          int64_t *n_frames, int64_t *n_valid);

/* The encoder's output. */
typedef struct hviske_encoded {
    float *x;          /* [T][d_model] after the conformer layers */
    float *proj;       /* [T][dec_dim] the decoder's memory */
    int64_t T, T_valid;
} hviske_encoded;

/* Runs subsampling, the conformer layers and the projection. TRACE (may
 * be NULL) gets "subsampling" and "layer" I ([T][d_model] f32 each) and
 * "encoder_proj" ([T][dec_dim]). */
ac_status hviske_encode(const hviske_model *m, const float *feat, int64_t n_frames, int64_t n_valid,
                        const ac_trace *trace, ac_arena *a, hviske_encoded *out);

#endif
