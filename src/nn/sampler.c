#include "nn/sampler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"

typedef struct {
    float v;
    int i;
} ranked;

ac_sampler_options ac_sampler_defaults(void)
{
    return (ac_sampler_options){
        .repetition_penalty = 1.0f,
        .min_new_tokens = 0,
        .eos = -1,
        .temperature = 0,
        .top_k = 0,
        .top_p = 1.0f,
    };
}

ac_status ac_sampler_check(const ac_sampler_options *o, int vocab)
{
    if (!(o->repetition_penalty > 0 && isfinite(o->repetition_penalty)))
        return ac_error(AC_ERR_ARG, "repetition penalty %g must be > 0", o->repetition_penalty);
    if (o->min_new_tokens < 0) return ac_error(AC_ERR_ARG, "min_new_tokens %d must be >= 0", o->min_new_tokens);
    if (o->eos < -1 || o->eos >= vocab)
        return ac_error(AC_ERR_ARG, "end token %d is outside the vocabulary of %d ids", o->eos, vocab);
    if (!(o->temperature >= 0 && isfinite(o->temperature)))
        return ac_error(AC_ERR_ARG, "temperature %g must be >= 0", o->temperature);
    if (o->top_k < 0) return ac_error(AC_ERR_ARG, "top-k %d must be >= 0", o->top_k);
    if (!(o->top_p > 0 && o->top_p <= 1)) return ac_error(AC_ERR_ARG, "top-p %g must be in (0, 1]", o->top_p);
    return AC_OK;
}

ac_status ac_sampler_init(ac_sampler *s, int vocab, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    if (vocab < 1) return ac_error(AC_ERR_ARG, "a sampler needs at least one id, not %d", vocab);
    size_t V = (size_t)vocab;
    s->vocab = vocab;
    s->scores = ac_malloc(V * sizeof *s->scores);
    s->probs = ac_malloc(V * sizeof *s->probs);
    s->ranked = ac_malloc(V * sizeof(ranked));
    s->weights = ac_malloc(V * sizeof *s->weights);
    if (!s->scores || !s->probs || !s->ranked || !s->weights) {
        ac_sampler_free(s);
        return AC_ERR_NOMEM;
    }
    ac_rng_seed(&s->rng, seed);
    return AC_OK;
}

void ac_sampler_free(ac_sampler *s)
{
    free(s->scores), free(s->probs), free(s->ranked), free(s->weights);
    memset(s, 0, sizeof *s);
}

void ac_repetition_penalty(float *scores, const float *logits, const int *ids, int n, float penalty)
{
    /* from LOGITS, not SCORES: a repeated id is written again with the same value */
    for (int i = 0; i < n; i++) {
        float l = logits[ids[i]];
        scores[ids[i]] = l < 0 ? l * penalty : l / penalty;
    }
}

void ac_bar_eos(float *scores, int eos, int step, int min_new_tokens)
{
    if (eos >= 0 && step < min_new_tokens) scores[eos] = -INFINITY;
}

int ac_draw(const float *probs, int vocab, double u)
{
    double cum = 0;
    int last = 0;
    for (int i = 0; i < vocab; i++) {
        if (probs[i] <= 0) continue;
        cum += probs[i];
        last = i;
        if (u < cum) return i;
    }
    return last;
}

static int argmax(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

/* Descending by value; ties by lower id, so the order is total. */
static int by_value_desc(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->v != y->v) return x->v > y->v ? -1 : 1;
    return x->i - y->i;
}

static void sift_down(float *h, int n, int i)
{
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && h[c + 1] < h[c]) c++;
        if (h[i] <= h[c]) return;
        float t = h[i];
        h[i] = h[c], h[c] = t, i = c;
    }
}

/* The K-th largest of X[N], counting repeats (0 < K < N): the root of a
 * min-heap of the K largest seen so far, O(N log K). */
static float kth_largest(const float *x, int n, int k, float *heap)
{
    memcpy(heap, x, (size_t)k * sizeof *heap);
    for (int i = k / 2 - 1; i >= 0; i--) sift_down(heap, k, i);
    for (int i = k; i < n; i++)
        if (x[i] > heap[0]) heap[0] = x[i], sift_down(heap, k, 0);
    return heap[0];
}

/* Repetition penalty and the barred end token, from LOGITS into S->scores. */
static ac_status process(ac_sampler *s, const ac_sampler_options *o, const float *logits, const int *history,
                         int n_history, int step)
{
    int V = s->vocab;
    AC_TRY(ac_sampler_check(o, V));
    if (step < 0 || n_history < 0) return ac_error(AC_ERR_ARG, "step %d and history length %d must be >= 0", step, n_history);
    for (int i = 0; i < n_history; i++)
        if (history[i] < 0 || history[i] >= V)
            return ac_error(AC_ERR_ARG, "history id %d (at %d) is outside the vocabulary of %d ids", history[i], i, V);
    for (int v = 0; v < V; v++)
        if (isnan(logits[v]) || logits[v] == INFINITY) return ac_error(AC_ERR_ARG, "logit %d is %g", v, logits[v]);
    memcpy(s->scores, logits, (size_t)V * sizeof *s->scores);
    if (o->repetition_penalty != 1) ac_repetition_penalty(s->scores, logits, history, n_history, o->repetition_penalty);
    ac_bar_eos(s->scores, o->eos, step, o->min_new_tokens);
    if (s->scores[argmax(s->scores, V)] == -INFINITY) return ac_error(AC_ERR_ARG, "every id's score is -inf");
    return AC_OK;
}

/* Temperature, top-k, top-p and the softmax over S->scores (which ends with
 * the dropped ids at -inf, as HF's processors leave them); returns the
 * support size of S->probs. */
static int distribution(ac_sampler *s, const ac_sampler_options *o)
{
    int V = s->vocab, n = 0;
    float *sc = s->scores;
    ranked *r = s->ranked;
    double *w = s->weights;
    for (int v = 0; v < V; v++) sc[v] /= o->temperature;
    /* S->probs is free until the end: the heap of the top-k search */
    float kth = o->top_k > 0 && o->top_k < V ? kth_largest(sc, V, o->top_k, s->probs) : -INFINITY;
    for (int v = 0; v < V; v++) {
        if (sc[v] > -INFINITY && sc[v] >= kth) r[n++] = (ranked){sc[v], v};
        else sc[v] = -INFINITY;
    }
    qsort(r, (size_t)n, sizeof *r, by_value_desc);
    double mx = r[0].v, sum = 0;
    for (int i = 0; i < n; i++) sum += w[i] = exp(r[i].v - mx);
    /* sorted by score is sorted by probability: an id stays while the
     * probability before it is below top_p (HF's ascending "cumulative
     * <= 1 - p goes" says the same) */
    int keep = n;
    if (o->top_p < 1) {
        double cum = 0;
        for (keep = 0; keep < n;) {
            cum += w[keep] / sum;
            keep++;
            if (cum >= o->top_p) break;
        }
    }
    double kept = 0;
    for (int i = 0; i < keep; i++) kept += w[i];
    memset(s->probs, 0, (size_t)V * sizeof *s->probs);
    for (int i = 0; i < keep; i++) s->probs[r[i].i] = (float)(w[i] / kept);
    for (int i = keep; i < n; i++) sc[r[i].i] = -INFINITY;
    return keep;
}

ac_status ac_sampler_probs(ac_sampler *s, const ac_sampler_options *o, const float *logits, const int *history,
                           int n_history, int step, int *n_kept)
{
    AC_TRY(process(s, o, logits, history, n_history, step));
    if (o->temperature > 0) {
        *n_kept = distribution(s, o);
        return AC_OK;
    }
    memset(s->probs, 0, (size_t)s->vocab * sizeof *s->probs);
    s->probs[argmax(s->scores, s->vocab)] = 1;
    *n_kept = 1;
    return AC_OK;
}

static float log_softmax_at(const float *x, int n, int id)
{
    double mx = x[argmax(x, n)], sum = 0;
    for (int i = 0; i < n; i++) sum += exp(x[i] - mx);
    return (float)(x[id] - mx - log(sum));
}

ac_status ac_sample(ac_sampler *s, const ac_sampler_options *o, const float *logits, const int *history,
                    int n_history, int step, int *id, float *logprob)
{
    AC_TRY(process(s, o, logits, history, n_history, step));
    if (o->temperature > 0) {
        distribution(s, o);
        *id = ac_draw(s->probs, s->vocab, s->uniform ? s->uniform(s->uniform_ctx) : ac_rng_uniform(&s->rng));
    } else {
        *id = argmax(s->scores, s->vocab);
    }
    if (logprob) *logprob = log_softmax_at(logits, s->vocab, *id);
    return AC_OK;
}
