/* librosa's effects.time_stretch and effects.pitch_shift (librosa 0.10,
 * the defaults Amphion's Vevo2 uses to shift the chromagram's input):
 *
 * time stretch by RATE: STFT (n_fft 2048, hop 512, periodic Hann, centred,
 * zero padding); librosa.phase_vocoder: output frame t reads input frame
 * position t*RATE (t while < frames), magnitude interpolated linearly
 * between frames floor and floor+1 (frames past the end are 0), phase
 * started at frame 0's and advanced after each frame by
 * phi_k + wrap(angle X[floor+1] - angle X[floor] - phi_k), phi_k = 2 pi 512 k / 2048,
 * wrap to [-pi, pi] by round half to even; ISTFT of the same framing
 * (window-sum normalised) to round(n / RATE) samples (half to even, as
 * Python's round).
 *
 * pitch shift by STEPS semitones: RATE = 2^(-STEPS/12); the stretched
 * signal resampled from sr/RATE to sr Hz with libsoxr HQ as librosa does
 * (python-soxr, audio/resample_soxr.h; none when the rates are equal, i.e.
 * STEPS = 0), then cut or zero-padded to n samples.
 *
 * The arithmetic follows librosa's dtypes where they matter: the STFT is
 * complex float32, and the phase accumulator is float32 (numpy adds the
 * float64 advance and rounds back), so the accumulated phase is rounded to
 * float32 after every frame, as upstream. (The C++ port, audio.cpp,
 * resamples linearly to round(len * RATE) samples instead of soxr; that is
 * a known deviation from upstream, not followed here.) */
#ifndef AC_AUDIO_PITCH_SHIFT_H
#define AC_AUDIO_PITCH_SHIFT_H

#include <stdint.h>

#include "audioc.h"

/* The shifts accepted: |STEPS| <= 24 semitones, rates in [1/4, 4]. */
#define AC_PITCH_SHIFT_MAX_STEPS 24.0

/* Samples of X[n] stretched by RATE: round(n / RATE), half to even. */
int64_t ac_time_stretch_length(int64_t n, double rate);

/* The STFT framing of the stretch: n_fft 2048, hop 512, bins 1025. */
#define AC_TIME_STRETCH_N_FFT 2048
#define AC_TIME_STRETCH_HOP 512

/* librosa.phase_vocoder of SPEC[frames][1025] (complex: re, im pairs) by
 * RATE into OUT[ac_phase_vocoder_frames(frames, rate)][1025] (complex).
 * Fails (AC_ERR_ARG) for frames < 1 or a RATE outside [1/4, 4]. */
int64_t ac_phase_vocoder_frames(int64_t frames, double rate);
ac_status ac_phase_vocoder(const float *spec, int64_t frames, double rate, float *out);

/* X[n] stretched by RATE into OUT[ac_time_stretch_length(n, rate)].
 * Fails (AC_ERR_ARG) for n < 1, a RATE outside [1/4, 4] or a non-finite sample. */
ac_status ac_time_stretch(const float *x, int64_t n, double rate, float *out);

/* X[n] at SR Hz shifted by STEPS semitones into OUT[n]. Fails (AC_ERR_ARG)
 * for n < 1, SR <= 0, |STEPS| > 24 or not finite, or a non-finite sample. */
ac_status ac_pitch_shift(const float *x, int64_t n, int sr, double steps, float *out);

#endif
