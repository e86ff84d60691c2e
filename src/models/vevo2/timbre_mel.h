/* The timbre prompt's mel of Vevo2 (Amphion MelSpectrogram + the FM's
 * normalization), spec vevo2.md §4.10: reflect-pad (n_fft-hop)/2, STFT not
 * centred with a periodic Hann window, magnitude sqrt(re^2+im^2+1e-9),
 * Slaney mel, log(max(., 1e-5)), (v - mel_mean)/sqrt(mel_var). N samples
 * give floor(N/hop) frames [T][num_mels]. */
#ifndef AC_MODELS_VEVO2_TIMBRE_MEL_H
#define AC_MODELS_VEVO2_TIMBRE_MEL_H

#include <stdint.h>

#include "audio/mel.h"
#include "io/config.h"

typedef struct vevo2_mel_config {
    int sample_rate, n_fft, hop, win, n_mels;
    double fmin, fmax;            /* fmax null: sample_rate / 2 */
    double mel_mean, mel_var;
} vevo2_mel_config;

/* OBJ = a config's "preprocess" object (FM or vocoder config.json). */
ac_status vevo2_mel_config_parse(const ac_config *c, const cJSON *obj, const char *where, vevo2_mel_config *out);

typedef struct vevo2_timbre_mel {
    vevo2_mel_config cfg;
    float *window, *fb;           /* [win], [n_mels][n_fft/2+1] */
    ac_melbank bank;
} vevo2_timbre_mel;

ac_status vevo2_timbre_mel_init(const vevo2_mel_config *cfg, vevo2_timbre_mel *m);
void vevo2_timbre_mel_free(vevo2_timbre_mel *m);

/* Frames of N samples: floor(N / hop). */
int64_t vevo2_timbre_mel_frames(const vevo2_timbre_mel *m, int64_t n);
/* WAV[N] (mono, sample_rate) -> OUT[frames][n_mels]. N must exceed the
 * padding (n_fft-hop)/2, which is mirrored. */
ac_status vevo2_timbre_mel_compute(const vevo2_timbre_mel *m, const float *wav, int64_t n, float *out);

#endif
