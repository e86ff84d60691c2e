#include "audio/chroma.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/mel.h"
#include "base/error.h"
#include "base/mem.h"
#include "tensor/kernels.h"

/* librosa's piptrack range and threshold as estimate_tuning uses them */
#define PIP_FMIN 150.0
#define PIP_FMAX 4000.0
#define PIP_THRESHOLD 0.1f
/* estimate_tuning's resolution: the histogram's bin width */
#define TUNING_RESOLUTION 0.01
/* filters.chroma defaults */
#define CTROCT 5.0
#define MAX_CHROMA 1024
#define OCTWIDTH 2.0

ac_status ac_chroma_init(ac_chroma *c, int rate, int n_fft, int hop, int n_chroma)
{
    memset(c, 0, sizeof *c);
    if (rate < 1 || n_fft < 2 || hop < 1 || n_chroma < 1 || n_chroma > MAX_CHROMA)
        return ac_error(AC_ERR_ARG,
                        "chroma: rate %d, n_fft %d, hop %d, n_chroma %d: need rate, hop >= 1, n_fft >= 2 and "
                        "1 <= n_chroma <= 1024",
                        rate, n_fft, hop, n_chroma);
    c->rate = rate, c->n_fft = n_fft, c->hop = hop, c->n_chroma = n_chroma;
    c->bins = n_fft / 2 + 1;
    c->window = ac_malloc((size_t)n_fft * sizeof *c->window);
    if (!c->window) return AC_ERR_NOMEM;
    ac_hann(n_fft, 1, c->window);
    ac_stft_params p = {.n_fft = n_fft, .hop = hop, .win = n_fft, .window = c->window, .layout = AC_STFT_CENTER,
                        .pad = AC_PAD_ZERO};
    ac_status st = ac_stft_init(&c->stft, &p);
    if (st) ac_chroma_free(c);
    return st;
}

void ac_chroma_free(ac_chroma *c)
{
    ac_stft_free(&c->stft);
    free(c->window);
    c->window = NULL;
}

int64_t ac_chroma_frames(const ac_chroma *c, int64_t n) { return n < 0 ? 0 : 1 + n / c->hop; }

ac_status ac_chroma_power(ac_chroma *c, const float *x, int64_t n, float *power)
{
    if (n <= 0) return ac_error(AC_ERR_ARG, "chroma: %lld samples: need at least one", (long long)n);
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return ac_error(AC_ERR_ARG, "chroma: sample %lld is not finite (%g)", (long long)i, (double)x[i]);
    return ac_stft_signal(&c->stft, x, n, AC_SPEC_POWER, power);
}

/* ---- tuning: piptrack + pitch_tuning ------------------------------------ */

/* librosa's parabolic peak shift at bin k of S[n] (its numba stencil: a and
 * b in double, the shift stored as float32; 0 at the edges and where the
 * vertex lies a bin or more away). */
static float parabolic_shift(const float *s, int n, int k)
{
    if (k == 0 || k == n - 1) return 0.0f;
    double a = (double)(s[k + 1] + s[k - 1]) - 2.0 * s[k];
    double b = (double)(s[k + 1] - s[k - 1]) / 2.0;
    return fabs(b) >= fabs(a) ? 0.0f : (float)(-b / a);
}

/* numpy.gradient along frequency at bin k (one-sided at the ends). */
static float gradient(const float *s, int n, int k)
{
    if (n < 2) return 0.0f;
    if (k == 0) return s[1] - s[0];
    if (k == n - 1) return s[n - 1] - s[n - 2];
    return (s[k + 1] - s[k - 1]) / 2.0f;
}

/* S * (S > ref) */
static float above(const float *s, int k, float ref) { return s[k] > ref ? s[k] : 0.0f; }

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* numpy.median of V[n] (float32; sorts V). */
static float median(float *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_float);
    if (n % 2) return v[n / 2];
    float s = v[n / 2 - 1] + v[n / 2];
    return s / 2.0f;
}

/* pitch_tuning's histogram bin of residual R: numpy.histogram over
 * linspace(-0.5, 0.5, nb+1) (EDGES), left-closed bins, the last closed. */
static int histogram_bin(double r, const double *edges, int nb)
{
    int i = (int)((r - edges[0]) / (edges[nb] - edges[0]) * nb);
    if (i >= nb) i = nb - 1;
    if (i < 0) i = 0;
    if (r < edges[i] && i > 0) i--;
    if (r >= edges[i + 1] && i != nb - 1) i++;
    return i;
}

ac_status ac_chroma_tuning(const ac_chroma *c, const float *power, int64_t frames, ac_arena *scratch,
                           double *tuning)
{
    *tuning = 0.0;
    if (frames < 0) return ac_error(AC_ERR_ARG, "chroma tuning: %lld frames", (long long)frames);
    /* librosa's piptrack takes n_fft to be 2*(bins-1) (odd n_fft: one less)
     * and the bin frequencies from rfftfreq: k * (1 / (n_fft / rate)) */
    int n = c->bins, nf = 2 * (n - 1);
    double df = 1.0 / (nf * (1.0 / c->rate));
    double fmax = PIP_FMAX < c->rate / 2.0 ? PIP_FMAX : c->rate / 2.0;
    int k0 = n, k1 = 0; /* bins with fmin <= f < fmax */
    for (int k = 0; k < n; k++)
        if (PIP_FMIN <= k * df && k * df < fmax) k0 = k < k0 ? k : k0, k1 = k + 1;
    if (k0 >= k1 || frames == 0) return AC_OK;
    /* a local maximum needs a weaker lower neighbour: at most every other bin */
    size_t cap = (size_t)frames * (size_t)((k1 - k0 + 1) / 2 + 1);
    float *pitch = ac_arena_floats(scratch, cap), *mag = ac_arena_floats(scratch, cap),
          *sorted = ac_arena_floats(scratch, cap);
    if (!pitch || !mag || !sorted) return AC_ERR_NOMEM;
    size_t m = 0;
    for (int64_t t = 0; t < frames; t++) {
        const float *s = power + t * n;
        float mx = s[0];
        for (int k = 1; k < n; k++) mx = s[k] > mx ? s[k] : mx;
        float ref = PIP_THRESHOLD * mx;
        for (int k = k0; k < k1; k++) {
            float v = above(s, k, ref);
            float lo = above(s, k > 0 ? k - 1 : k, ref), hi = above(s, k < n - 1 ? k + 1 : k, ref);
            if (!(v > lo && v >= hi)) continue;
            float shift = parabolic_shift(s, n, k);
            float p = (float)(((double)k + shift) * (double)c->rate / nf);
            if (!(p > 0)) continue;
            pitch[m] = p;
            mag[m] = s[k] + 0.5f * gradient(s, n, k) * shift;
            m++;
        }
    }
    if (m == 0) return AC_OK;
    memcpy(sorted, mag, m * sizeof *mag);
    float thr = median(sorted, m);

    int nb = (int)ceil(1.0 / TUNING_RESOLUTION);
    double *edges = ac_arena_alloc(scratch, (size_t)(nb + 1) * sizeof *edges);
    int *counts = ac_arena_alloc(scratch, (size_t)nb * sizeof *counts);
    if (!edges || !counts) return AC_ERR_NOMEM;
    for (int i = 0; i < nb; i++) edges[i] = i * (1.0 / nb) + -0.5;  /* numpy.linspace */
    edges[nb] = 0.5;
    const float a4_16 = 27.5f; /* hz_to_octs: 440 / 16 */
    for (size_t i = 0; i < m; i++) {
        if (!(mag[i] >= thr)) continue;
        float r = fmodf((float)c->n_chroma * log2f(pitch[i] / a4_16), 1.0f);
        if (r < 0) r += 1.0f;
        if (r >= 0.5f) r -= 1.0f;
        counts[histogram_bin(r, edges, nb)]++;
    }
    int best = 0;
    for (int i = 1; i < nb; i++) best = counts[i] > counts[best] ? i : best;
    *tuning = edges[best];
    return AC_OK;
}

/* ---- filterbank ----------------------------------------------------------- */

/* filters.chroma's position of FFT bin I (1 <= i < n_fft) in chroma bins
 * above A0 (27.5 Hz, shifted by the tuning): n_chroma * log2(f / (A440/16)). */
static double chroma_position(int rate, int n_fft, int n_chroma, double a440, int i)
{
    double f = i * ((double)rate / n_fft); /* linspace(0, sr, n_fft, endpoint=False) */
    return n_chroma * log2(f / (a440 / 16));
}

ac_status ac_chroma_filters(int rate, int n_fft, int n_chroma, double tuning, float *fb)
{
    if (rate < 1 || n_fft < 2 || n_chroma < 1 || n_chroma > MAX_CHROMA || !isfinite(tuning))
        return ac_error(AC_ERR_ARG, "chroma filters: rate %d, n_fft %d, n_chroma %d, tuning %g", rate, n_fft,
                        n_chroma, tuning);
    int bins = n_fft / 2 + 1, roll = 3 * (n_chroma / 12);
    double a440 = 440.0 * pow(2.0, tuning / n_chroma);
    double half = rint(n_chroma / 2.0); /* numpy.round: halves to even */
    double frq1 = chroma_position(rate, n_fft, n_chroma, a440, 1);
    double w[MAX_CHROMA];
    for (int i = 0; i < bins; i++) {
        /* bin 0 (0 Hz) is placed 1.5 octaves below bin 1 */
        double frq = i == 0 ? frq1 - 1.5 * n_chroma : chroma_position(rate, n_fft, n_chroma, a440, i);
        double next = i + 1 == 1 ? frq1 : chroma_position(rate, n_fft, n_chroma, a440, i + 1);
        double bw = i == n_fft - 1 ? 1.0 : fmax(next - frq, 1.0);
        double norm = 0;
        for (int ch = 0; ch < n_chroma; ch++) {
            double d = frq - ch + half + 10 * n_chroma;
            d = fmod(d, n_chroma);
            if (d < 0) d += n_chroma; /* numpy.remainder */
            d -= half;
            double z = 2 * d / bw;
            w[ch] = exp(-0.5 * (z * z));
            norm += w[ch] * w[ch];
        }
        norm = sqrt(norm);
        double oct = (frq / n_chroma - CTROCT) / OCTWIDTH;
        double scale = exp(-0.5 * (oct * oct));
        for (int ch = 0; ch < n_chroma; ch++) {
            int row = ((ch - roll) % n_chroma + n_chroma) % n_chroma; /* numpy.roll by -roll */
            fb[(size_t)row * bins + i] = (float)(w[ch] / norm * scale);
        }
    }
    return AC_OK;
}

/* ---- chroma_stft -------------------------------------------------------------- */

ac_status ac_chroma_stft(ac_chroma *c, const float *x, int64_t n, int64_t frames, ac_arena *scratch,
                         float *out, double *tuning)
{
    int64_t total = ac_chroma_frames(c, n);
    if (n > 0 && (frames < 0 || frames > total))
        return ac_error(AC_ERR_ARG, "chroma: %lld frames asked of a signal of %lld samples, which has %lld",
                        (long long)frames, (long long)n, (long long)total);
    float *power = ac_arena_floats(scratch, (size_t)(n > 0 ? total : 0) * (size_t)c->bins);
    float *fb = ac_arena_floats(scratch, (size_t)c->n_chroma * (size_t)c->bins);
    if (n > 0 && (!power || !fb)) return AC_ERR_NOMEM;
    ac_status st = ac_chroma_power(c, x, n, power);
    double tun = 0;
    if (!st) st = ac_chroma_tuning(c, power, total, scratch, &tun);
    if (st) return st;
    if (tuning) *tuning = tun;
    st = ac_chroma_filters(c->rate, c->n_fft, c->n_chroma, tun, fb);
    if (st) return st;
    size_t C = (size_t)c->n_chroma;
    if (frames > 0) ac_matmul_nt(power, (size_t)c->bins, fb, (size_t)c->bins, NULL, out, C, (size_t)frames, C,
                                 (size_t)c->bins);
    for (int64_t t = 0; t < frames; t++) {
        float *row = out + (size_t)t * C;
        double mx = 0;
        for (size_t k = 0; k < C; k++) mx = fmax(mx, fabs((double)row[k]));
        if (mx < FLT_MIN) continue; /* util.normalize leaves such frames as they are */
        for (size_t k = 0; k < C; k++) row[k] = (float)(row[k] / mx);
    }
    return AC_OK;
}

/* ---- time rescale ------------------------------------------------------------- */

ac_status ac_frames_interp_linear(const float *x, int64_t t_in, int64_t C, int64_t t_out, float *y)
{
    if (t_in < 1 || t_out < 1 || C < 1)
        return ac_error(AC_ERR_ARG, "interpolate: %lld frames of %lld channels to %lld frames: need all >= 1",
                        (long long)t_in, (long long)C, (long long)t_out);
    if (t_in == t_out) {
        memcpy(y, x, (size_t)t_in * (size_t)C * sizeof *x);
        return AC_OK;
    }
    /* torch: the scale in float32, source positions and weights in double
     * (its CPU accumulation type), the weights stored as float32 */
    double scale = (float)t_in / (float)t_out;
    for (int64_t d = 0; d < t_out; d++) {
        double src = scale * ((double)d + 0.5) - 0.5;
        if (src < 0) src = 0;
        int64_t i0 = (int64_t)src, i1 = i0 + (i0 < t_in - 1);
        double w1 = src - (double)i0;
        w1 = w1 < 0 ? 0 : w1 > 1 ? 1 : w1;
        float l1 = (float)w1, l0 = (float)(1.0 - w1);
        const float *a = x + i0 * C, *b = x + i1 * C;
        float *o = y + d * C;
        for (int64_t k = 0; k < C; k++) o[k] = a[k] * l0 + b[k] * l1;
    }
    return AC_OK;
}
