/* nn/sampler: each logit processor against hand-computed values, the draw
 * with injected uniforms, the whole distribution against the torch
 * reference of HF's processors (tests/ref/sampler_ref.py), and seeded
 * searches through nn/decode (thread counts, greedy = top-k 1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audioc.h"
#include "base/threadpool.h"
#include "nn/decode.h"
#include "nn/sampler.h"
#include "tensor/mat.h"
#include "test_util.h"

#define NINF (-INFINITY)

static int near(double a, double b, double tol) { return a == b || fabs(a - b) <= tol; }

static int same_floats(const float *a, const float *b, int n, double tol)
{
    for (int i = 0; i < n; i++)
        if (!near(a[i], b[i], tol)) return 0;
    return 1;
}

/* The distribution for LOGITS[n] under O (a sampler of its own). */
static int probs_of(const float *logits, int n, const ac_sampler_options *o, float *probs)
{
    ac_sampler s;
    int kept = -1;
    if (ac_sampler_init(&s, n, 0) == AC_OK && ac_sampler_probs(&s, o, logits, NULL, 0, 0, &kept) == AC_OK)
        memcpy(probs, s.probs, (size_t)n * sizeof *probs);
    ac_sampler_free(&s);
    return kept;
}

static ac_sampler_options sampling(float temperature, int top_k, float top_p)
{
    ac_sampler_options o = ac_sampler_defaults();
    o.temperature = temperature, o.top_k = top_k, o.top_p = top_p;
    return o;
}

static void test_repetition_penalty(void)
{
    /* ids 0, 1, 3, 5 seen (0 and 1 twice): each penalized once */
    const float logits[6] = {2, -2, 0.5f, -0.5f, 1, 0};
    const int ids[] = {0, 1, 1, 3, 0, 5};
    float scores[6], want[6] = {1, -4, 0.5f, -1, 1, 0};
    memcpy(scores, logits, sizeof scores);
    ac_repetition_penalty(scores, logits, ids, 6, 2.0f);
    CHECK(same_floats(scores, want, 6, 0), "penalty 2: %g %g %g %g %g %g", scores[0], scores[1], scores[2], scores[3],
          scores[4], scores[5]);

    /* through the sampler: the penalty moves the argmax, both signs */
    ac_sampler s;
    ac_sampler_options o = ac_sampler_defaults();
    int id = -1;
    CHECK(ac_sampler_init(&s, 2, 0) == AC_OK, "init");
    o.repetition_penalty = 2;
    const float pos[2] = {2.0f, 1.5f}, neg[2] = {-1.0f, -1.05f};
    const int h0[] = {0};
    CHECK(ac_sample(&s, &o, pos, h0, 1, 0, &id, NULL) == AC_OK && id == 1, "2/2 < 1.5: id %d", id);
    CHECK(ac_sample(&s, &o, pos, NULL, 0, 0, &id, NULL) == AC_OK && id == 0, "no history: id %d", id);
    o.repetition_penalty = 1.1f;
    CHECK(ac_sample(&s, &o, neg, h0, 1, 0, &id, NULL) == AC_OK && id == 1, "-1 * 1.1 < -1.05: id %d", id);
    CHECK(s.scores[0] == -1.0f * 1.1f && s.scores[1] == -1.05f, "scores %g %g", s.scores[0], s.scores[1]);
    /* below 1 the penalty is a reward */
    o.repetition_penalty = 0.5f;
    const int h1[] = {1};
    CHECK(ac_sample(&s, &o, pos, h1, 1, 0, &id, NULL) == AC_OK && id == 1 && s.scores[1] == 3.0f, "reward: id %d", id);
    ac_sampler_free(&s);
}

static void test_min_new_tokens(void)
{
    float x[3] = {1, 2, 3};
    ac_bar_eos(x, 2, 4, 5);
    CHECK(x[2] == NINF && x[0] == 1 && x[1] == 2, "step 4 < 5 bars the end token");
    x[2] = 3;
    ac_bar_eos(x, 2, 5, 5);
    CHECK(x[2] == 3, "step 5 of 5 does not");
    ac_bar_eos(x, -1, 0, 5);
    CHECK(x[0] == 1 && x[1] == 2 && x[2] == 3, "no end token: nothing barred");

    ac_sampler s;
    ac_sampler_options o = ac_sampler_defaults();
    o.eos = 2, o.min_new_tokens = 3;
    int id = -1;
    CHECK(ac_sampler_init(&s, 3, 0) == AC_OK, "init");
    CHECK(ac_sample(&s, &o, x, NULL, 0, 2, &id, NULL) == AC_OK && id == 1, "greedy at step 2: id %d", id);
    CHECK(ac_sample(&s, &o, x, NULL, 0, 3, &id, NULL) == AC_OK && id == 2, "greedy at step 3: id %d", id);
    o.temperature = 1;
    int kept = 0;
    CHECK(ac_sampler_probs(&s, &o, x, NULL, 0, 0, &kept) == AC_OK && kept == 2 && s.probs[2] == 0,
          "sampling: the end token has no mass (%d kept)", kept);
    /* everything barred is an error, not a draw */
    const float one[1] = {0};
    ac_sampler s1;
    o.eos = 0;
    CHECK(ac_sampler_init(&s1, 1, 0) == AC_OK, "init 1");
    CHECK(ac_sample(&s1, &o, one, NULL, 0, 0, &id, NULL) == AC_ERR_ARG && error_has("-inf"), "all barred: %s",
          ac_last_error());
    ac_sampler_free(&s1);
    ac_sampler_free(&s);
}

static void test_temperature(void)
{
    /* softmax({0, 1, 2} / 0.5) = e^{0, 2, 4} / (1 + 7.3890561 + 54.59815) */
    const float x[3] = {0, 1, 2};
    const float want_half[3] = {0.015876239f, 0.117310428f, 0.866813332f};
    const float want_one[3] = {0.090030573f, 0.244728471f, 0.665240956f};
    float p[3];
    ac_sampler_options o = sampling(0.5f, 0, 1);
    CHECK(probs_of(x, 3, &o, p) == 3 && same_floats(p, want_half, 3, 1e-7), "T 0.5: %.9f %.9f %.9f", p[0], p[1], p[2]);
    o = sampling(1, 0, 1);
    CHECK(probs_of(x, 3, &o, p) == 3 && same_floats(p, want_one, 3, 1e-7), "T 1: %.9f %.9f %.9f", p[0], p[1], p[2]);
}

static void test_top_k_ties(void)
{
    const float x[6] = {1, 3, 3, 2, 3, 0};
    float p[6];
    const float third = 1.0f / 3;
    ac_sampler_options o = sampling(1, 2, 1);
    /* the 2nd largest is 3: all three 3s stay */
    CHECK(probs_of(x, 6, &o, p) == 3 && near(p[1], third, 1e-7) && near(p[2], third, 1e-7) && near(p[4], third, 1e-7),
          "top-k 2 keeps the tie: %g %g %g", p[1], p[2], p[4]);
    o.top_k = 1;
    CHECK(probs_of(x, 6, &o, p) == 3, "top-k 1 keeps the tie too");
    /* the 4th largest is 2: e^3 three times and e^2 */
    o.top_k = 4;
    double z = 3 * exp(3.0) + exp(2.0);
    CHECK(probs_of(x, 6, &o, p) == 4 && near(p[3], exp(2.0) / z, 1e-7) && near(p[1], exp(3.0) / z, 1e-7) && p[0] == 0,
          "top-k 4: %g %g", p[3], p[1]);
    o.top_k = 6;
    CHECK(probs_of(x, 6, &o, p) == 6, "top-k = vocabulary: all");
    o.top_k = 100;
    CHECK(probs_of(x, 6, &o, p) == 6, "top-k beyond the vocabulary: all");
}

static void test_top_p_edges(void)
{
    /* four equal logits: every cumulative probability is exact */
    const float x[6] = {0, NINF, 0, 0, NINF, 0};
    float p[6];
    ac_sampler_options o = sampling(1, 0, 0.5f);
    CHECK(probs_of(x, 6, &o, p) == 2 && p[0] == 0.5f && p[2] == 0.5f, "p 0.5: two of four (lowest ids)");
    o.top_p = nextafterf(0.5f, 1);
    CHECK(probs_of(x, 6, &o, p) == 3 && near(p[3], 1.0 / 3, 1e-7) && p[5] == 0, "just above 0.5: three");
    o.top_p = 0.25f;
    CHECK(probs_of(x, 6, &o, p) == 1 && p[0] == 1, "p 0.25: one");
    o.top_p = 0.75f;
    CHECK(probs_of(x, 6, &o, p) == 3, "p 0.75: three");
    o.top_p = 1;
    CHECK(probs_of(x, 6, &o, p) == 4 && p[5] == 0.25f && p[1] == 0, "p 1: all four");

    /* tiny p keeps the argmax alone; p 1 is the plain softmax */
    const float y[4] = {0.3f, 2.5f, -1, 2.4f};
    o = sampling(1, 0, 1e-6f);
    CHECK(probs_of(y, 4, &o, p) == 1 && p[1] == 1, "tiny p: the argmax");
    o.top_p = 1;
    double z = exp(0.3) + exp(2.5) + exp(-1.0) + exp(2.4);
    CHECK(probs_of(y, 4, &o, p) == 4 && near(p[0], exp(0.3) / z, 1e-7) && near(p[3], exp(2.4) / z, 1e-7),
          "p 1: softmax %g %g", p[0], p[3]);
    /* top-k runs first: p then applies within the k kept */
    o = sampling(1, 2, 0.6f);
    double a = exp(2.5) / (exp(2.5) + exp(2.4));
    CHECK(probs_of(y, 4, &o, p) == 2 && near(p[1], a, 1e-7), "top-k 2 then p 0.6 (%g before 2.4): %g", a, p[1]);
}

static void test_draw(void)
{
    const float p[4] = {0.25f, 0, 0.5f, 0.25f};
    static const struct {
        double u;
        int id;
    } c[] = {{0, 0}, {0.2499999, 0}, {0.25, 2}, {0.7499999, 2}, {0.75, 3}, {0.9999999, 3}, {1.0, 3}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        int id = ac_draw(p, 4, c[i].u);
        CHECK(id == c[i].id, "u %.7f: id %d, want %d", c[i].u, id, c[i].id);
    }
    /* rounding short of 1, and zeros at the end: the last id with mass */
    const float q[5] = {0.3f, 0.3f, 0.3f, 0, 0};
    CHECK(ac_draw(q, 5, 0.95) == 2, "u past the total");
}

typedef struct {
    const double *u;
    int n, next;
} uniforms;

static double next_uniform(void *ctx)
{
    uniforms *g = ctx;
    return g->u[g->next++ % g->n];
}

static void test_injected_uniforms(void)
{
    enum { V = 40 };
    float x[V];
    uint32_t seed = 5;
    fill_random(x, V, -3, 3, &seed);
    ac_sampler_options o = sampling(0.9f, 12, 0.9f);
    float p[V];
    int kept = probs_of(x, V, &o, p);
    CHECK(kept > 2, "a support of %d", kept);
    /* injected: each draw is ac_draw of the distribution at that uniform */
    static const double u[] = {0.0, 0.13, 0.5, 0.77, 0.999};
    uniforms g = {u, 5, 0};
    ac_sampler s;
    CHECK(ac_sampler_init(&s, V, 0) == AC_OK, "init");
    s.uniform = next_uniform, s.uniform_ctx = &g;
    for (int i = 0; i < 5; i++) {
        int id = -1;
        float lp = 0;
        CHECK(ac_sample(&s, &o, x, NULL, 0, 0, &id, &lp) == AC_OK && id == ac_draw(p, V, u[i]), "u %g: id %d", u[i], id);
        double mx = x[0], z = 0;
        for (int v = 1; v < V; v++) mx = fmax(mx, x[v]);
        for (int v = 0; v < V; v++) z += exp(x[v] - mx);
        CHECK(near(lp, x[id] - mx - log(z), 1e-6), "log-prob %g under the raw logits", lp);
    }
    /* seeded: the uniforms are xoshiro256**'s from the seed */
    ac_sampler_free(&s);
    CHECK(ac_sampler_init(&s, V, 77) == AC_OK, "init seeded");
    ac_rng r;
    ac_rng_seed(&r, 77);
    int same = 1;
    for (int i = 0; i < 50; i++) {
        int id = -1;
        ac_sample(&s, &o, x, NULL, 0, 0, &id, NULL);
        same &= id == ac_draw(p, V, ac_rng_uniform(&r));
    }
    CHECK(same, "seeded draws follow ac_rng_uniform");
    ac_sampler_free(&s);
}

static void test_bad_options(void)
{
    ac_sampler s;
    const float x[3] = {0, 1, 2};
    int id, bad_id[] = {3};
    CHECK(ac_sampler_init(&s, 3, 0) == AC_OK, "init");
    ac_sampler_options o = ac_sampler_defaults();
    o.top_p = 0;
    CHECK(ac_sample(&s, &o, x, NULL, 0, 0, &id, NULL) == AC_ERR_ARG && error_has("top-p"), "top-p 0");
    o = ac_sampler_defaults(), o.repetition_penalty = 0;
    CHECK(ac_sample(&s, &o, x, NULL, 0, 0, &id, NULL) == AC_ERR_ARG && error_has("repetition penalty"), "penalty 0");
    o = ac_sampler_defaults(), o.eos = 3;
    CHECK(ac_sample(&s, &o, x, NULL, 0, 0, &id, NULL) == AC_ERR_ARG && error_has("end token 3"), "eos past vocab");
    o = ac_sampler_defaults(), o.repetition_penalty = 1.2f;
    CHECK(ac_sample(&s, &o, x, bad_id, 1, 0, &id, NULL) == AC_ERR_ARG && error_has("history id 3"), "history id");
    const float nan_logits[3] = {0, NAN, 1};
    o = ac_sampler_defaults();
    CHECK(ac_sample(&s, &o, nan_logits, NULL, 0, 0, &id, NULL) == AC_ERR_ARG && error_has("logit 1"), "NaN logit");
    ac_sampler_free(&s);
    CHECK(ac_sampler_init(&s, 0, 0) == AC_ERR_ARG && s.scores == NULL, "empty vocabulary");
}

/* ---- against the torch reference ---------------------------------------- */

typedef struct {
    int V, step, n_hist, id;
    double u, logprob;
    ac_sampler_options o;
    int *hist;
    float *logits, *probs;
} ref_case;

static void case_free(ref_case *c) { free(c->hist), free(c->logits), free(c->probs); }

/* One case of sampler_ref.py's file (its docstring gives the layout). */
static int read_case(FILE *f, ref_case *c)
{
    memset(c, 0, sizeof *c);
    c->o = ac_sampler_defaults();
    ac_sampler_options *o = &c->o;
    if (fscanf(f, "%d %f %d %d %d %f %d %f %d %lf %d %lf", &c->V, &o->repetition_penalty, &o->min_new_tokens, &o->eos,
               &c->step, &o->temperature, &o->top_k, &o->top_p, &c->n_hist, &c->u, &c->id, &c->logprob) != 12 ||
        c->V < 1 || c->n_hist < 0)
        return 0;
    c->hist = malloc(((size_t)c->n_hist + 1) * sizeof *c->hist);
    c->logits = malloc((size_t)c->V * sizeof *c->logits);
    c->probs = malloc((size_t)c->V * sizeof *c->probs);
    int ok = c->hist && c->logits && c->probs;
    for (int i = 0; ok && i < c->n_hist; i++) ok = fscanf(f, "%d", &c->hist[i]) == 1;
    for (int i = 0; ok && i < c->V; i++) ok = fscanf(f, "%f", &c->logits[i]) == 1;
    for (int i = 0; ok && i < c->V; i++) ok = fscanf(f, "%f", &c->probs[i]) == 1;
    if (!ok) case_free(c);
    return ok;
}

/* Every case: the distribution within 1e-6 with the same support, the id
 * drawn at the case's uniform, its log-probability within 1e-6 (scaled). */
static void test_reference(void)
{
    const char *path = work_path("sampler_ref.txt");
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "%s missing (tests/ref/sampler_ref.py writes it)", path);
    if (!f) return;
    int n_cases = 0, done = 0, bad = 0, kept_total = 0;
    double worst = 0, worst_lp = 0;
    if (fscanf(f, "%d", &n_cases) != 1) n_cases = 0;
    ref_case c;
    for (; done < n_cases && read_case(f, &c); done++) {
        ac_sampler s;
        double u = c.u;
        uniforms g = {&u, 1, 0};
        int kept = 0, id = -1;
        float lp = 0;
        ac_status st = ac_sampler_init(&s, c.V, 0);
        s.uniform = next_uniform, s.uniform_ctx = &g;
        if (!st) st = ac_sampler_probs(&s, &c.o, c.logits, c.hist, c.n_hist, c.step, &kept);
        double d = 0;
        int support = 1;
        for (int i = 0; !st && i < c.V; i++) {
            d = fmax(d, fabs(s.probs[i] - c.probs[i]));
            support &= (s.probs[i] > 0) == (c.probs[i] > 0);
        }
        if (!st) st = ac_sample(&s, &c.o, c.logits, c.hist, c.n_hist, c.step, &id, &lp);
        double dlp = fabs(lp - c.logprob) / (1 + fabs(c.logprob));
        if (st || d > 1e-6 || !support || id != c.id || dlp > 1e-6) {
            if (bad++ < 5)
                fprintf(stderr, "  case %d (V %d, T %g, k %d, p %g, penalty %g): status %d, max diff %.3g, support %d, "
                        "id %d want %d, log-prob %.3g\n", done, c.V, c.o.temperature, c.o.top_k, c.o.top_p,
                        c.o.repetition_penalty, st, d, support, id, c.id, dlp);
        }
        worst = fmax(worst, d), worst_lp = fmax(worst_lp, dlp), kept_total += kept;
        ac_sampler_free(&s);
        case_free(&c);
    }
    fclose(f);
    CHECK(done == n_cases && n_cases > 0, "read %d of %d cases", done, n_cases);
    CHECK(bad == 0, "%d of %d cases differ from the reference", bad, done);
    fprintf(stderr, "  %d cases (%d ids kept in all): probabilities within %.2e, log-probs %.2e\n", done, kept_total,
            worst, worst_lp);
}

/* ---- through the search ---------------------------------------------------- */

/* A toy decoder: the logits are W . (E[token] + position), one product the
 * thread pool splits by rows, then log_softmax. */
enum { TOY_V = 3000, TOY_D = 64 };

typedef struct {
    float *w, *e, *h, *logits;
} toy;

static ac_status toy_step(void *ctx, const int *tokens, int n, int pos, float *logprobs)
{
    toy *t = ctx;
    (void)n;
    for (int d = 0; d < TOY_D; d++) t->h[d] = t->e[(size_t)tokens[0] * TOY_D + d] + 0.3f * sinf(0.1f * (float)(pos * d));
    ac_mat w = {t->w, AC_DTYPE_F32, TOY_V, TOY_D};
    ac_matmul(t->h, &w, NULL, t->logits, 1);
    double mx = t->logits[0], z = 0;
    for (int v = 1; v < TOY_V; v++) mx = fmax(mx, t->logits[v]);
    for (int v = 0; v < TOY_V; v++) z += exp(t->logits[v] - mx);
    for (int v = 0; v < TOY_V; v++) logprobs[v] = (float)(t->logits[v] - mx - log(z));
    return AC_OK;
}

static void toy_reorder(void *ctx, const int *parent, int n, int len) { (void)ctx, (void)parent, (void)n, (void)len; }

static int toy_run(toy *t, const ac_decode_options *o, ac_decode_result *r)
{
    float *first = malloc(TOY_V * sizeof *first);
    int tok = 1;
    static const int stop = 0;
    ac_decode_model m = {.ctx = t, .vocab = TOY_V, .stop = &stop, .n_stop = 1, .logprobs = 1, .step = toy_step,
                         .reorder = toy_reorder};
    ac_status s = first ? toy_step(t, &tok, 1, 0, first) : AC_ERR_NOMEM;
    if (!s) s = ac_decode(&m, o, first, 1, r);
    free(first);
    return s == AC_OK;
}

static int same_result(const ac_decode_result *a, const ac_decode_result *b)
{
    return a->n_tokens == b->n_tokens && a->logprob == b->logprob &&
           memcmp(a->tokens, b->tokens, (size_t)a->n_tokens * sizeof *a->tokens) == 0;
}

static void test_search(void)
{
    toy t = {malloc((size_t)TOY_V * TOY_D * sizeof(float)), malloc((size_t)TOY_V * TOY_D * sizeof(float)),
             malloc(TOY_D * sizeof(float)), malloc(TOY_V * sizeof(float))};
    uint32_t seed = 11;
    fill_random(t.w, (size_t)TOY_V * TOY_D, -0.5f, 0.5f, &seed);
    fill_random(t.e, (size_t)TOY_V * TOY_D, -1, 1, &seed);
    int threads = ac_get_threads();
    ac_decode_options o = ac_decode_defaults();
    o.max_new_tokens = 60, o.min_new_tokens = 20, o.temperature = 1.0f, o.top_k = 0, o.top_p = 0.95f, o.seed = 123;

    /* seeded sampling: the same tokens on 1 and 2 threads, and run to run */
    ac_decode_result one, two, again;
    ac_set_threads(1);
    CHECK(toy_run(&t, &o, &one), "sampling on 1 thread: %s", ac_last_error());
    ac_set_threads(2);
    CHECK(toy_run(&t, &o, &two) && toy_run(&t, &o, &again), "sampling on 2 threads: %s", ac_last_error());
    CHECK(one.n_tokens >= 20 && same_result(&one, &two) && same_result(&two, &again),
          "sampled %d / %d / %d tokens, logprob %.9g / %.9g", one.n_tokens, two.n_tokens, again.n_tokens, one.logprob,
          two.logprob);
    ac_decode_result other;
    o.seed = 124;
    CHECK(toy_run(&t, &o, &other) && !same_result(&one, &other), "another seed, other tokens");
    ac_decode_result_free(&other);

    /* greedy equals sampling restricted to the top 1, at any temperature */
    ac_decode_result greedy, top1;
    o.temperature = 0;
    CHECK(toy_run(&t, &o, &greedy), "greedy");
    o.temperature = 1.7f, o.top_k = 1, o.top_p = 1;
    CHECK(toy_run(&t, &o, &top1), "top-k 1");
    CHECK(greedy.n_tokens >= 20 && same_result(&greedy, &top1), "greedy %d tokens, top-k 1 %d", greedy.n_tokens,
          top1.n_tokens);
    ac_set_threads(threads);
    ac_decode_result_free(&one), ac_decode_result_free(&two), ac_decode_result_free(&again);
    ac_decode_result_free(&greedy), ac_decode_result_free(&top1);
    free(t.w), free(t.e), free(t.h), free(t.logits);
}

/* A scripted decoder for the early stop of beam search: each beam's scores
 * follow from its last token (EOS 0, A 1, B 2, C 3). */
enum { SCRIPT_V = 8 };

static void script_row(int last, float *row)
{
    for (int v = 0; v < SCRIPT_V; v++) row[v] = -30;
    if (last < 0) row[0] = -1.4f, row[1] = -1.5f, row[2] = -10;   /* after the prompt */
    else if (last == 1) row[0] = -0.9f, row[3] = -1.5f;           /* after A */
    else if (last == 3) row[0] = 0;                                /* after A C: end */
    else for (int v = 0; v < SCRIPT_V; v++) row[v] = -10;
}

static ac_status script_step(void *ctx, const int *tokens, int n, int pos, float *scores)
{
    (void)ctx, (void)pos;
    for (int i = 0; i < n; i++) script_row(tokens[i], scores + (size_t)i * SCRIPT_V);
    return AC_OK;
}

/* After two steps the finished list holds [] + EOS (-1.4) and [A] + EOS
 * (-2.4 / 2); the continuing [A C] (-3.0) ends next step at -3.0 / 3.
 * Against the best continuing beam (-3.0 / 2) the search stops early with
 * [A]; against the step's best candidate (the EOS at -2.4 / 2) it goes on
 * and finds [A C], as transformers' beam scorer does. */
static void test_early_stop(void)
{
    static const int stop = 0;
    ac_decode_model m = {.vocab = SCRIPT_V, .stop = &stop, .n_stop = 1, .logprobs = 1, .step = script_step,
                         .reorder = toy_reorder};
    float first[SCRIPT_V];
    script_row(-1, first);
    ac_decode_options o = ac_decode_defaults();
    o.beam_size = 2, o.max_new_tokens = 10;
    ac_decode_result a, b;
    CHECK(ac_decode(&m, &o, first, 1, &a) == AC_OK && a.n_tokens == 1 && a.tokens[0] == 1, "best beam: %d tokens",
          a.n_tokens);
    o.stop_vs_candidates = 1;
    CHECK(ac_decode(&m, &o, first, 1, &b) == AC_OK && b.n_tokens == 2 && b.tokens[0] == 1 && b.tokens[1] == 3,
          "best candidate: %d tokens", b.n_tokens);
    ac_decode_result_free(&a), ac_decode_result_free(&b);
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    RUN(test_repetition_penalty);
    RUN(test_min_new_tokens);
    RUN(test_temperature);
    RUN(test_top_k_ties);
    RUN(test_top_p_edges);
    RUN(test_draw);
    RUN(test_injected_uniforms);
    RUN(test_bad_options);
    RUN(test_reference);
    RUN(test_search);
    RUN(test_early_stop);
    ac_threadpool_shutdown();
    return test_finish();
}
