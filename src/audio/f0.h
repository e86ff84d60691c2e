/* Median F0 of a clip and the semitone shift Vevo2 derives from two of
 * them (when use_pitch_shift is set and no shift is given).
 *
 * The estimator is YIN as the C++ port (audio.cpp) does it, not upstream's
 * Praat autocorrelation pitch (parselmouth to_pitch_ac, time step 16 ms,
 * voicing threshold 0.6, floor 50 Hz, ceiling 1100 Hz, unvoiced frames
 * interpolated, median over all frames), whose path search is out of reach
 * here. The clip is resampled to 16 kHz with libsoxr HQ (as upstream's
 * librosa.load does; the port resamples linearly), then per frame of 2048
 * samples every 256: mean removed, symmetric Hann window; frames whose
 * mean square is below 1e-8 are unvoiced; difference function
 * d(tau) = sum_j (x[j] - x[j+tau])^2 over the frame, its cumulative mean
 * normalised form d'(tau) = tau d(tau) / sum_{1..tau} d; over lags 14..320
 * (1143..50 Hz) the first lag with d' < 0.25, walked on to its local
 * minimum, else the global minimum if d' <= 0.3, else unvoiced; the lag
 * refined by a parabola through d' at its neighbours; F0 = 16000 / lag.
 * The median is over voiced frames only (mean of the middle two for an even
 * count). On espeak-ng speech the medians of the two estimators differ by a
 * fraction of a semitone (+0.76 at espeak-ng -p 20, +0.15 at -p 80, this one
 * higher; tests/ref/test_vevo2_pitch.py prints it), so a shift step can
 * differ by one from upstream's; parity tests pass explicit steps. */
#ifndef AC_AUDIO_F0_H
#define AC_AUDIO_F0_H

#include <stdint.h>

#include "audioc.h"

#define AC_F0_RATE 16000
#define AC_F0_FRAME 2048
#define AC_F0_HOP 256

/* Frames of N samples at 16 kHz: 1 + (n - 2048) / 256, 0 when n < 2048. */
int64_t ac_f0_frames(int64_t n);

/* F0 in Hz of every frame of X[n] (16 kHz) into F0[ac_f0_frames(n)], 0 for
 * unvoiced frames. Fails (AC_ERR_ARG) for a non-finite sample. */
ac_status ac_f0_track(const float *x, int64_t n, float *f0);

/* Median F0 of the voiced frames of X[n] at SR Hz (resampled to 16 kHz
 * first unless SR is 16000) into *MEDIAN_HZ (0 when none is voiced), and
 * their count into *VOICED (may be NULL). Fails (AC_ERR_ARG) for n < 1,
 * SR <= 0 or a non-finite sample. */
ac_status ac_f0_median(const float *x, int64_t n, int sr, double *median_hz, int64_t *voiced);

/* Semitones from SOURCE_HZ to TARGET_HZ: round(12 log2(target / source)),
 * half to even; beyond +-12 the remainder of 12 toward zero (14 -> 2,
 * -14 -> -2, +-12 stays); 0 when either is not > 0 or not finite. */
int ac_semitone_shift(double target_hz, double source_hz);

#endif
