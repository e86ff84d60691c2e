#include "audio/resample_sinc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"
#include "tensor/kernels.h"

#define LOWPASS_WIDTH 6
#define ROLLOFF 0.99
#define MAX_KERNEL_FLOATS (64 << 20)
/* input floats one pass copies into scratch (the chunk's window on the signal) */
#define CHUNK_FLOATS (1 << 16)

static long gcd(long a, long b)
{
    while (b) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* torchaudio's _get_sinc_resample_kernel in float32, operation by
 * operation: t = (-j/new + m/orig) * base clamped to +-6, Hann window
 * cos(t*pi/6/2)^2, sinc(pi*t), times base/orig. */
static void make_kernels(ac_sinc_resampler *r, double base)
{
    const float pi = (float)M_PI, fbase = (float)base, scale = (float)(base / r->orig);
    const float lim = (float)LOWPASS_WIDTH;
    for (int j = 0; j < r->new_rate; j++) {
        float phase = (float)-j / (float)r->new_rate;
        float *row = r->kernel + (size_t)j * (size_t)r->stride;
        for (int m = 0; m < r->taps; m++) {
            float t = (phase + (float)(m - r->width) / (float)r->orig) * fbase;
            t = t < -lim ? -lim : t > lim ? lim : t;
            float w = cosf(t * pi / lim / 2.0f);
            w = w * w;
            t *= pi;
            float k = t == 0.0f ? 1.0f : sinf(t) / t;
            row[m] = k * (w * scale);
        }
    }
}

ac_status ac_sinc_resampler_init(ac_sinc_resampler *r, int orig_rate, int new_rate)
{
    memset(r, 0, sizeof *r);
    if (orig_rate <= 0 || new_rate <= 0)
        return ac_error(AC_ERR_ARG, "resample: rates %d -> %d: both must be positive", orig_rate, new_rate);
    long g = gcd(orig_rate, new_rate);
    r->orig = (int)(orig_rate / g);
    r->new_rate = (int)(new_rate / g);
    if (r->orig == r->new_rate) return AC_OK; /* equal rates: a copy */
    double base = (r->orig < r->new_rate ? r->orig : r->new_rate) * ROLLOFF;
    double width = ceil(LOWPASS_WIDTH * (double)r->orig / base);
    double taps = 2 * width + r->orig, stride = ceil(taps / 8) * 8;
    if (stride * r->new_rate > MAX_KERNEL_FLOATS)
        return ac_error(AC_ERR_ARG,
                        "resample: rates %d -> %d reduce only to %d -> %d, whose kernels would take %.0f floats "
                        "(at most %d): choose rates with a larger common divisor",
                        orig_rate, new_rate, r->orig, r->new_rate, stride * r->new_rate, MAX_KERNEL_FLOATS);
    r->width = (int)width;
    r->taps = (int)taps;
    r->stride = (int)stride;
    r->kernel = ac_calloc((size_t)r->new_rate * (size_t)r->stride, sizeof *r->kernel);
    if (!r->kernel) return AC_ERR_NOMEM;
    make_kernels(r, base);
    return AC_OK;
}

void ac_sinc_resampler_free(ac_sinc_resampler *r)
{
    free(r->kernel);
    r->kernel = NULL;
}

int64_t ac_sinc_resampled_len(const ac_sinc_resampler *r, int64_t n)
{
    if (n < 0 || n > (INT64_MAX - r->orig) / r->new_rate) return -1;
    return (n * r->new_rate + r->orig - 1) / r->orig;
}

/* Checks the input; equal rates copy it, and *DONE says so. */
static ac_status begin(const ac_sinc_resampler *r, const float *x, int64_t n, float *out, int *done)
{
    *done = 0;
    if (n <= 0 || ac_sinc_resampled_len(r, n) < 0)
        return ac_error(AC_ERR_ARG, "resample: %lld samples: need at least one (and not absurdly many)",
                        (long long)n);
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return ac_error(AC_ERR_ARG, "resample: sample %lld is not finite (%g)", (long long)i, (double)x[i]);
    if (!r->kernel) {
        memcpy(out, x, (size_t)n * sizeof *x);
        *done = 1;
    }
    return AC_OK;
}

ac_status ac_sinc_resample(const ac_sinc_resampler *r, const float *x, int64_t n, ac_arena *scratch, float *out)
{
    int done;
    ac_status st = begin(r, x, n, out, &done);
    if (st || done) return st;
    int64_t len = ac_sinc_resampled_len(r, n);
    /* Output block i (new_rate samples) reads the padded signal from
     * i*orig on: a chunk of blocks copies its window of the signal, zeros
     * outside it, and the kernels run on that copy. */
    int64_t orig = r->orig, nb = r->new_rate;
    int64_t blocks = (len + nb - 1) / nb;
    int64_t per = CHUNK_FLOATS / orig > 16 ? CHUNK_FLOATS / orig : 16;
    int64_t win = (per - 1) * orig + r->stride;
    float *buf = ac_arena_floats(scratch, (size_t)win), *ybuf = ac_arena_floats(scratch, (size_t)(per * nb));
    if (!buf || !ybuf) return AC_ERR_NOMEM;
    for (int64_t b0 = 0; b0 < blocks; b0 += per) {
        int64_t nblk = blocks - b0 < per ? blocks - b0 : per;
        int64_t first = b0 * orig - r->width, span = (nblk - 1) * orig + r->stride;
        for (int64_t q = 0; q < span; q++) {
            int64_t p = first + q;
            buf[q] = p >= 0 && p < n ? x[p] : 0.0f;
        }
        ac_polyphase(r->kernel, (size_t)r->taps, (size_t)r->stride, (size_t)r->new_rate, buf, (size_t)r->orig,
                     (size_t)nblk, ybuf);
        int64_t o0 = b0 * nb, take = len - o0 < nblk * nb ? len - o0 : nblk * nb;
        memcpy(out + o0, ybuf, (size_t)take * sizeof *out);
    }
    return AC_OK;
}

ac_status ac_sinc_resample_ref(const ac_sinc_resampler *r, const float *x, int64_t n, float *out)
{
    int done;
    ac_status st = begin(r, x, n, out, &done);
    if (st || done) return st;
    int64_t len = ac_sinc_resampled_len(r, n);
    for (int64_t o = 0; o < len; o++) {
        int64_t i = o / r->new_rate, j = o % r->new_rate;
        const float *k = r->kernel + j * r->stride;
        float acc = 0;
        for (int m = 0; m < r->taps; m++) {
            int64_t p = i * r->orig - r->width + m;
            if (p >= 0 && p < n) acc += k[m] * x[p];
        }
        out[o] = acc;
    }
    return AC_OK;
}
