/* Whole-signal resampling with libsoxr as python-soxr's
 * soxr.resample(x, in_rate, out_rate, quality="HQ") does it, which is what
 * librosa's res_type "soxr_hq" calls (librosa.resample, librosa.load,
 * effects.pitch_shift): float32 in and out, SOXR_HQ without flags, the
 * input fed in chunks of 48000*in/out samples, then flushed, into at most
 * ac_resample_soxr_capacity samples. Rates may be fractional. (The stream
 * reader, audio/reader.c, keeps its own libsoxr stream.) */
#ifndef AC_AUDIO_RESAMPLE_SOXR_H
#define AC_AUDIO_RESAMPLE_SOXR_H

#include <stdint.h>

#include "audioc.h"

/* python-soxr's output buffer: (size_t)(n * out_rate / in_rate + 1). */
int64_t ac_resample_soxr_capacity(int64_t n, double in_rate, double out_rate);

/* X[n] at IN_RATE -> OUT[*out_n] at OUT_RATE, *out_n <= the capacity.
 * Fails (AC_ERR_ARG) unless both rates are finite and > 0 and n >= 0. */
ac_status ac_resample_soxr(const float *x, int64_t n, double in_rate, double out_rate, float *out,
                           int64_t *out_n);

#endif
