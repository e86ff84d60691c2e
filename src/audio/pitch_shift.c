#include "audio/pitch_shift.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/mel.h"
#include "audio/resample_soxr.h"
#include "audio/stft.h"
#include "base/error.h"
#include "base/mem.h"

#define N_FFT AC_TIME_STRETCH_N_FFT
#define HOP AC_TIME_STRETCH_HOP
#define BINS (N_FFT / 2 + 1)

static ac_status check_samples(const char *what, const float *x, int64_t n)
{
    if (n < 1) return ac_error(AC_ERR_ARG, "%s: %lld samples (need at least 1)", what, (long long)n);
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return ac_error(AC_ERR_ARG, "%s: sample %lld is %g (not finite)", what, (long long)i, x[i]);
    return AC_OK;
}

static int rate_ok(double rate)
{
    return rate >= 0.25 && rate <= 4.0;   /* also false for NaN */
}

int64_t ac_time_stretch_length(int64_t n, double rate)
{
    return (int64_t)nearbyint((double)n / rate);
}

int64_t ac_phase_vocoder_frames(int64_t frames, double rate)
{
    return (int64_t)ceil((double)frames / rate);   /* len(numpy.arange(0, frames, rate)) */
}

ac_status ac_phase_vocoder(const float *spec, int64_t frames, double rate, float *out)
{
    if (!rate_ok(rate)) return ac_error(AC_ERR_ARG, "phase vocoder: rate %g is outside [0.25, 4]", rate);
    if (frames < 1) return ac_error(AC_ERR_ARG, "phase vocoder: %lld frames", (long long)frames);
    /* (magnitude, angle) of every bin, and two frames of zeros past the end
     * as librosa pads (t*rate may round up to the frame count) */
    float *polar = ac_calloc(((size_t)frames + 2) * 2 * BINS, sizeof *polar);
    if (!polar) return AC_ERR_NOMEM;
    /* rounded once from double: the float32 accumulator below turns an ulp
     * of difference in an angle into a lasting one, so the angles are the
     * well-defined nearest floats (numpy's float32 arctan2, like atan2f, is
     * off by an ulp in a good share of cases) */
    for (size_t j = 0; j < (size_t)frames * BINS; j++) {
        double re = spec[2 * j], im = spec[2 * j + 1];
        polar[2 * j] = (float)hypot(re, im);
        polar[2 * j + 1] = (float)atan2(im, re);
    }
    double phi[BINS];
    float acc[BINS];
    for (int k = 0; k < BINS; k++) {
        phi[k] = k * (M_PI * HOP / (BINS - 1));   /* numpy.linspace(0, pi*hop, bins) */
        acc[k] = polar[2 * k + 1];
    }
    int64_t out_frames = ac_phase_vocoder_frames(frames, rate);
    for (int64_t t = 0; t < out_frames; t++) {
        double step = (double)t * rate, alpha = fmod(step, 1.0);
        /* numpy 1.x multiplies float32 magnitudes by the float64 weights in float32 */
        float a = (float)alpha, b = (float)(1.0 - alpha);
        const float *c0 = polar + (size_t)step * 2 * BINS, *c1 = c0 + 2 * BINS;
        float *o = out + (size_t)t * 2 * BINS;
        for (int k = 0; k < BINS; k++) {
            float mag = b * c0[2 * k] + a * c1[2 * k];
            o[2 * k] = cosf(acc[k]) * mag;
            o[2 * k + 1] = sinf(acc[k]) * mag;
            double d = (double)(c1[2 * k + 1] - c0[2 * k + 1]) - phi[k];
            d -= 2.0 * M_PI * nearbyint(d / (2.0 * M_PI));
            acc[k] = (float)((double)acc[k] + (phi[k] + d));   /* the accumulator is float32 */
        }
    }
    free(polar);
    return AC_OK;
}

static ac_status stretch(const float *x, int64_t n, double rate, float *out)
{
    float window[N_FFT];
    ac_hann(N_FFT, 1, window);
    ac_stft_params p = {.n_fft = N_FFT, .hop = HOP, .win = N_FFT, .window = window,
                        .layout = AC_STFT_CENTER, .pad = AC_PAD_ZERO};
    ac_stft s;
    AC_TRY(ac_stft_init(&s, &p));
    int64_t frames = ac_stft_frames(&s, n);
    int64_t out_frames = ac_phase_vocoder_frames(frames, rate);
    float *spec = ac_malloc((size_t)frames * 2 * BINS * sizeof *spec);
    float *pv = spec ? ac_malloc((size_t)out_frames * 2 * BINS * sizeof *pv) : NULL;
    ac_status st = pv ? ac_stft_signal(&s, x, n, AC_SPEC_COMPLEX, spec) : AC_ERR_NOMEM;
    if (!st) st = ac_phase_vocoder(spec, frames, rate, pv);
    if (!st) st = ac_istft(&s, pv, out_frames, ac_time_stretch_length(n, rate), out);
    free(pv);
    free(spec);
    ac_stft_free(&s);
    return st;
}

ac_status ac_time_stretch(const float *x, int64_t n, double rate, float *out)
{
    if (!rate_ok(rate)) return ac_error(AC_ERR_ARG, "time stretch: rate %g is outside [0.25, 4]", rate);
    AC_TRY(check_samples("time stretch", x, n));
    return stretch(x, n, rate, out);
}

ac_status ac_pitch_shift(const float *x, int64_t n, int sr, double steps, float *out)
{
    if (sr <= 0) return ac_error(AC_ERR_ARG, "pitch shift: sample rate %d Hz (need > 0)", sr);
    if (!(fabs(steps) <= AC_PITCH_SHIFT_MAX_STEPS))
        return ac_error(AC_ERR_ARG, "pitch shift: %g semitones (supported: -%g..%g)", steps,
                        AC_PITCH_SHIFT_MAX_STEPS, AC_PITCH_SHIFT_MAX_STEPS);
    AC_TRY(check_samples("pitch shift", x, n));
    double rate = pow(2.0, -steps / 12.0);
    int64_t len = ac_time_stretch_length(n, rate);
    float *y = ac_malloc((size_t)(len > 0 ? len : 1) * sizeof *y);
    if (!y) return AC_ERR_NOMEM;
    ac_status st = stretch(x, n, rate, y);
    double in_rate = (double)sr / rate;
    int64_t got = len;
    float *z = y;
    if (!st && in_rate != (double)sr) {   /* librosa.resample returns equal rates untouched */
        z = ac_malloc((size_t)ac_resample_soxr_capacity(len, in_rate, sr) * sizeof *z);
        st = z ? ac_resample_soxr(y, len, in_rate, sr, z, &got) : AC_ERR_NOMEM;
    }
    if (!st) {
        /* librosa.resample fixes the length to ceil(len * sr / in_rate) before pitch_shift fixes it to n */
        int64_t fixed = z == y ? len : (int64_t)ceil((double)len * ((double)sr / in_rate));
        int64_t keep = got < fixed ? got : fixed;
        if (keep > n) keep = n;
        memcpy(out, z, (size_t)keep * sizeof *out);
        memset(out + keep, 0, (size_t)(n - keep) * sizeof *out);
    }
    if (z != y) free(z);
    free(y);
    return st;
}
