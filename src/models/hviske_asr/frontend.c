/* Waveform to normalized log-mel features (spec §2): dither, pre-emphasis,
 * centered STFT power, mel, log, per-feature normalization over the valid
 * frames, zero padding to a multiple of pad_to. */
#include <math.h>
#include <string.h>

#include "audio/logmel.h"
#include "base/error.h"
#include "base/rng.h"
#include "models/hviske_asr/frontend.h"

#define PREEMPH 0.97f
#define LOG_GUARD 5.960464477539063e-8f /* 2^-24 */

int64_t hviske_feature_frames(const hviske_config *c, int64_t n_samples)
{
    int64_t t = 1 + n_samples / c->hop;
    return c->pad_to > 0 ? (t + c->pad_to - 1) / c->pad_to * c->pad_to : t;
}

ac_status hviske_features(const hviske_model *m, const float *x, int64_t n, ac_arena *a, float **out,
                          int64_t *n_frames, int64_t *n_valid)
{
    const hviske_config *c = &m->cfg;
    int M = c->n_mels;
    int64_t T = 1 + n / c->hop, Tf = hviske_feature_frames(c, n), Tv = n / c->hop;
    float *y = ac_arena_floats(a, (size_t)n + 1), *feat = ac_arena_floats(a, (size_t)Tf * M);
    if (!y || !feat) return AC_ERR_NOMEM;

    /* dither (seeded by the length, as upstream, so a file always gives the
     * same features), then pre-emphasis */
    uint64_t seed = (uint64_t)n;
    for (int64_t i = 0; i < n; i++) y[i] = x[i] + (c->dither > 0 ? (float)(c->dither * ac_splitmix_gaussian(&seed)) : 0.0f);
    for (int64_t i = n - 1; i > 0; i--) y[i] -= PREEMPH * y[i - 1];

    ac_logmel lm;
    ac_stft_params sp = {.n_fft = c->n_fft, .hop = c->hop, .win = c->win, .window = m->window,
                         .layout = AC_STFT_CENTER, .pad = AC_PAD_ZERO};
    AC_TRY(ac_logmel_init(&lm, &sp, &m->mel, AC_LOG_ADD, LOG_GUARD));
    ac_status st = AC_OK;
    for (int64_t t = 0; t < T && !st; t++) st = ac_logmel_frame(&lm, y, 0, n, n, t, feat + t * M);
    ac_logmel_free(&lm);
    AC_TRY(st);

    /* per-feature normalization over the valid frames (n - 1 in the
     * variance, 1e-5 added to the deviation); other frames become 0 */
    for (int i = 0; i < M; i++) {
        double mean = 0, var = 0;
        for (int64_t t = 0; t < Tv; t++) mean += feat[t * M + i];
        mean = Tv > 0 ? mean / (double)Tv : 0;
        for (int64_t t = 0; t < Tv; t++) var += (feat[t * M + i] - mean) * (feat[t * M + i] - mean);
        double sd = (Tv > 1 ? sqrt(var / (double)(Tv - 1)) : 0) + 1e-5;
        for (int64_t t = 0; t < Tv; t++) feat[t * M + i] = (float)((feat[t * M + i] - mean) / sd);
    }
    memset(feat + Tv * M, 0, (size_t)(Tf - Tv) * M * sizeof *feat);
    *out = feat;
    *n_frames = Tf;
    *n_valid = Tv;
    return AC_OK;
}
