#include "audio/fft.h"

#include <kiss_fftr.h>
#include <math.h>
#include <stdlib.h>

#include "base/error.h"
#include "base/mem.h"

struct ac_rfft {
    int n;
    kiss_fftr_cfg cfg;
    kiss_fft_cpx *out;
};

ac_status ac_rfft_new(int n, ac_rfft **out)
{
    *out = NULL;
    if (n < 2 || n % 2) return ac_error(AC_ERR_ARG, "FFT size %d must be even and >= 2", n);
    ac_rfft *f = ac_calloc(1, sizeof *f);
    if (!f) return AC_ERR_NOMEM;
    f->n = n;
    f->cfg = kiss_fftr_alloc(n, 0, NULL, NULL);
    f->out = ac_calloc((size_t)n / 2 + 1, sizeof *f->out);
    if (!f->cfg || !f->out) {
        ac_rfft_free(f);
        return ac_error(AC_ERR_NOMEM, "out of memory for a %d-point FFT", n);
    }
    *out = f;
    return AC_OK;
}

void ac_rfft_power(ac_rfft *f, const float *in, float *power)
{
    kiss_fftr(f->cfg, in, f->out);
    for (int k = 0; k <= f->n / 2; k++) {
        /* the magnitude first, then its square, as the references do */
        float mag = sqrtf(f->out[k].r * f->out[k].r + f->out[k].i * f->out[k].i);
        power[k] = mag * mag;
    }
}

void ac_rfft_free(ac_rfft *f)
{
    if (!f) return;
    kiss_fftr_free(f->cfg);
    free(f->out);
    free(f);
}
