#include "models/silero_vad/silero_vad.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/arena.h"
#include "base/error.h"
#include "io/weights.h"
#include "tensor/kernels.h"

#define CONTEXT 64
#define INPUT (CONTEXT + AC_SILERO_CHUNK) /* 576 */
#define PADDED (INPUT + 64)               /* reflect-padded on the right */
#define NFFT 256
#define BINS (NFFT / 2 + 1)               /* 129 */
#define FRAMES 4                          /* STFT frames per chunk */
#define HIDDEN 128
#define BATCH 128                         /* chunks whose encoder runs together */

typedef struct {
    ac_conv1d_shape shape;
    float *w;          /* [cout][kernel][cin] */
    const float *b;
} conv_layer;

struct ac_silero {
    ac_weights *weights;
    ac_conv1d_shape stft_shape;
    const float *stft;          /* [258][256] */
    conv_layer conv[4];
    ac_mat w_ih;                /* [512][128] */
    const float *w_hh;          /* [512][128] */
    float *b_gates;             /* b_ih + b_hh */
    const float *final_w, *final_b;
};

struct ac_silero_stream {
    const ac_silero *m;
    float context[CONTEXT];
    float h[HIDDEN], c[HIDDEN];
    float *pending;             /* BATCH chunks of input not yet scored */
    size_t n_pending;
    ac_arena arena;
    float *padded, *spec, *mag, *act[4], *cols, *gx, *gates;
};

static ac_status load_conv(ac_weights *w, conv_layer *l, int idx, int cin, int cout, int stride)
{
    const float *torch_w;
    AC_TRY(ac_weights_f32(w, AC_SHAPE(cout, cin, 3), &torch_w, "conv%d.weight", idx));
    AC_TRY(ac_weights_vec(w, cout, &l->b, "conv%d.bias", idx));
    l->w = ac_weights_scratch(w, (size_t)cout * cin * 3);
    if (!l->w) return AC_ERR_NOMEM;
    ac_conv1d_weight_from_torch(torch_w, l->w, cout, cin, 3);
    l->shape = (ac_conv1d_shape){.cin = cin, .cout = cout, .kernel = 3, .stride = stride, .pad = 1, .dilation = 1};
    return AC_OK;
}

static ac_status load_tensors(ac_silero *m)
{
    ac_weights *w = m->weights;
    AC_TRY(ac_weights_f32(w, AC_SHAPE(2 * BINS, 1, NFFT), &m->stft, "stft_conv.weight"));
    m->stft_shape = (ac_conv1d_shape){.cin = 1, .cout = 2 * BINS, .kernel = NFFT,
                                      .stride = NFFT / 2, .pad = 0, .dilation = 1};
    AC_TRY(load_conv(w, &m->conv[0], 1, BINS, 128, 1));
    AC_TRY(load_conv(w, &m->conv[1], 2, 128, 64, 2));
    AC_TRY(load_conv(w, &m->conv[2], 3, 64, 64, 2));
    AC_TRY(load_conv(w, &m->conv[3], 4, 64, 128, 1));
    const float *b_ih, *b_hh;
    const float *w_ih;
    AC_TRY(ac_weights_f32(w, AC_SHAPE(4 * HIDDEN, 128), &w_ih, "lstm_cell.weight_ih"));
    m->w_ih = ac_mat_f32(w_ih, 4 * HIDDEN, 128);
    AC_TRY(ac_weights_f32(w, AC_SHAPE(4 * HIDDEN, HIDDEN), &m->w_hh, "lstm_cell.weight_hh"));
    AC_TRY(ac_weights_f32(w, AC_SHAPE(4 * HIDDEN), &b_ih, "lstm_cell.bias_ih"));
    AC_TRY(ac_weights_f32(w, AC_SHAPE(4 * HIDDEN), &b_hh, "lstm_cell.bias_hh"));
    m->b_gates = ac_weights_scratch(w, 4 * HIDDEN);
    if (!m->b_gates) return AC_ERR_NOMEM;
    for (int i = 0; i < 4 * HIDDEN; i++) m->b_gates[i] = b_ih[i] + b_hh[i];
    AC_TRY(ac_weights_f32(w, AC_SHAPE(1, HIDDEN, 1), &m->final_w, "final_conv.weight"));
    AC_TRY(ac_weights_f32(w, AC_SHAPE(1), &m->final_b, "final_conv.bias"));
    return AC_OK;
}

ac_status ac_silero_load(const char *path, ac_silero **out)
{
    *out = NULL;
    char file[4096];
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        snprintf(file, sizeof file, "%s/silero_vad_16k.safetensors", path);
    else
        snprintf(file, sizeof file, "%s", path);
    ac_silero *m = ac_calloc(1, sizeof *m);
    if (!m) return AC_ERR_NOMEM;
    ac_status s = ac_weights_open(file, &m->weights);
    if (!s) s = load_tensors(m);
    if (s) {
        ac_silero_free(m);
        return s;
    }
    *out = m;
    return AC_OK;
}

void ac_silero_free(ac_silero *m)
{
    if (!m) return;
    ac_weights_free(m->weights);
    free(m);
}

ac_status ac_silero_stream_new(const ac_silero *m, ac_silero_stream **out)
{
    *out = NULL;
    ac_silero_stream *s = ac_calloc(1, sizeof *s);
    if (!s) return AC_ERR_NOMEM;
    s->m = m;
    ac_arena_init(&s->arena, 1u << 20);
    ac_arena *a = &s->arena;
    size_t cols = ac_conv1d_scratch(&m->stft_shape, BATCH, PADDED);
    size_t T = FRAMES;
    for (int i = 0; i < 4; i++) {
        size_t c = ac_conv1d_scratch(&m->conv[i].shape, BATCH, T);
        if (c > cols) cols = c;
        T = ac_conv1d_out_len(&m->conv[i].shape, T);
    }
    s->pending = ac_arena_floats(a, BATCH * AC_SILERO_CHUNK);
    s->padded = ac_arena_floats(a, BATCH * PADDED);
    s->spec = ac_arena_floats(a, BATCH * FRAMES * 2 * BINS);
    s->mag = ac_arena_floats(a, BATCH * FRAMES * BINS);
    for (int i = 0; i < 4; i++) s->act[i] = ac_arena_floats(a, BATCH * FRAMES * 128);
    s->cols = ac_arena_floats(a, cols);
    s->gx = ac_arena_floats(a, BATCH * 4 * HIDDEN);
    s->gates = ac_arena_floats(a, 4 * HIDDEN);
    if (!s->gates || !s->gx || !s->cols || !s->act[3] || !s->mag || !s->spec || !s->padded || !s->pending) {
        ac_silero_stream_free(s);
        return AC_ERR_NOMEM;
    }
    *out = s;
    return AC_OK;
}

void ac_silero_stream_free(ac_silero_stream *s)
{
    if (!s) return;
    ac_arena_free(&s->arena);
    free(s);
}

/* Scores the first N chunks of s->pending. The encoder sees each chunk
 * with the 64 samples before it, so all N run as one batch; only the LSTM
 * steps through them in order. */
static ac_status run_batch(ac_silero_stream *s, size_t n, ac_floatvec *probs)
{
    const ac_silero *m = s->m;
    for (size_t b = 0; b < n; b++) {
        float *x = s->padded + b * PADDED;
        const float *ctx = b == 0 ? s->context : s->pending + b * AC_SILERO_CHUNK - CONTEXT;
        memcpy(x, ctx, CONTEXT * sizeof *x);
        memcpy(x + CONTEXT, s->pending + b * AC_SILERO_CHUNK, AC_SILERO_CHUNK * sizeof *x);
        for (int j = 0; j < 64; j++) x[INPUT + j] = x[INPUT - 2 - j]; /* reflect, edge excluded */
    }
    memcpy(s->context, s->pending + n * AC_SILERO_CHUNK - CONTEXT, CONTEXT * sizeof *s->context);

    ac_conv1d(&m->stft_shape, s->padded, n, PADDED, m->stft, NULL, s->spec, s->cols);
    for (size_t f = 0; f < n * FRAMES; f++) {
        const float *re = s->spec + f * 2 * BINS, *im = re + BINS;
        for (int k = 0; k < BINS; k++) s->mag[f * BINS + k] = sqrtf(re[k] * re[k] + im[k] * im[k]);
    }
    const float *x = s->mag;
    size_t T = FRAMES;
    for (int i = 0; i < 4; i++) {
        const conv_layer *l = &m->conv[i];
        ac_conv1d(&l->shape, x, n, T, l->w, l->b, s->act[i], s->cols);
        T = ac_conv1d_out_len(&l->shape, T);
        ac_relu(s->act[i], n * T * (size_t)l->shape.cout);
        x = s->act[i];
    }
    /* T is now 1: x is [n][128], the LSTM input of each chunk */
    ac_matmul(x, &m->w_ih, m->b_gates, s->gx, n);
    for (size_t b = 0; b < n; b++) {
        ac_lstm_cell(s->gx + b * 4 * HIDDEN, m->w_hh, s->h, s->c, HIDDEN, s->gates);
        float logit = m->final_b[0];
        for (int j = 0; j < HIDDEN; j++) logit += m->final_w[j] * (s->h[j] > 0 ? s->h[j] : 0);
        float p = 1.0f / (1.0f + expf(-logit));
        AC_TRY(ac_floatvec_push(probs, &p, 1));
    }
    return AC_OK;
}

ac_status ac_silero_stream_feed(ac_silero_stream *s, const float *pcm, size_t n, ac_floatvec *probs)
{
    const size_t cap = BATCH * AC_SILERO_CHUNK;
    while (n > 0) {
        size_t k = cap - s->n_pending < n ? cap - s->n_pending : n;
        memcpy(s->pending + s->n_pending, pcm, k * sizeof *pcm);
        s->n_pending += k;
        pcm += k;
        n -= k;
        if (s->n_pending == cap) {
            AC_TRY(run_batch(s, BATCH, probs));
            s->n_pending = 0;
        }
    }
    return AC_OK;
}

ac_status ac_silero_stream_finish(ac_silero_stream *s, ac_floatvec *probs)
{
    size_t chunks = (s->n_pending + AC_SILERO_CHUNK - 1) / AC_SILERO_CHUNK;
    if (chunks == 0) return AC_OK;
    memset(s->pending + s->n_pending, 0, (chunks * AC_SILERO_CHUNK - s->n_pending) * sizeof(float));
    s->n_pending = 0;
    return run_batch(s, chunks, probs);
}
