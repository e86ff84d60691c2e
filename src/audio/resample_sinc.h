/* Band-limited resampling between integer rates as
 * torchaudio.functional.resample computes it with its defaults
 * (sinc_interp_hann, lowpass_filter_width 6, rolloff 0.99).
 *
 * With the rates reduced by their gcd to ORIG -> NEW, output sample
 * i*NEW + j (phase j < NEW) is the dot product of the phase-j kernel of
 * TAPS = 2*width + ORIG taps with input samples [i*ORIG - width,
 * i*ORIG - width + TAPS), zeros outside the signal; width =
 * ceil(6*ORIG / (0.99*min(ORIG, NEW))). The kernels are computed once, in
 * float32 in torchaudio's order of operations (they agree with its kernels
 * to the last bit but for sin/cos rounding). A signal of N samples gives
 * ceil(NEW*N/ORIG) samples. Equal rates copy the signal (torchaudio returns
 * it unchanged). The resampler is read-only once made: one may serve many
 * threads. */
#ifndef AC_AUDIO_RESAMPLE_SINC_H
#define AC_AUDIO_RESAMPLE_SINC_H

#include <stdint.h>

#include "audioc.h"
#include "base/arena.h"

typedef struct ac_sinc_resampler {
    int orig, new_rate;  /* the rates divided by their gcd */
    int width;           /* input samples the first kernel reaches before sample 0 */
    int taps;            /* 2*width + orig */
    int stride;          /* floats per kernel row: taps rounded up to 8, zero-filled */
    float *kernel;       /* [new_rate][stride]; NULL for equal rates */
} ac_sinc_resampler;

/* Fails (AC_ERR_ARG) for a rate <= 0 and for rates whose gcd-reduced
 * kernels would exceed 64 Mi floats (e.g. 44100 -> 16001). */
ac_status ac_sinc_resampler_init(ac_sinc_resampler *r, int orig_rate, int new_rate);
void ac_sinc_resampler_free(ac_sinc_resampler *r);

/* ceil(new_rate * n / orig) (reduced rates), or -1 if that overflows. */
int64_t ac_sinc_resampled_len(const ac_sinc_resampler *r, int64_t n);

/* out[ac_sinc_resampled_len(n)] = X[n] resampled. Scratch (a few hundred
 * kB at most) comes from SCRATCH; the caller resets it. Fails (AC_ERR_ARG)
 * for n <= 0 or a sample that is not finite. SIMD when the CPU has it. */
ac_status ac_sinc_resample(const ac_sinc_resampler *r, const float *x, int64_t n, ac_arena *scratch,
                           float *out);
/* The same, one output at a time in plain C (the tests' reference). */
ac_status ac_sinc_resample_ref(const ac_sinc_resampler *r, const float *x, int64_t n, float *out);

#endif
