/* Applying a mel (or any sparse band) filterbank to power spectra. The
 * bank comes from the checkpoint; only each filter's non-zero span is
 * visited. */
#ifndef AC_AUDIO_MEL_H
#define AC_AUDIO_MEL_H

#include "audioc.h"

typedef struct ac_melbank {
    int n_mels, n_bins;
    const float *fb;   /* [n_mels][n_bins] */
    int *lo, *hi;      /* non-zero span [lo, hi) of each filter */
} ac_melbank;

ac_status ac_melbank_init(ac_melbank *m, const float *fb, int n_mels, int n_bins);
/* mel[m] = sum_k fb[m][k] * power[k] */
void ac_melbank_apply(const ac_melbank *m, const float *power, float *mel);
void ac_melbank_free(ac_melbank *m);

/* librosa's default filterbank (Slaney mel scale, Slaney area norm) into
 * fb[n_mels][n_fft/2+1], computed in double. */
void ac_mel_slaney(int n_mels, int n_fft, int rate, double fmin, double fmax, float *fb);
/* Hann window of length N: symmetric (as torch's periodic=False) or periodic. */
void ac_hann(int n, int periodic, float *w);

#endif
