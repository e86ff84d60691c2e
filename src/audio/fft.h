/* Real FFT (kissfft) for spectrogram front ends. */
#ifndef AC_AUDIO_FFT_H
#define AC_AUDIO_FFT_H

#include "audioc.h"

typedef struct ac_rfft ac_rfft;

/* N must be even. */
ac_status ac_rfft_new(int n, ac_rfft **out);
/* power[k] = |X[k]|^2 for k = 0..n/2 of the unnormalized DFT of IN[n]. */
void ac_rfft_power(ac_rfft *f, const float *in, float *power);
void ac_rfft_free(ac_rfft *f);

#endif
