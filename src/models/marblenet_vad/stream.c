/* MarbleNet over a stream: log-mel frames as samples arrive, then the
 * encoder on overlapping windows of frames. A window reaches MARGIN output
 * frames past the outputs it keeps, so every kept output sees exactly the
 * inputs (and the zero padding at the true ends) of the whole-signal pass. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/logmel.h"
#include "base/arena.h"
#include "base/error.h"
#include "models/marblenet_vad/model.h"

#define WINDOW_OUT 2048          /* output frames kept per encoder window */
#define LOG_GUARD 5.960464477539063e-8f /* 2^-24 */

struct ac_marblenet_stream {
    const ac_marblenet *m;
    ac_logmel logmel;
    /* samples: index 0 of buf is absolute sample buf_base */
    float *buf;
    size_t buf_n, buf_cap;
    int64_t buf_base, n_samples;
    int64_t next_frame;          /* next STFT frame to compute */
    /* features [frame][n_mels]: index 0 is absolute frame feat_base */
    float *feat;
    size_t feat_n, feat_cap;
    int64_t feat_base;
    int64_t next_out;            /* next output frame to produce */
    /* per-window scratch */
    ac_arena arena;
    float *x, *y, *res, *tmp, *cols, *logits;
    size_t max_rows;
};

ac_status ac_marblenet_stream_new(const ac_marblenet *m, ac_marblenet_stream **out)
{
    *out = NULL;
    ac_marblenet_stream *s = ac_calloc(1, sizeof *s);
    if (!s) return AC_ERR_NOMEM;
    s->m = m;
    ac_stft_params sp = {.n_fft = m->n_fft, .hop = m->hop, .win = m->win, .window = m->window,
                         .layout = AC_STFT_CENTER, .pad = AC_PAD_ZERO};
    ac_status st = ac_logmel_init(&s->logmel, &sp, &m->mel, AC_LOG_ADD, LOG_GUARD);
    if (st) {
        free(s);
        return st;
    }
    ac_arena_init(&s->arena, 1u << 20);
    s->buf_cap = (size_t)m->n_fft + 8192;
    s->feat_cap = (size_t)m->stride * (WINDOW_OUT + 2 * (size_t)m->margin + 2) + (size_t)m->pad_to + 4;
    s->max_rows = s->feat_cap;
    size_t C = (size_t)m->max_channels, K = 1;
    for (int b = 0; b < m->n_blocks; b++)
        if (!m->blocks[b].separable && (size_t)m->blocks[b].kernel > K) K = (size_t)m->blocks[b].kernel;
    ac_arena *a = &s->arena;
    s->buf = ac_arena_floats(a, s->buf_cap);
    s->feat = ac_arena_floats(a, s->feat_cap * (size_t)m->n_mels);
    s->x = ac_arena_floats(a, s->max_rows * C);
    s->y = ac_arena_floats(a, s->max_rows * C);
    s->res = ac_arena_floats(a, s->max_rows * C);
    s->tmp = ac_arena_floats(a, s->max_rows * C);
    s->cols = ac_arena_floats(a, s->max_rows * C * K);
    s->logits = ac_arena_floats(a, s->max_rows * (size_t)m->n_classes);
    if (!s->buf || !s->feat || !s->x || !s->y || !s->res || !s->tmp ||
        !s->cols || !s->logits) {
        ac_marblenet_stream_free(s);
        return AC_ERR_NOMEM;
    }
    *out = s;
    return AC_OK;
}

void ac_marblenet_stream_free(ac_marblenet_stream *s)
{
    if (!s) return;
    ac_logmel_free(&s->logmel);
    ac_arena_free(&s->arena);
    free(s);
}

/* ---- front end ------------------------------------------------------------- */

static ac_status push_feature(ac_marblenet_stream *s, const float *f)
{
    size_t M = (size_t)s->m->n_mels;
    if (s->feat_n == s->feat_cap)
        return ac_error(AC_ERR_ARG, "marblenet: feature buffer overflow"); /* cannot happen */
    memcpy(s->feat + s->feat_n * M, f, M * sizeof *f);
    s->feat_n++;
    return AC_OK;
}

/* Log-mel features of STFT frame T. */
static ac_status compute_frame(ac_marblenet_stream *s, int64_t t)
{
    float mel[1024];
    AC_TRY(ac_logmel_frame(&s->logmel, s->buf, s->buf_base, (int64_t)s->buf_n, s->n_samples, t, mel));
    return push_feature(s, mel);
}

/* ---- encoder ----------------------------------------------------------------- */

static void swap(float **a, float **b)
{
    float *t = *a;
    *a = *b;
    *b = t;
}

/* Runs the network on feature frames [f0, f1) (absolute) and appends the
 * probabilities of output frames [keep0, keep1). */
static ac_status run_window(ac_marblenet_stream *s, int64_t f0, int64_t f1, int64_t keep0,
                            int64_t keep1, ac_floatvec *probs)
{
    const ac_marblenet *m = s->m;
    size_t T = (size_t)(f1 - f0);
    float *x = s->x, *y = s->y;
    memcpy(x, s->feat + (size_t)(f0 - s->feat_base) * m->n_mels, T * m->n_mels * sizeof *x);
    for (int bi = 0; bi < m->n_blocks; bi++) {
        const mb_block *b = &m->blocks[bi];
        if (b->residual) {
            ac_matmul(x, &b->res_pw, NULL, s->res, T);
            ac_channel_affine(s->res, T, (size_t)b->filters, b->res_scale, b->res_shift, 0);
        }
        for (int r = 0; r < b->repeat; r++) {
            const mb_repeat *rp = &b->rep[r];
            size_t To = ac_conv1d_out_len(&rp->shape, T);
            if (b->separable) {
                ac_conv1d_depthwise(&rp->shape, x, 1, T, rp->dw, NULL, s->tmp);
                ac_matmul(s->tmp, &rp->pw, NULL, y, To);
            } else {
                ac_conv1d(&rp->shape, x, 1, T, rp->conv, NULL, y, s->cols);
            }
            /* ReLU between repeats; the last one's comes after the residual */
            int last = r == b->repeat - 1;
            ac_channel_affine(y, To, (size_t)b->filters, rp->bn_scale, rp->bn_shift, !last);
            T = To;
            swap(&x, &y);
        }
        size_t n = T * (size_t)b->filters;
        if (b->residual)
            for (size_t i = 0; i < n; i++) x[i] += s->res[i];
        ac_relu(x, n);
    }
    int C = m->n_classes;
    ac_matmul(x, &m->dec_w, m->dec_b, s->logits, T);
    int64_t out0 = f0 / m->stride;
    for (int64_t j = keep0; j < keep1; j++) {
        float *l = s->logits + (size_t)(j - out0) * C;
        float p;
        if (C == 1) {
            p = 1.0f / (1.0f + expf(-l[0]));
        } else {
            ac_softmax_rows(l, 1, (size_t)C);
            p = l[1];
        }
        AC_TRY(ac_floatvec_push(probs, &p, 1));
    }
    return AC_OK;
}

/* Frees feature frames that no later window reads. */
static void drop_features(ac_marblenet_stream *s)
{
    int64_t lo = (s->next_out - s->m->margin) * s->m->stride;
    if (lo <= s->feat_base) return;
    size_t drop = (size_t)(lo - s->feat_base);
    if (drop > s->feat_n) drop = s->feat_n;
    size_t M = (size_t)s->m->n_mels;
    memmove(s->feat, s->feat + drop * M, (s->feat_n - drop) * M * sizeof *s->feat);
    s->feat_n -= drop;
    s->feat_base += (int64_t)drop;
}

/* Produces outputs up to LIMIT whose windows are covered by the features
 * at hand; with FINAL the features end at the true end of the signal. */
static ac_status run_windows(ac_marblenet_stream *s, int64_t total_out, int final, ac_floatvec *probs)
{
    const ac_marblenet *m = s->m;
    int64_t have = s->feat_base + (int64_t)s->feat_n;
    for (;;) {
        int64_t a = s->next_out;
        int64_t b = a + WINDOW_OUT;
        if (final) {
            if (a >= total_out) break;
            if (b > total_out) b = total_out;
        } else if ((b + m->margin) * m->stride > have) {
            break;
        }
        int64_t f0 = (a - m->margin) * m->stride;
        if (f0 < 0) f0 = 0;
        int64_t f1 = (b + m->margin) * m->stride;
        if (f1 > have) f1 = have;
        AC_TRY(run_window(s, f0, f1, a, b, probs));
        s->next_out = b;
        drop_features(s);
    }
    return AC_OK;
}

/* Computes every STFT frame whose samples have all arrived. */
static ac_status compute_frames(ac_marblenet_stream *s, ac_floatvec *probs)
{
    while (ac_stft_frame_end(&s->logmel.stft, s->next_frame) <= s->n_samples) {
        AC_TRY(compute_frame(s, s->next_frame++));
        if (s->feat_n == s->feat_cap) AC_TRY(run_windows(s, 0, 0, probs));
    }
    return run_windows(s, 0, 0, probs);
}

ac_status ac_marblenet_stream_feed(ac_marblenet_stream *s, const float *pcm, size_t n, ac_floatvec *probs)
{
    while (n > 0) {
        /* keep only the samples that a future frame still reads */
        int64_t keep_from = ac_stft_frame_begin(&s->logmel.stft, s->next_frame);
        if (keep_from > s->buf_base) {
            size_t drop = (size_t)(keep_from - s->buf_base);
            if (drop > s->buf_n) drop = s->buf_n;
            memmove(s->buf, s->buf + drop, (s->buf_n - drop) * sizeof *s->buf);
            s->buf_n -= drop;
            s->buf_base += (int64_t)drop;
        }
        size_t room = s->buf_cap - s->buf_n;
        size_t k = n < room ? n : room;
        memcpy(s->buf + s->buf_n, pcm, k * sizeof *pcm);
        s->buf_n += k;
        s->n_samples += (int64_t)k;
        pcm += k;
        n -= k;
        AC_TRY(compute_frames(s, probs));
    }
    return AC_OK;
}

ac_status ac_marblenet_stream_finish(ac_marblenet_stream *s, ac_floatvec *probs)
{
    const ac_marblenet *m = s->m;
    int64_t frames = 1 + s->n_samples / m->hop;
    int64_t padded = m->pad_to > 0 ? (frames + m->pad_to - 1) / m->pad_to * m->pad_to : frames;
    float zeros[1024] = {0};
    while (s->next_frame < padded) {
        if (s->next_frame < frames) AC_TRY(compute_frame(s, s->next_frame));
        else AC_TRY(push_feature(s, zeros)); /* pad_to frames are 0 in the log domain */
        s->next_frame++;
        if (s->feat_n == s->feat_cap) AC_TRY(run_windows(s, 0, 0, probs));
    }
    return run_windows(s, (int64_t)ac_marblenet_out_len(m, (size_t)padded), 1, probs);
}
