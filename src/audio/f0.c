#include "audio/f0.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/mel.h"
#include "audio/resample_soxr.h"
#include "base/error.h"
#include "base/mem.h"

#define MIN_LAG 14
#define MAX_LAG 320
#define MIN_ENERGY 1e-8
#define THRESHOLD 0.25
#define FALLBACK 0.3

int64_t ac_f0_frames(int64_t n) { return n < AC_F0_FRAME ? 0 : 1 + (n - AC_F0_FRAME) / AC_F0_HOP; }

/* YIN's F0 of one windowed, mean-free frame F[2048], or 0 for unvoiced. */
static float frame_f0(const double *f)
{
    double energy = 0;
    for (int j = 0; j < AC_F0_FRAME; j++) energy += f[j] * f[j];
    if (energy / AC_F0_FRAME < MIN_ENERGY) return 0;
    /* d' for lags 0..MAX_LAG+1 (the last one for the parabola) */
    double cmnd[MAX_LAG + 2], sum = 0;
    cmnd[0] = 1;
    for (int tau = 1; tau <= MAX_LAG + 1; tau++) {
        double d = 0;
        for (int j = 0; j + tau < AC_F0_FRAME; j++) {
            double e = f[j] - f[j + tau];
            d += e * e;
        }
        sum += d;
        cmnd[tau] = sum > 0 ? d * tau / sum : 1;
    }
    int lag = 0;
    for (int tau = MIN_LAG; tau <= MAX_LAG; tau++)
        if (cmnd[tau] < THRESHOLD) {
            while (tau < MAX_LAG && cmnd[tau + 1] < cmnd[tau]) tau++;
            lag = tau;
            break;
        }
    if (!lag) {
        int best = MIN_LAG;
        for (int tau = MIN_LAG + 1; tau <= MAX_LAG; tau++)
            if (cmnd[tau] < cmnd[best]) best = tau;
        if (cmnd[best] > FALLBACK) return 0;
        lag = best;
    }
    double a = cmnd[lag - 1], b = cmnd[lag], c = cmnd[lag + 1], den = a - 2 * b + c, shift = 0;
    if (den > 0) shift = 0.5 * (a - c) / den;
    if (shift > 1 || shift < -1) shift = 0;   /* a parabola that does not fit the three points */
    return (float)(AC_F0_RATE / (lag + shift));
}

ac_status ac_f0_track(const float *x, int64_t n, float *f0)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return ac_error(AC_ERR_ARG, "F0: sample %lld is %g (not finite)", (long long)i, x[i]);
    float win[AC_F0_FRAME];
    double f[AC_F0_FRAME];
    ac_hann(AC_F0_FRAME, 0, win);
    int64_t frames = ac_f0_frames(n);
    for (int64_t t = 0; t < frames; t++) {
        const float *s = x + t * AC_F0_HOP;
        double mean = 0;
        for (int j = 0; j < AC_F0_FRAME; j++) mean += s[j];
        mean /= AC_F0_FRAME;
        for (int j = 0; j < AC_F0_FRAME; j++) f[j] = (s[j] - mean) * win[j];
        f0[t] = frame_f0(f);
    }
    return AC_OK;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

ac_status ac_f0_median(const float *x, int64_t n, int sr, double *median_hz, int64_t *voiced)
{
    *median_hz = 0;
    if (voiced) *voiced = 0;
    if (n < 1) return ac_error(AC_ERR_ARG, "F0: %lld samples (need at least 1)", (long long)n);
    if (sr <= 0) return ac_error(AC_ERR_ARG, "F0: sample rate %d Hz (need > 0)", sr);
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return ac_error(AC_ERR_ARG, "F0: sample %lld is %g (not finite)", (long long)i, x[i]);
    const float *y = x;
    float *buf = NULL, *f0 = NULL;
    int64_t m = n;
    ac_status st = AC_OK;
    if (sr != AC_F0_RATE) {
        /* librosa.load(sr=16000): soxr HQ, then cut or padded to ceil(n * 16000 / sr) */
        m = (int64_t)ceil((double)n * AC_F0_RATE / sr);
        int64_t cap = ac_resample_soxr_capacity(n, sr, AC_F0_RATE), got = 0;
        buf = ac_calloc((size_t)(cap > m ? cap : m), sizeof *buf);
        if (!buf) return AC_ERR_NOMEM;
        st = ac_resample_soxr(x, n, sr, AC_F0_RATE, buf, &got);
        if (got < m) memset(buf + got, 0, (size_t)(m - got) * sizeof *buf);
        y = buf;
    }
    int64_t frames = ac_f0_frames(m), count = 0;
    if (!st && frames > 0) {
        f0 = ac_malloc((size_t)frames * sizeof *f0);
        st = f0 ? ac_f0_track(y, m, f0) : AC_ERR_NOMEM;
    }
    if (!st && frames > 0) {
        for (int64_t t = 0; t < frames; t++)
            if (f0[t] > 0) f0[count++] = f0[t];
        qsort(f0, (size_t)count, sizeof *f0, cmp_float);
        if (count) *median_hz = count % 2 ? f0[count / 2] : 0.5 * ((double)f0[count / 2 - 1] + f0[count / 2]);
        if (voiced) *voiced = count;
    }
    free(f0);
    free(buf);
    return st;
}

int ac_semitone_shift(double target_hz, double source_hz)
{
    if (!(target_hz > 0 && source_hz > 0 && isfinite(target_hz) && isfinite(source_hz))) return 0;
    int steps = (int)nearbyint(12.0 * log2(target_hz / source_hz));   /* |steps| < 12 * 2100 */
    /* C's % truncates toward zero: 14 -> 2 and -14 -> -2, as upstream's Python does */
    return steps > 12 || steps < -12 ? steps % 12 : steps;
}
