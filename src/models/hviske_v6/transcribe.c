/* Samples to text: one chunk (audio rows, search, text), and a stream cut
 * into chunks as upstream does it (one chunk up to 30 s, else at silences
 * into chunks of at most 28 s). */
#include <stdlib.h>
#include <string.h>

#include "audio/silence.h"
#include "base/error.h"
#include "base/mem.h"
#include "models/hviske_v6/hviske_v6.h"

ac_status hv6_transcribe_chunk(const hv6_model *m, const float *x, int64_t n, const hv6_options *o, ac_arena *a,
                               hv6_chunk *out)
{
    memset(out, 0, sizeof *out);
    float *rows;
    int n_rows;
    AC_TRY(hv6_audio_rows(m, x, n, o->trace, a, &rows, &n_rows, &out->times));
    /* the rows move out and the encoder's scratch goes before the decoder's
     * K/V cache is made in the same arena: the peak is the larger of the
     * two, not their sum */
    size_t bytes = (size_t)n_rows * (size_t)m->cfg.dec.hidden * sizeof *rows;
    float *kept = ac_malloc(bytes);
    if (!kept) return ac_error(AC_ERR_NOMEM, "out of memory");
    memcpy(kept, rows, bytes);
    ac_arena_reset(a);
    ac_decode_result r;
    ac_status s = hv6_decode(m, kept, n_rows, n, o, a, &r, &out->times);
    free(kept);
    AC_TRY(s);
    s = hv6_text(m, r.tokens, r.n_tokens, &out->text);
    if (s) {
        ac_decode_result_free(&r);
        return s;
    }
    out->tokens = r.tokens;
    free(r.logprobs);
    out->n_tokens = r.n_tokens;
    out->logprob = r.logprob;
    out->steps = r.steps;
    return AC_OK;
}

void hv6_chunk_free(hv6_chunk *c)
{
    free(c->text);
    free(c->tokens);
    memset(c, 0, sizeof *c);
}

/* Reads samples [from, to) (to < 0: the rest) of R, which has delivered
 * *POS samples so far, into *X (arena CALL). */
static ac_status read_span(ac_audio_reader *r, int64_t *pos, int64_t from, int64_t to, ac_arena *call, float **x,
                           int64_t *n)
{
    enum { BLOCK = 1 << 16 };
    float skip[4096];
    size_t got = 1;
    while (*pos < from && got) {
        int64_t want = from - *pos < (int64_t)(sizeof skip / sizeof *skip) ? from - *pos : (int64_t)(sizeof skip / sizeof *skip);
        AC_TRY(ac_audio_read(r, skip, (size_t)want, &got));
        *pos += (int64_t)got;
    }
    size_t cap = to >= 0 ? (size_t)(to - from) : BLOCK, len = 0;
    float *buf = ac_arena_floats(call, cap ? cap : 1);
    if (!buf) return AC_ERR_NOMEM;
    for (got = 1; got && (to < 0 || *pos < to);) {
        if (len == cap) { /* an open end: grow */
            float *bigger = ac_arena_floats(call, 2 * cap);
            if (!bigger) return AC_ERR_NOMEM;
            memcpy(bigger, buf, len * sizeof *buf);
            buf = bigger, cap *= 2;
        }
        size_t want = cap - len;
        if (to >= 0 && (int64_t)want > to - *pos) want = (size_t)(to - *pos);
        AC_TRY(ac_audio_read(r, buf + len, want, &got));
        len += got;
        *pos += (int64_t)got;
    }
    *x = buf, *n = (int64_t)len;
    return AC_OK;
}

static ac_status span(const hv6_model *m, const float *x, int64_t n, int64_t offset, const hv6_options *o,
                      ac_arena *step, hv6_chunk_fn emit, void *user)
{
    if (n < 1) return AC_OK;
    int64_t one = n, *ends = &one;
    size_t n_ends = 1;
    if (n > HV6_MAX_CHUNK) AC_TRY(ac_silence_chunks(x, n, HV6_SPLIT_CHUNK, &ends, &n_ends));
    ac_status s = AC_OK;
    for (size_t i = 0; i < n_ends && !s; i++) {
        int64_t a = i ? ends[i - 1] : 0, b = ends[i];
        hv6_chunk c;
        ac_arena_reset(step);
        s = hv6_transcribe_chunk(m, x + a, b - a, o, step, &c);
        if (!s) {
            s = emit(user, offset + a, offset + b, &c);
            hv6_chunk_free(&c);
        }
    }
    if (ends != &one) free(ends);
    return s;
}

ac_status hv6_transcribe_stream(const hv6_model *m, ac_audio_reader *r, const int64_t *spans, size_t n_spans,
                                const hv6_options *o, ac_arena *call, ac_arena *step, hv6_chunk_fn emit, void *user,
                                int64_t *n_read)
{
    int64_t pos = 0, n;
    float *x;
    ac_status s = AC_OK;
    if (n_spans == 0) {
        s = read_span(r, &pos, 0, -1, call, &x, &n);
        if (!s) s = span(m, x, n, 0, o, step, emit, user);
    }
    for (size_t i = 0; i < n_spans && !s; i++) {
        int64_t a = spans[2 * i] > pos ? spans[2 * i] : pos, b = spans[2 * i + 1];
        if (b <= a) continue;
        ac_arena_reset(call);
        s = read_span(r, &pos, a, b, call, &x, &n);
        if (!s) s = span(m, x, n, a, o, step, emit, user);
    }
    *n_read = pos;
    return s;
}
