#include "audio/fft.h"

#include <kiss_fftr.h>
#include <math.h>
#include <stdlib.h>

#include "base/error.h"
#include "base/mem.h"

struct ac_fft {
    int n;
    kiss_fft_cfg fwd, inv;
    kiss_fft_cpx *in, *out;   /* [n] each; the float arrays are copied, not cast */
};

static ac_status check_size(int n)
{
    return n < 1 ? ac_error(AC_ERR_ARG, "FFT size %d must be >= 1", n) : AC_OK;
}

ac_status ac_fft_new(int n, ac_fft **out)
{
    *out = NULL;
    AC_TRY(check_size(n));
    ac_fft *f = ac_calloc(1, sizeof *f);
    if (!f) return AC_ERR_NOMEM;
    f->n = n;
    f->fwd = kiss_fft_alloc(n, 0, NULL, NULL);
    f->inv = kiss_fft_alloc(n, 1, NULL, NULL);
    f->in = ac_calloc((size_t)n, sizeof *f->in);
    f->out = ac_calloc((size_t)n, sizeof *f->out);
    if (!f->fwd || !f->inv || !f->in || !f->out) {
        ac_fft_free(f);
        return ac_error(AC_ERR_NOMEM, "out of memory for a %d-point FFT", n);
    }
    *out = f;
    return AC_OK;
}

static void transform(ac_fft *f, kiss_fft_cfg cfg, const float *in, float *out, float scale)
{
    for (int j = 0; j < f->n; j++) f->in[j] = (kiss_fft_cpx){in[2 * j], in[2 * j + 1]};
    kiss_fft(cfg, f->in, f->out);
    for (int k = 0; k < f->n; k++) {
        out[2 * k] = f->out[k].r * scale;
        out[2 * k + 1] = f->out[k].i * scale;
    }
}

void ac_fft_forward(ac_fft *f, const float *in, float *out) { transform(f, f->fwd, in, out, 1.0f); }

void ac_fft_inverse(ac_fft *f, const float *in, float *out)
{
    transform(f, f->inv, in, out, (float)(1.0 / f->n));
}

void ac_fft_free(ac_fft *f)
{
    if (!f) return;
    kiss_fft_free(f->fwd);
    kiss_fft_free(f->inv);
    free(f->in);
    free(f->out);
    free(f);
}

struct ac_rfft {
    int n, bins;
    kiss_fftr_cfg fwd, inv;   /* even n */
    kiss_fft_cpx *spec;       /* [bins]: the last forward transform */
    ac_fft *full;             /* odd n: the complex transform */
    float *time, *freq;       /* odd n: [2n] each */
};

ac_status ac_rfft_new(int n, ac_rfft **out)
{
    *out = NULL;
    AC_TRY(check_size(n));
    ac_rfft *f = ac_calloc(1, sizeof *f);
    if (!f) return AC_ERR_NOMEM;
    f->n = n;
    f->bins = n / 2 + 1;
    int ok;
    if (n % 2 == 0) {
        f->fwd = kiss_fftr_alloc(n, 0, NULL, NULL);
        f->inv = kiss_fftr_alloc(n, 1, NULL, NULL);
        ok = f->fwd && f->inv;
    } else {
        ac_status st = ac_fft_new(n, &f->full);
        if (st) {
            ac_rfft_free(f);
            return st;
        }
        f->time = ac_calloc(2 * (size_t)n, sizeof *f->time);
        f->freq = ac_calloc(2 * (size_t)n, sizeof *f->freq);
        ok = f->time && f->freq;
    }
    f->spec = ac_calloc((size_t)f->bins, sizeof *f->spec);
    if (!ok || !f->spec) {
        ac_rfft_free(f);
        return ac_error(AC_ERR_NOMEM, "out of memory for a %d-point FFT", n);
    }
    *out = f;
    return AC_OK;
}

/* The DFT of IN into f->spec. */
static void forward(ac_rfft *f, const float *in)
{
    if (!f->full) {
        kiss_fftr(f->fwd, in, f->spec);
        return;
    }
    for (int j = 0; j < f->n; j++) {
        f->time[2 * j] = in[j];
        f->time[2 * j + 1] = 0;
    }
    ac_fft_forward(f->full, f->time, f->freq);
    for (int k = 0; k < f->bins; k++) f->spec[k] = (kiss_fft_cpx){f->freq[2 * k], f->freq[2 * k + 1]};
}

void ac_rfft_forward(ac_rfft *f, const float *in, float *out)
{
    forward(f, in);
    for (int k = 0; k < f->bins; k++) {
        out[2 * k] = f->spec[k].r;
        out[2 * k + 1] = f->spec[k].i;
    }
}

void ac_rfft_magnitude(ac_rfft *f, const float *in, float *magnitude)
{
    forward(f, in);
    for (int k = 0; k < f->bins; k++) {
        float re = f->spec[k].r, im = f->spec[k].i;
        magnitude[k] = sqrtf(re * re + im * im);
    }
}

void ac_rfft_power(ac_rfft *f, const float *in, float *power)
{
    forward(f, in);
    for (int k = 0; k < f->bins; k++) {
        /* the magnitude first, then its square, as the references do */
        float re = f->spec[k].r, im = f->spec[k].i, mag = sqrtf(re * re + im * im);
        power[k] = mag * mag;
    }
}

void ac_rfft_inverse(ac_rfft *f, const float *in, float *out)
{
    int n = f->n;
    float scale = (float)(1.0 / n);
    if (!f->full) {
        /* kiss_fftri reads only the real parts of bins 0 and n/2 */
        for (int k = 0; k < f->bins; k++) f->spec[k] = (kiss_fft_cpx){in[2 * k], in[2 * k + 1]};
        kiss_fftri(f->inv, f->spec, out);
        for (int j = 0; j < n; j++) out[j] *= scale;
        return;
    }
    /* odd n: the Hermitian completion X[n-k] = conj X[k], with X[0] real */
    f->freq[0] = in[0];
    f->freq[1] = 0;
    for (int k = 1; k < f->bins; k++) {
        f->freq[2 * k] = f->freq[2 * (n - k)] = in[2 * k];
        f->freq[2 * k + 1] = in[2 * k + 1];
        f->freq[2 * (n - k) + 1] = -in[2 * k + 1];
    }
    ac_fft_inverse(f->full, f->freq, f->time);
    for (int j = 0; j < n; j++) out[j] = f->time[2 * j];
}

void ac_rfft_free(ac_rfft *f)
{
    if (!f) return;
    kiss_fftr_free(f->fwd);
    kiss_fftr_free(f->inv);
    free(f->spec);
    ac_fft_free(f->full);
    free(f->time);
    free(f->freq);
    free(f);
}
