#include "audio/stft.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"

ac_status ac_stft_init(ac_stft *s, const ac_stft_params *p)
{
    memset(s, 0, sizeof *s);
    if (p->n_fft < 1 || p->hop < 1 || p->win < 1 || p->win > p->n_fft)
        return ac_error(AC_ERR_ARG, "STFT: n_fft %d, hop %d, window %d: need n_fft, hop >= 1 and 1 <= window <= n_fft",
                        p->n_fft, p->hop, p->win);
    if (p->layout == AC_STFT_SAME && p->hop > p->n_fft)
        return ac_error(AC_ERR_ARG, "STFT: hop %d longer than n_fft %d", p->hop, p->n_fft);
    s->p = *p;
    s->bins = p->n_fft / 2 + 1;
    s->pad_len = p->layout == AC_STFT_CENTER ? p->n_fft / 2 : p->layout == AC_STFT_SAME ? (p->n_fft - p->hop) / 2 : 0;
    s->window = p->window;
    if (!s->window) {
        s->ones = ac_malloc((size_t)p->win * sizeof *s->ones);
        if (!s->ones) return AC_ERR_NOMEM;
        for (int i = 0; i < p->win; i++) s->ones[i] = 1;
        s->window = s->ones;
    }
    ac_status st = ac_rfft_new(p->n_fft, &s->fft);
    s->frame = st ? NULL : ac_calloc((size_t)p->n_fft, sizeof *s->frame);
    if (st || !s->frame) {
        ac_stft_free(s);
        return st ? st : AC_ERR_NOMEM;
    }
    return AC_OK;
}

void ac_stft_free(ac_stft *s)
{
    ac_rfft_free(s->fft);
    free(s->frame);
    free(s->ones);
    s->fft = NULL;
    s->frame = s->ones = NULL;
    s->window = NULL;
}

int64_t ac_stft_frames(const ac_stft *s, int64_t n)
{
    int64_t padded = n + 2 * (int64_t)s->pad_len;
    return padded < s->p.n_fft ? 0 : 1 + (padded - s->p.n_fft) / s->p.hop;
}

int64_t ac_stft_frame_begin(const ac_stft *s, int64_t t)
{
    return t * s->p.hop - s->pad_len + (s->p.n_fft - s->p.win) / 2;
}

int64_t ac_stft_frame_end(const ac_stft *s, int64_t t) { return ac_stft_frame_begin(s, t) + s->p.win; }

/* The sample that padding position J (outside [0, n)) reads, or -1 for 0. */
static int64_t padding_source(const ac_stft *s, int64_t j, int64_t n)
{
    if (s->p.pad == AC_PAD_ZERO || n == 0) return -1;
    if (n == 1) return 0;
    int64_t period = 2 * (n - 1);
    j %= period;
    if (j < 0) j += period;
    return j < n ? j : period - j;
}

static ac_status missing(int64_t t, int64_t j, int64_t base, int64_t len)
{
    return ac_error(AC_ERR_ARG, "STFT frame %lld reads sample %lld, not in the buffer [%lld, %lld)", (long long)t,
                    (long long)j, (long long)base, (long long)(base + len));
}

/* The windowed frame T into s->frame. */
static ac_status fill_frame(ac_stft *s, const float *buf, int64_t base, int64_t len, int64_t n, int64_t t)
{
    int win = s->p.win, off = (s->p.n_fft - win) / 2;
    const float *w = s->window;
    float *f = s->frame + off;
    /* around a short window (the ISTFT also writes there) */
    memset(s->frame, 0, (size_t)off * sizeof *f);
    memset(f + win, 0, (size_t)(s->p.n_fft - off - win) * sizeof *f);
    int64_t first = ac_stft_frame_begin(s, t);
    /* window positions [i0, i1) are inside the signal, the rest padding */
    int64_t lo = first < 0 ? 0 : first, hi = first + win < n ? first + win : n;
    int i0 = (int)(lo - first), i1 = hi > lo ? (int)(hi - first) : i0;
    if (i0 > win) i0 = i1 = win;
    if (i1 > i0) {
        if (lo < base || hi > base + len) return missing(t, lo < base ? lo : hi - 1, base, len);
        const float *x = buf + (lo - base), *wi = w + i0;
        float *fi = f + i0;
        for (int i = 0; i < i1 - i0; i++) fi[i] = x[i] * wi[i];
    }
    for (int i = 0; i < win; i++) {
        if (i == i0) i = i1;
        if (i >= win) break;
        int64_t j = padding_source(s, first + i, n);
        if (j >= 0 && (j < base || j >= base + len)) return missing(t, j, base, len);
        f[i] = j < 0 ? 0.0f : buf[j - base] * w[i];
    }
    return AC_OK;
}

ac_status ac_stft_frame(ac_stft *s, const float *buf, int64_t base, int64_t len, int64_t n, int64_t t,
                        ac_spec_kind kind, float *out)
{
    AC_TRY(fill_frame(s, buf, base, len, n, t));
    switch (kind) {
    case AC_SPEC_POWER: ac_rfft_power(s->fft, s->frame, out); break;
    case AC_SPEC_MAGNITUDE: ac_rfft_magnitude(s->fft, s->frame, out); break;
    case AC_SPEC_COMPLEX: ac_rfft_forward(s->fft, s->frame, out); break;
    }
    return AC_OK;
}

ac_status ac_stft_signal(ac_stft *s, const float *x, int64_t n, ac_spec_kind kind, float *out)
{
    int64_t frames = ac_stft_frames(s, n);
    size_t stride = (size_t)s->bins * (kind == AC_SPEC_COMPLEX ? 2 : 1);
    for (int64_t t = 0; t < frames; t++) AC_TRY(ac_stft_frame(s, x, 0, n, n, t, kind, out + (size_t)t * stride));
    return AC_OK;
}

int64_t ac_istft_length(const ac_stft *s, int64_t frames)
{
    if (frames < 1) return 0;
    return s->p.n_fft + s->p.hop * (frames - 1) - 2 * (int64_t)s->pad_len;
}

/* Vocos's ISTFT (padding "same") overlap-adds without centring and drops
 * (n_fft - hop)/2 samples at each end, giving T*hop samples for T frames;
 * torch.istft(center=True) would drop n_fft/2 and give (T-1)*hop. So it is
 * the layout AC_STFT_SAME here, not a length argument to the centred one:
 * with it the forward transform is Vocos's too (reflect (n_fft-hop)/2). */
ac_status ac_istft(ac_stft *s, const float *spec, int64_t frames, int64_t length, float *out)
{
    if (frames < 1) return ac_error(AC_ERR_ARG, "ISTFT of %lld frames", (long long)frames);
    if (length < 0) length = ac_istft_length(s, frames);
    /* output sample i is overlap-add position pad_len + i; past the end of
     * the overlap-added frames it stays 0 */
    int64_t valid = ac_istft_length(s, frames) + s->pad_len;
    if (valid > length) valid = length;
    float *env = ac_calloc(length > 0 ? (size_t)length : 1, sizeof *env);
    if (!env) return AC_ERR_NOMEM;
    memset(out, 0, (size_t)length * sizeof *out);
    int win = s->p.win, off = (s->p.n_fft - win) / 2;
    const float *w = s->window;
    for (int64_t t = 0; t < frames; t++) {
        int64_t first = t * s->p.hop + off - s->pad_len;   /* output index of window sample 0 */
        if (first >= valid) break;
        if (first + win <= 0) continue;
        ac_rfft_inverse(s->fft, spec + (size_t)t * 2 * s->bins, s->frame);
        const float *f = s->frame + off;
        int i0 = first < 0 ? (int)-first : 0;
        int i1 = first + win > valid ? (int)(valid - first) : win;
        for (int i = i0; i < i1; i++) {
            out[first + i] += f[i] * w[i];
            env[first + i] += w[i] * w[i];
        }
    }
    for (int64_t i = 0; i < valid; i++) {
        if (!(fabsf(env[i]) >= 1e-11f)) {
            ac_status st = ac_error(AC_ERR_ARG,
                                    "ISTFT: the overlap-added squared window is %g at output sample %lld (< 1e-11)",
                                    env[i], (long long)i);
            free(env);
            memset(out, 0, (size_t)length * sizeof *out);
            return st;
        }
        out[i] /= env[i];
    }
    free(env);
    return AC_OK;
}
