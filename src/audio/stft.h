/* Centered short-time power spectra, as torch.stft(center=True,
 * pad_mode="constant"): frame t is centred on sample t*hop, the window sits
 * in the middle of an n_fft frame, and samples outside the signal are 0. */
#ifndef AC_AUDIO_STFT_H
#define AC_AUDIO_STFT_H

#include <stdint.h>

#include "audio/fft.h"

typedef struct ac_stft {
    int n_fft, hop, win;
    const float *window;   /* [win] */
    ac_rfft *fft;
    float *frame;          /* [n_fft] scratch */
} ac_stft;

ac_status ac_stft_init(ac_stft *s, int n_fft, int hop, int win, const float *window);
void ac_stft_free(ac_stft *s);

/* First sample and end (exclusive) of the samples frame T reads. */
int64_t ac_stft_frame_begin(const ac_stft *s, int64_t t);
int64_t ac_stft_frame_end(const ac_stft *s, int64_t t);

/* power[n_fft/2+1] of frame T of a signal of N samples, of which BUF holds
 * samples [base, base + len). */
void ac_stft_power(ac_stft *s, const float *buf, int64_t base, int64_t len, int64_t n,
                   int64_t t, float *power);

#endif
