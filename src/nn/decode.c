#include "nn/decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"
#include "nn/sampler.h"
#include "tensor/kernels.h"

ac_decode_options ac_decode_defaults(void)
{
    return (ac_decode_options){
        .max_new_tokens = 256,
        .min_new_tokens = 0,
        .beam_size = 1,
        .length_penalty = 1.0f,
        .temperature = 0,
        .top_k = 0,
        .top_p = 1.0f,
        .repetition_penalty = 1.0f,
        .seed = 0,
    };
}

void ac_decode_result_free(ac_decode_result *r)
{
    free(r->tokens);
    free(r->logprobs);
    memset(r, 0, sizeof *r);
}

static int is_stop(const ac_decode_model *m, int token)
{
    for (int i = 0; i < m->n_stop; i++)
        if (m->stop[i] == token) return 1;
    return 0;
}

static void bar_stops(const ac_decode_model *m, float *row, int step, int min_new_tokens)
{
    for (int i = 0; i < m->n_stop; i++) ac_bar_eos(row, m->stop[i], step, min_new_tokens);
}

/* The search's options as the sampler takes them. The loop bars the stop
 * tokens itself (HF's processor takes the list; the sampler knows one). */
static ac_sampler_options sampler_options(const ac_decode_options *o)
{
    ac_sampler_options so = ac_sampler_defaults();
    so.repetition_penalty = o->repetition_penalty;
    so.min_new_tokens = o->min_new_tokens;
    so.eos = -1;
    so.temperature = o->temperature;
    so.top_k = o->top_k;
    so.top_p = o->top_p;
    return so;
}

/* ---- greedy and sampling: one beam ------------------------------------------ */

static ac_status search_single(const ac_decode_model *m, const ac_decode_options *o, ac_sampler *smp, float *row,
                               int *history, int pos0, ac_decode_result *out)
{
    ac_sampler_options so = sampler_options(o);
    int P = o->n_prompt, n = 0;
    for (;;) {
        int token, stop;
        float lp;
        bar_stops(m, row, n, o->min_new_tokens);
        /* a model that gives log-probabilities needs no log_softmax of its own */
        AC_TRY(ac_sample(smp, &so, row, history, P + n, n, &token, m->logprobs ? NULL : &lp));
        if (m->logprobs) lp = row[token];
        out->logprobs[n] = lp;
        out->logprob += lp;
        if ((stop = is_stop(m, token))) out->stop = token;
        else history[P + n] = out->tokens[n] = token, out->n_tokens = ++n;
        if (o->progress && o->progress(o->progress_user, n + stop, o->max_new_tokens)) return AC_ERR_CANCELLED;
        if (stop || n == o->max_new_tokens) return AC_OK;
        AC_TRY(m->step(m->ctx, &token, 1, pos0 + n - 1, row));
        out->steps++;
    }
}

static ac_status decode_single(const ac_decode_model *m, const ac_decode_options *o, const float *first, int pos0,
                               ac_decode_result *out)
{
    int V = m->vocab, P = o->n_prompt;
    ac_sampler smp;
    AC_TRY(ac_sampler_init(&smp, V, o->seed));
    smp.uniform = o->uniform;
    smp.uniform_ctx = o->uniform_ctx;
    float *row = ac_malloc((size_t)V * sizeof *row);
    int *history = ac_malloc(((size_t)P + (size_t)o->max_new_tokens) * sizeof *history);
    ac_status s = row && history ? AC_OK : AC_ERR_NOMEM;
    if (!s) {
        memcpy(row, first, (size_t)V * sizeof *row);
        if (P) memcpy(history, o->prompt, (size_t)P * sizeof *history);
        s = search_single(m, o, &smp, row, history, pos0, out);
    }
    free(row);
    free(history);
    ac_sampler_free(&smp);
    return s;
}

/* ---- beam search ---------------------------------------------------------------- */

typedef struct {
    int *tokens;
    float *lps;   /* each token's log-probability, then the stop token's */
    int n;        /* tokens held */
    int stop;     /* the stop token that ended it, or -1 */
    int len;      /* length for the penalty: an ending EOS counts */
    double score, norm;
} hyp;

typedef struct {
    double score;
    int beam, token;
} cand;

static int by_score(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->token - y->token;
}

static double normalize(double score, int len, float alpha) { return score / pow(len > 1 ? len : 1, alpha); }

/* Keeps the B best finished hypotheses by normalized score: N tokens and
 * N_LPS log-probabilities (N + 1 when a stop token ended it). */
static void add_finished(hyp *fin, int *n_fin, int B, const int *tokens, const float *lps, int n, int stop, int len,
                         double score, float alpha)
{
    int n_lps = n + (stop >= 0);
    double norm = normalize(score, len, alpha);
    int slot = *n_fin;
    if (*n_fin == B) {
        slot = 0;
        for (int i = 1; i < B; i++)
            if (fin[i].norm < fin[slot].norm) slot = i;
        if (norm <= fin[slot].norm) return;
    } else {
        (*n_fin)++;
    }
    memcpy(fin[slot].tokens, tokens, (size_t)n * sizeof *tokens);
    memcpy(fin[slot].lps, lps, (size_t)n_lps * sizeof *lps);
    fin[slot].n = n;
    fin[slot].stop = stop;
    fin[slot].len = len;
    fin[slot].score = score;
    fin[slot].norm = norm;
}

/* The K best tokens of ROW (ties: lower id), unordered. */
static int top_tokens(const float *row, int V, int K, int *top)
{
    int n = 0, worst = 0;
    for (int v = 0; v < V; v++) {
        if (n < K) {
            top[n++] = v;
            if (n == K)
                for (int i = 1; i < K; i++)
                    if (row[top[i]] < row[top[worst]] || (row[top[i]] == row[top[worst]] && top[i] > top[worst])) worst = i;
            continue;
        }
        if (row[v] <= row[top[worst]]) continue;
        top[worst] = v;
        for (int i = 0; i < K; i++)
            if (row[top[i]] < row[top[worst]] || (row[top[i]] == row[top[worst]] && top[i] > top[worst])) worst = i;
    }
    return n;
}

static ac_status decode_beam(const ac_decode_model *m, const ac_decode_options *o, const float *first, int pos0,
                             ac_decode_result *out)
{
    int V = m->vocab, B = o->beam_size, maxn = o->max_new_tokens, K = 2 * B;
    float alpha = o->length_penalty;
    size_t cap = (size_t)maxn + 1;
    float *lp = ac_malloc((size_t)B * V * sizeof *lp);
    cand *cands = ac_malloc((size_t)B * K * sizeof *cands);
    hyp *act = ac_calloc((size_t)B, sizeof *act), *next = ac_calloc((size_t)B, sizeof *next);
    hyp *fin = ac_calloc((size_t)B, sizeof *fin);
    int *parent = ac_malloc((size_t)B * sizeof *parent), *tok = ac_malloc((size_t)B * sizeof *tok);
    int *top = ac_malloc((size_t)K * sizeof *top), *tmp = ac_malloc(cap * sizeof *tmp);
    float *tmp_lps = ac_malloc(cap * sizeof *tmp_lps);
    ac_status s = lp && cands && act && next && fin && parent && tok && top && tmp && tmp_lps ? AC_OK : AC_ERR_NOMEM;
    hyp *all[] = {act, next, fin};
    for (int b = 0; b < B && !s; b++)
        for (int i = 0; i < 3 && !s; i++)
            if (!(all[i][b].tokens = ac_malloc(cap * sizeof(int))) || !(all[i][b].lps = ac_malloc(cap * sizeof(float))))
                s = AC_ERR_NOMEM;
    if (s) goto done;

    memcpy(lp, first, (size_t)V * sizeof *lp);
    int n_act = 1, n_fin = 0, len = 0;
    act[0] = (hyp){.tokens = act[0].tokens, .lps = act[0].lps, .stop = -1};
    for (;;) {
        int nc = 0;
        for (int b = 0; b < n_act; b++) {
            float *row = lp + (size_t)b * V;
            if (!m->logprobs) ac_log_softmax(row, (size_t)V); /* scores add up as log-probabilities */
            bar_stops(m, row, len, o->min_new_tokens);
            int n_top = top_tokens(row, V, K, top);
            for (int i = 0; i < n_top; i++) cands[nc++] = (cand){act[b].score + row[top[i]], b, top[i]};
        }
        qsort(cands, (size_t)nc, sizeof *cands, by_score);
        double best_cand = nc ? cands[0].score : -INFINITY;
        len++;
        int last = len == maxn, n_next = 0;
        for (int i = 0; i < nc && (last || n_next < B); i++) {
            const cand *c = &cands[i];
            const hyp *p = &act[c->beam];
            float token_lp = lp[(size_t)c->beam * V + (size_t)c->token];
            if (is_stop(m, c->token)) {
                /* only a top-ranked stop token ends a hypothesis; it counts in its length */
                if (i < B) {
                    memcpy(tmp_lps, p->lps, (size_t)p->n * sizeof *tmp_lps);
                    tmp_lps[p->n] = token_lp;
                    add_finished(fin, &n_fin, B, p->tokens, tmp_lps, p->n, c->token, len, c->score, alpha);
                }
                continue;
            }
            if (last) { /* the length limit: every continuation is final */
                memcpy(tmp, p->tokens, (size_t)p->n * sizeof *tmp);
                memcpy(tmp_lps, p->lps, (size_t)p->n * sizeof *tmp_lps);
                tmp[p->n] = c->token;
                tmp_lps[p->n] = token_lp;
                add_finished(fin, &n_fin, B, tmp, tmp_lps, p->n + 1, -1, len, c->score, alpha);
                continue;
            }
            hyp *h = &next[n_next];
            memcpy(h->tokens, p->tokens, (size_t)p->n * sizeof(int));
            memcpy(h->lps, p->lps, (size_t)p->n * sizeof(float));
            h->tokens[p->n] = c->token;
            h->lps[p->n] = token_lp;
            h->n = p->n + 1;
            h->stop = -1;
            h->len = len;
            h->score = c->score;
            parent[n_next] = c->beam;
            tok[n_next++] = c->token;
        }
        if (last || n_next == 0) {
            n_act = 0;
            break;
        }
        hyp *t = act;
        act = next;
        next = t;
        n_act = n_next;
        /* early stop: no active beam can still beat the worst finished one */
        if (n_fin == B) {
            double worst = fin[0].norm, best = act[0].score;
            for (int i = 1; i < B; i++) worst = fin[i].norm < worst ? fin[i].norm : worst;
            for (int i = 1; i < n_act; i++) best = act[i].score > best ? act[i].score : best;
            if (o->stop_vs_candidates) best = best_cand;
            if (worst >= normalize(best, len, alpha)) break;
        }
        if (o->progress && o->progress(o->progress_user, len, maxn)) {
            s = AC_ERR_CANCELLED;
            goto done;
        }
        m->reorder(m->ctx, parent, n_act, pos0 + len - 1);
        s = m->step(m->ctx, tok, n_act, pos0 + len - 1, lp);
        out->steps++;
        if (s) goto done;
    }
    /* the best finished hypothesis, or the best active one if none finished */
    const hyp *best = NULL;
    for (int i = 0; i < n_fin; i++)
        if (!best || fin[i].norm > best->norm || (fin[i].norm == best->norm && fin[i].score > best->score))
            best = &fin[i];
    for (int i = 0; !n_fin && i < n_act; i++) {
        act[i].norm = normalize(act[i].score, act[i].len, alpha);
        if (!best || act[i].norm > best->norm) best = &act[i];
    }
    if (best) {
        memcpy(out->tokens, best->tokens, (size_t)best->n * sizeof(int));
        memcpy(out->logprobs, best->lps, (size_t)(best->n + (best->stop >= 0)) * sizeof(float));
        out->n_tokens = best->n;
        out->logprob = best->score;
        out->stop = best->stop;
    }
done:
    for (int b = 0; b < B; b++)
        for (int i = 0; i < 3; i++)
            if (all[i]) free(all[i][b].tokens), free(all[i][b].lps);
    free(lp), free(cands), free(act), free(next), free(fin), free(parent), free(tok), free(top), free(tmp);
    free(tmp_lps);
    return s;
}

ac_status ac_decode(const ac_decode_model *m, const ac_decode_options *o, const float *first, int pos0,
                    ac_decode_result *out)
{
    memset(out, 0, sizeof *out);
    out->stop = -1;
    if (o->max_new_tokens < 1) return ac_error(AC_ERR_ARG, "max_new_tokens must be at least 1");
    if (o->min_new_tokens < 0 || o->min_new_tokens > o->max_new_tokens)
        return ac_error(AC_ERR_ARG, "min_new_tokens must be in 0..max_new_tokens");
    if (o->beam_size < 1 || o->beam_size > AC_MAX_BEAM_SIZE)
        return ac_error(AC_ERR_ARG, "beam size %d is out of range 1..%d", o->beam_size, AC_MAX_BEAM_SIZE);
    if (o->beam_size > 1 && o->temperature > 0) return ac_error(AC_ERR_ARG, "sampling works with beam size 1 only");
    if (o->beam_size > 1 && !m->reorder) return ac_error(AC_ERR_ARG, "this model decodes one sequence (beam size 1)");
    if (o->n_prompt < 0 || (o->n_prompt && !o->prompt)) return ac_error(AC_ERR_ARG, "the prompt's ids are missing");
    ac_sampler_options so = sampler_options(o);
    AC_TRY(ac_sampler_check(&so, m->vocab));
    out->tokens = ac_malloc(((size_t)o->max_new_tokens + 1) * sizeof *out->tokens);
    out->logprobs = ac_malloc(((size_t)o->max_new_tokens + 1) * sizeof *out->logprobs);
    ac_status s = out->tokens && out->logprobs ? AC_OK : AC_ERR_NOMEM;
    if (!s) s = o->beam_size > 1 ? decode_beam(m, o, first, pos0, out) : decode_single(m, o, first, pos0, out);
    if (s) ac_decode_result_free(out);
    return s;
}
