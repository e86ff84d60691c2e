#include "models/hviske_asr/longform.h"

#include <string.h>

#include "base/error.h"

/* One pass over the stream: the chunk buffer and the stream position. */
typedef struct {
    const hviske_model *m;
    const hviske_options *o;
    ac_audio_reader *r;
    ac_arena *step;
    float *buf;         /* one chunk plus one sample */
    int64_t cap;
    int64_t pos;        /* samples read from the stream */
    hviske_chunk_fn emit;
    void *user;
} pass;

static ac_status read_some(pass *p, float *dst, int64_t want, size_t *got)
{
    AC_TRY(ac_audio_read(p->r, dst, (size_t)want, got));
    p->pos += (int64_t)*got;
    return AC_OK;
}

/* Transcribes samples [start, end) of the stream (end < 0: to its end),
 * split into chunks as spec §5 says. The stream must not be past START. */
static ac_status span(pass *p, int64_t start, int64_t end)
{
    size_t got = 1;
    while (p->pos < start && got) {   /* skip to the span */
        int64_t want = start - p->pos < p->cap ? start - p->pos : p->cap;
        AC_TRY(read_some(p, p->buf, want, &got));
    }
    int64_t idx = p->pos, avail = 0;
    int at_end = got == 0;
    for (;;) {
        /* fill to one sample past a full chunk: that tells whether the span ends within it */
        while (!at_end && avail < p->cap) {
            int64_t want = p->cap - avail;
            if (end >= 0 && end - p->pos < want) want = end - p->pos;
            if (want <= 0) {
                at_end = 1;
                break;
            }
            AC_TRY(read_some(p, p->buf + avail, want, &got));
            if (got == 0) at_end = 1;
            avail += (int64_t)got;
        }
        if (at_end && avail == 0) return AC_OK;
        int64_t to = hviske_split(&p->m->cfg, p->buf, idx, avail, at_end), n = to - idx;
        hviske_chunk_result cr;
        ac_arena_reset(p->step);
        AC_TRY(hviske_transcribe_chunk(p->m, p->buf, n, p->o, p->step, &cr));
        ac_status s = p->emit(p->user, idx, to, &cr);
        hviske_chunk_result_free(&cr);
        if (s) return s;
        memmove(p->buf, p->buf + n, (size_t)(avail - n) * sizeof *p->buf);
        avail -= n;
        idx = to;
        if (at_end && avail == 0) return AC_OK;
    }
}

ac_status hviske_transcribe_stream(const hviske_model *m, ac_audio_reader *r, const int64_t *spans, size_t n_spans,
                                   const hviske_options *o, ac_arena *call, ac_arena *step, hviske_chunk_fn emit,
                                   void *user, int64_t *n_read)
{
    const hviske_config *c = &m->cfg;
    pass p = {.m = m, .o = o, .r = r, .step = step, .emit = emit, .user = user};
    p.cap = (int64_t)(c->max_clip_s * c->sample_rate + 0.5) + 1;
    p.buf = ac_arena_floats(call, (size_t)p.cap);
    if (!p.buf) return AC_ERR_NOMEM;
    ac_status s = AC_OK;
    if (n_spans == 0) s = span(&p, 0, -1);
    for (size_t i = 0; i < n_spans && !s; i++) {
        int64_t a = spans[2 * i] > p.pos ? spans[2 * i] : p.pos, b = spans[2 * i + 1];
        if (b > a) s = span(&p, a, b);
    }
    *n_read = p.pos;
    return s;
}
