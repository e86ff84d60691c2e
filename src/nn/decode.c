#include "nn/decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"
#include "nn/sampler.h"

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
        .seed = 0,
    };
}

void ac_decode_result_free(ac_decode_result *r)
{
    free(r->tokens);
    memset(r, 0, sizeof *r);
}

/* ---- greedy and sampling: one beam ------------------------------------------ */

/* The search's options as the sampler takes them (no repetition penalty:
 * the search does not see the prompt's ids). */
static ac_sampler_options sampler_options(const ac_decode_options *o, int eos)
{
    ac_sampler_options so = ac_sampler_defaults();
    so.min_new_tokens = o->min_new_tokens;
    so.eos = eos;
    so.temperature = o->temperature;
    so.top_k = o->top_k;
    so.top_p = o->top_p;
    return so;
}

static ac_status decode_single(const ac_decode_model *m, const ac_decode_options *o, const float *first, int pos0,
                               ac_decode_result *out)
{
    int V = m->vocab;
    ac_sampler_options so = sampler_options(o, m->eos);
    ac_sampler smp;
    AC_TRY(ac_sampler_init(&smp, V, o->seed));
    float *lp = ac_malloc((size_t)V * sizeof *lp);
    int *toks = ac_malloc(((size_t)o->max_new_tokens + 1) * sizeof *toks);
    ac_status s = lp && toks ? AC_OK : AC_ERR_NOMEM;
    if (!s) memcpy(lp, first, (size_t)V * sizeof *lp);
    int n = 0;
    double total = 0;
    while (!s) {
        int tok;
        if ((s = ac_sample(&smp, &so, lp, toks, n, n, &tok, NULL))) break;
        total += lp[tok];
        if (tok == m->eos || n == o->max_new_tokens) break;
        toks[n++] = tok;
        if (n == o->max_new_tokens) break;
        s = m->step(m->ctx, &tok, 1, pos0 + n - 1, lp);
        out->steps++;
    }
    free(lp);
    ac_sampler_free(&smp);
    if (s) {
        free(toks);
        return s;
    }
    out->tokens = toks;
    out->n_tokens = n;
    out->logprob = total;
    return AC_OK;
}

/* ---- beam search ---------------------------------------------------------------- */

typedef struct {
    int *tokens;
    int n;        /* tokens held */
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

/* Keeps the B best finished hypotheses by normalized score. */
static void add_finished(hyp *fin, int *n_fin, int B, const int *tokens, int n, int len, double score, float alpha)
{
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
    fin[slot].n = n;
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
    ac_status s = lp && cands && act && next && fin && parent && tok && top && tmp ? AC_OK : AC_ERR_NOMEM;
    for (int b = 0; b < B && !s; b++)
        if (!(act[b].tokens = ac_malloc(cap * sizeof(int))) || !(next[b].tokens = ac_malloc(cap * sizeof(int))) ||
            !(fin[b].tokens = ac_malloc(cap * sizeof(int))))
            s = AC_ERR_NOMEM;
    if (s) goto done;

    memcpy(lp, first, (size_t)V * sizeof *lp);
    int n_act = 1, n_fin = 0, len = 0;
    act[0] = (hyp){act[0].tokens, 0, 0, 0, 0};
    for (;;) {
        int nc = 0;
        for (int b = 0; b < n_act; b++) {
            float *row = lp + (size_t)b * V;
            ac_bar_eos(row, m->eos, len, o->min_new_tokens);
            int n_top = top_tokens(row, V, K, top);
            for (int i = 0; i < n_top; i++) cands[nc++] = (cand){act[b].score + row[top[i]], b, top[i]};
        }
        qsort(cands, (size_t)nc, sizeof *cands, by_score);
        len++;
        int last = len == maxn, n_next = 0;
        for (int i = 0; i < nc && (last || n_next < B); i++) {
            const cand *c = &cands[i];
            const hyp *p = &act[c->beam];
            if (c->token == m->eos) {
                /* only a top-ranked EOS ends a hypothesis; the EOS counts in its length */
                if (i < B) add_finished(fin, &n_fin, B, p->tokens, p->n, len, c->score, alpha);
                continue;
            }
            if (last) { /* the length limit: every continuation is final */
                memcpy(tmp, p->tokens, (size_t)p->n * sizeof *tmp);
                tmp[p->n] = c->token;
                add_finished(fin, &n_fin, B, tmp, p->n + 1, len, c->score, alpha);
                continue;
            }
            hyp *h = &next[n_next];
            memcpy(h->tokens, p->tokens, (size_t)p->n * sizeof(int));
            h->tokens[p->n] = c->token;
            h->n = p->n + 1;
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
            if (worst >= normalize(best, len, alpha)) break;
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
    out->tokens = ac_malloc(cap * sizeof(int));
    if (!out->tokens) {
        s = AC_ERR_NOMEM;
        goto done;
    }
    if (best) {
        memcpy(out->tokens, best->tokens, (size_t)best->n * sizeof(int));
        out->n_tokens = best->n;
        out->logprob = best->score;
    }
done:
    for (int b = 0; b < B; b++) {
        if (act) free(act[b].tokens);
        if (next) free(next[b].tokens);
        if (fin) free(fin[b].tokens);
    }
    free(lp), free(cands), free(act), free(next), free(fin), free(parent), free(tok), free(top), free(tmp);
    return s;
}

ac_status ac_decode(const ac_decode_model *m, const ac_decode_options *o, const float *first, int pos0,
                    ac_decode_result *out)
{
    memset(out, 0, sizeof *out);
    if (o->max_new_tokens < 1) return ac_error(AC_ERR_ARG, "max_new_tokens must be at least 1");
    if (o->min_new_tokens < 0 || o->min_new_tokens > o->max_new_tokens)
        return ac_error(AC_ERR_ARG, "min_new_tokens must be in 0..max_new_tokens");
    if (o->beam_size < 1 || o->beam_size > AC_MAX_BEAM_SIZE)
        return ac_error(AC_ERR_ARG, "beam size %d is out of range 1..%d", o->beam_size, AC_MAX_BEAM_SIZE);
    if (o->beam_size > 1 && o->temperature > 0) return ac_error(AC_ERR_ARG, "sampling works with beam size 1 only");
    ac_sampler_options so = sampler_options(o, m->eos);
    AC_TRY(ac_sampler_check(&so, m->vocab));
    return o->beam_size > 1 ? decode_beam(m, o, first, pos0, out) : decode_single(m, o, first, pos0, out);
}
