#include "audio/logmel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"

ac_status ac_logmel_init(ac_logmel *l, const ac_stft_params *p, const ac_melbank *mel, ac_log_guard log,
                         float guard)
{
    memset(l, 0, sizeof *l);
    AC_TRY(ac_stft_init(&l->stft, p));
    if (mel->n_bins != l->stft.bins) {
        ac_stft_free(&l->stft);
        return ac_error(AC_ERR_ARG, "log-mel: the filterbank has %d bins, n_fft %d gives %d", mel->n_bins, p->n_fft,
                        l->stft.bins);
    }
    l->mel = mel;
    l->log = log;
    l->guard = guard;
    l->power = ac_calloc((size_t)l->stft.bins, sizeof *l->power);
    if (!l->power) {
        ac_logmel_free(l);
        return AC_ERR_NOMEM;
    }
    return AC_OK;
}

void ac_logmel_free(ac_logmel *l)
{
    ac_stft_free(&l->stft);
    free(l->power);
    l->power = NULL;
}

ac_status ac_logmel_frame(ac_logmel *l, const float *buf, int64_t base, int64_t len, int64_t n, int64_t t,
                          float *out)
{
    AC_TRY(ac_stft_frame(&l->stft, buf, base, len, n, t, AC_SPEC_POWER, l->power));
    ac_melbank_apply(l->mel, l->power, out);
    int M = l->mel->n_mels;
    if (l->log == AC_LOG_ADD) {
        for (int i = 0; i < M; i++) out[i] = logf(out[i] + l->guard);
    } else {
        for (int i = 0; i < M; i++) out[i] = log10f(fmaxf(out[i], l->guard));
    }
    return AC_OK;
}

void ac_logmel_whisper_scale(float *x, size_t n)
{
    float top = -INFINITY;
    for (size_t i = 0; i < n; i++) top = fmaxf(top, x[i]);
    for (size_t i = 0; i < n; i++) x[i] = (fmaxf(x[i], top - 8.0f) + 4.0f) / 4.0f;
}
