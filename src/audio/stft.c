#include "audio/stft.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"

ac_status ac_stft_init(ac_stft *s, int n_fft, int hop, int win, const float *window)
{
    memset(s, 0, sizeof *s);
    if (win > n_fft || hop < 1) return ac_error(AC_ERR_ARG, "STFT: window %d longer than n_fft %d", win, n_fft);
    s->n_fft = n_fft;
    s->hop = hop;
    s->win = win;
    s->window = window;
    AC_TRY(ac_rfft_new(n_fft, &s->fft));
    s->frame = ac_calloc((size_t)n_fft, sizeof *s->frame);
    if (!s->frame) {
        ac_stft_free(s);
        return AC_ERR_NOMEM;
    }
    return AC_OK;
}

void ac_stft_free(ac_stft *s)
{
    ac_rfft_free(s->fft);
    free(s->frame);
    s->fft = NULL;
    s->frame = NULL;
}

int64_t ac_stft_frame_begin(const ac_stft *s, int64_t t)
{
    return t * s->hop - s->n_fft / 2 + (s->n_fft - s->win) / 2;
}

int64_t ac_stft_frame_end(const ac_stft *s, int64_t t) { return ac_stft_frame_begin(s, t) + s->win; }

void ac_stft_power(ac_stft *s, const float *buf, int64_t base, int64_t len, int64_t n,
                   int64_t t, float *power)
{
    int off = (s->n_fft - s->win) / 2;
    int64_t first = ac_stft_frame_begin(s, t);
    memset(s->frame, 0, (size_t)s->n_fft * sizeof *s->frame);
    for (int i = 0; i < s->win; i++) {
        int64_t j = first + i;
        if (j >= 0 && j < n && j >= base && j < base + len) s->frame[off + i] = buf[j - base] * s->window[i];
    }
    ac_rfft_power(s->fft, s->frame, power);
}
