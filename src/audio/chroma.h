/* Chromagrams as librosa.feature.chroma_stft computes them with its
 * defaults (norm inf, periodic Hann, centred STFT with zero padding,
 * tuning estimated from the spectrogram, filters.chroma with ctroct 5,
 * octwidth 2, norm 2, base_c), and the linear time rescale of a feature
 * sequence. Vevo2 uses rate 24000, n_fft 1920, hop 480, 24 chroma bins.
 *
 * Spectrogram and chroma arithmetic is float32 as librosa's (the STFT
 * itself is kissfft float32, where librosa's FFT is float64 rounded to
 * complex64); the filterbank is built in double and stored as float32, as
 * librosa does. Sequences are time-major: row t is frame t. */
#ifndef AC_AUDIO_CHROMA_H
#define AC_AUDIO_CHROMA_H

#include <stdint.h>

#include "audio/stft.h"
#include "base/arena.h"

typedef struct ac_chroma {
    int rate, n_fft, hop, n_chroma;
    int bins;        /* n_fft/2 + 1 */
    float *window;   /* periodic Hann [n_fft] */
    ac_stft stft;    /* centred, zero padding */
} ac_chroma;

/* Fails (AC_ERR_ARG) unless rate, n_fft, hop >= 1, n_fft >= 2 and
 * 1 <= n_chroma <= 1024. */
ac_status ac_chroma_init(ac_chroma *c, int rate, int n_fft, int hop, int n_chroma);
void ac_chroma_free(ac_chroma *c);

/* STFT frames of a signal of N samples: 1 + N/hop. */
int64_t ac_chroma_frames(const ac_chroma *c, int64_t n);

/* power[ac_chroma_frames(n)][bins] = |STFT|^2 of X[n]. The STFT scratch
 * makes C single-threaded while this runs. Fails (AC_ERR_ARG) for n <= 0
 * or a sample that is not finite. */
ac_status ac_chroma_power(ac_chroma *c, const float *x, int64_t n, float *power);

/* librosa.estimate_tuning(S=power, sr=rate, bins_per_octave=n_chroma):
 * piptrack (fmin 150 Hz, fmax min(4000, rate/2), threshold 0.1 of each
 * frame's maximum; local maxima along frequency refined by a parabola)
 * over all FRAMES frames, peaks at least as strong as the median peak,
 * their deviation from the A440 grid of n_chroma bins per octave in
 * [-0.5, 0.5), the left edge of the fullest of 100 histogram bins (the
 * first of equals; 0 with no peaks). In fractions of a chroma bin. */
ac_status ac_chroma_tuning(const ac_chroma *c, const float *power, int64_t frames, ac_arena *scratch,
                           double *tuning);

/* fb[n_chroma][n_fft/2+1] = librosa.filters.chroma(sr=rate, n_fft,
 * n_chroma, tuning) (float32, rows starting at C). Fails (AC_ERR_ARG) for
 * arguments ac_chroma_init refuses or a tuning that is not finite. */
ac_status ac_chroma_filters(int rate, int n_fft, int n_chroma, double tuning, float *fb);

/* out[frames][n_chroma]: the first FRAMES frames of chroma_stft(y=X[n]),
 * each frame divided by its largest value (left as is when that is below
 * FLT_MIN, e.g. silence: zeros). The tuning is estimated from all
 * ac_chroma_frames(n) frames and returned in *TUNING (may be NULL). Fails
 * (AC_ERR_ARG) for n <= 0, a sample that is not finite, or FRAMES outside
 * [0, ac_chroma_frames(n)]. */
ac_status ac_chroma_stft(ac_chroma *c, const float *x, int64_t n, int64_t frames, ac_arena *scratch,
                         float *out, double *tuning);

/* y[t_out][C] = X[t_in][C] resampled in time as torch's
 * F.interpolate(mode="linear", align_corners=False, size=t_out) on
 * [1][C][t_in]: output frame d reads source position
 * max(0, s*(d + 0.5) - 0.5), s = t_in/t_out rounded to float32 and the
 * position in double, as torch does, between frames floor and floor+1 (the
 * last frame repeats) with float32 weights. Equal lengths copy. Fails
 * (AC_ERR_ARG) unless t_in, t_out, C >= 1. */
ac_status ac_frames_interp_linear(const float *x, int64_t t_in, int64_t C, int64_t t_out, float *y);

#endif
