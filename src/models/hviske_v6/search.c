/* The decoder's side of a chunk: the prompt after the audio rows, the
 * search (nn/decode: greedy or beams, over a Qwen3 session whose steps give
 * log-probabilities with the style tokens barred), and the text. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"
#include "base/timing.h"
#include "models/hviske_v6/hviske_v6.h"
#include "tensor/kernels.h"

hv6_options hv6_defaults(void)
{
    return (hv6_options){.cased = -1, .punctuated = -1, .beams = 2, .length_penalty = 1.0f, .max_tokens = 440};
}

ac_status hv6_prompt(const hv6_model *m, const hv6_options *o, int *ids, int *n)
{
    const hv6_config *c = &m->cfg;
    int k = 0;
    /* automatic formatting unless both are given, as upstream */
    if (o->cased >= 0 && o->punctuated >= 0) {
        ids[k++] = c->style[o->cased ? HV6_CASED : HV6_NOCASE];
        ids[k++] = c->style[o->punctuated ? HV6_PUNC : HV6_NOPUNC];
    }
    ids[k++] = c->bos;
    *n = k;
    return AC_OK;
}

typedef struct {
    const hv6_model *m;
    qwen2_session *s;
} search_ctx;

/* Log-probabilities of each of N rows, the style tokens barred after the
 * normalization (they take their share of the softmax, as in the port). */
static void scores(const hv6_model *m, float *rows, int n)
{
    size_t V = (size_t)m->cfg.dec.vocab;
    for (int r = 0; r < n; r++) {
        float *row = rows + (size_t)r * V;
        ac_log_softmax(row, V);
        for (int i = 0; i < HV6_N_STYLE; i++) row[m->cfg.style[i]] = -INFINITY;
    }
}

static ac_status step(void *ctx, const int *tokens, int n, int pos, float *out)
{
    search_ctx *c = ctx;
    AC_TRY(qwen2_step_beams(c->s, tokens, n, pos, out));
    scores(c->m, out, n);
    return AC_OK;
}

static void reorder(void *ctx, const int *parent, int n, int len)
{
    search_ctx *c = ctx;
    qwen2_session_reorder(c->s, parent, n, len);
}

/* The most tokens a chunk of N samples may get: 8 a second + 12. */
static int token_cap(int64_t n, int max_tokens)
{
    int64_t cap = (n + 1999) / 2000 + 12;
    return cap < max_tokens ? (int)cap : max_tokens;
}

ac_status hv6_decode(const hv6_model *m, const float *rows, int n_rows, int64_t n_samples, const hv6_options *o,
                     ac_arena *a, ac_decode_result *out, hv6_times *times)
{
    const hv6_config *c = &m->cfg;
    memset(out, 0, sizeof *out);
    int ids[4], n_ids;
    AC_TRY(hv6_prompt(m, o, ids, &n_ids));
    int S = n_rows + n_ids, cap = token_cap(n_samples, o->max_tokens);
    if (o->beams < 1 || o->beams > AC_MAX_BEAM_SIZE)
        return ac_error(AC_ERR_ARG, "hviske_v6: beam size %d (1 to %d)", o->beams, AC_MAX_BEAM_SIZE);
    if (cap < 1) return ac_error(AC_ERR_ARG, "hviske_v6: max_tokens %d must be at least 1", o->max_tokens);
    if (S + cap > c->dec.max_positions)
        return ac_error(AC_ERR_ARG, "hviske_v6: a prompt of %d rows and %d tokens exceed qwen.max_position_embeddings %d",
                        S, cap, c->dec.max_positions);
    qwen2_session *s;
    AC_TRY(qwen2_session_new_beams(m->dec, S + cap, S > o->beams ? S : o->beams, o->beams, S, a, &s));
    if (o->trace) qwen2_session_trace(s, o->trace);
    float *first = ac_arena_floats(a, (size_t)c->dec.vocab);
    if (!first) return AC_ERR_NOMEM;
    double t0 = ac_now();
    AC_TRY(qwen2_forward_embeds(s, rows, n_rows, ids, n_ids, 0, 1, first));
    scores(m, first, 1);
    double t1 = ac_now();
    search_ctx sc = {m, s};
    ac_decode_model dm = {.ctx = &sc, .vocab = c->dec.vocab, .stop = &c->eos, .n_stop = 1, .logprobs = 1,
                          .step = step, .reorder = reorder};
    ac_decode_options d = ac_decode_defaults();
    d.max_new_tokens = cap;
    d.beam_size = o->beams;
    d.length_penalty = o->length_penalty;
    d.stop_vs_candidates = 1; /* the port's (and transformers') early stop */
    ac_status st = ac_decode(&dm, &d, first, S, out);
    if (times) times->prefill = t1 - t0, times->decode = ac_now() - t1;
    return st;
}

/* ---- text ----------------------------------------------------------------- */

/* Words of TEXT (split at ASCII white space) as offsets into it. */
static size_t split_words(char *text, char **words, size_t max)
{
    size_t n = 0;
    for (char *p = text; *p && n < max;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v') *p++ = 0;
        if (!*p) break;
        words[n++] = p;
        while (*p && !(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v')) p++;
    }
    return n;
}

static int same_group(char **w, size_t i, size_t j, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (strcmp(w[i + k], w[j + k]) != 0) return 0;
    return 1;
}

/* One pass for group size G: runs of more than 3 copies of words[i..i+G)
 * cut to 3, the scan jumping r*G words. Returns the new count. */
static size_t collapse_pass(char **w, size_t n, size_t g, char **out)
{
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        if (i + g > n) {
            out[k++] = w[i++];
            continue;
        }
        size_t r = 1;
        while (i + (r + 1) * g <= n && same_group(w, i, i + r * g, g)) r++;
        for (size_t c = 0; c < (r < 3 ? r : 3); c++)
            for (size_t j = 0; j < g; j++) out[k++] = w[i + j];
        i += r * g;
    }
    return k;
}

/* Collapses repeated word groups (the port's collapse_repeats) and joins
 * the words with single spaces. */
static ac_status collapse_repeats(const char *text, char **out)
{
    size_t len = strlen(text), max = len / 2 + 2;
    char *buf = ac_malloc(len + 1), **w = ac_malloc(max * sizeof *w), **t = ac_malloc(max * sizeof *t);
    char *res = ac_malloc(len + 1);
    if (!buf || !w || !t || !res) {
        free(buf), free(w), free(t), free(res);
        return ac_error(AC_ERR_NOMEM, "out of memory");
    }
    memcpy(buf, text, len + 1);
    size_t n = split_words(buf, w, max);
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t g = 1; g <= 4; g++) {
            size_t k = collapse_pass(w, n, g, t);
            if (k != n) changed = 1;
            memcpy(w, t, k * sizeof *w);
            n = k;
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(w[i]);
        if (i) res[k++] = ' ';
        memcpy(res + k, w[i], l);
        k += l;
    }
    res[k] = 0;
    free(buf), free(w), free(t);
    *out = res;
    return AC_OK;
}

ac_status hv6_text(const hv6_model *m, const int *ids, int n, char **text)
{
    *text = NULL;
    int *keep = ac_malloc(((size_t)n + 1) * sizeof *keep), k = 0;
    if (!keep) return ac_error(AC_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++)
        if (ac_bpe_token(m->tok, ids[i])) keep[k++] = ids[i];   /* rows with no token are dropped */
    char *raw;
    ac_status s = ac_bpe_decode(m->tok, keep, (size_t)k, 0, &raw, NULL);
    free(keep);
    if (s) return s;
    s = collapse_repeats(raw, text);
    free(raw);
    return s;
}
