/* The Qwen2 decoder against the PyTorch reference's dumps:
 *   test_qwen2_stages MODEL_DIR GOLDEN_DIR    parity (files of tests/ref/qwen2/qwen2_ref.py)
 *   test_qwen2_stages --load MODEL_DIR        loads only: prints the error, exit 3 on failure
 * Parity: every layer's output (through the trace hook) and the logits at
 * every position under teacher forcing, the KV-cached
 * steps against the full recomputation, greedy ids, ids sampled with the
 * reference's uniforms, the per-step log-probabilities, top-k 1 = greedy;
 * seeded sampling equal on 1 and 2 threads; a stop id ends the run; the
 * position limit and the cache refuse what does not fit.
 * Writes GOLDEN_DIR/c_steps.bin (per sampled step: the barred logits and the
 * sampler's distribution, [steps][2][vocab] f32) and c_sampled.txt (the ids)
 * for the processors' check in tests/ref/test_qwen2_parity.py. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "models/qwen2/qwen2.h"
#include "tensor/kernels.h"
#include "test_util.h"

#define MIN_NEW 5
#define MAX_IDS 256

static const char *golden_dir;

static FILE *open_golden(const char *name, const char *mode)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", golden_dir, name);
    FILE *f = fopen(path, mode);
    CHECK(f != NULL, "%s: cannot open", path);
    return f;
}

/* Whitespace-separated numbers of line LINE (0-based) of NAME. */
static int read_line(const char *name, int line, double *out, int max)
{
    FILE *f = open_golden(name, "r");
    if (!f) return 0;
    static char buf[1 << 16];
    int n = 0;
    for (int i = 0; i <= line && fgets(buf, sizeof buf, f); i++)
        if (i == line)
            for (char *p = buf, *e; n < max; p = e) {
                double v = strtod(p, &e);
                if (e == p) break;
                out[n++] = v;
            }
    fclose(f);
    return n;
}

static int read_ids(const char *name, int line, int *ids)
{
    double v[MAX_IDS];
    int n = read_line(name, line, v, MAX_IDS);
    for (int i = 0; i < n; i++) ids[i] = (int)v[i];
    return n;
}

/* Largest |a-b| over a row, relative to the row's largest |b|. */
static double row_diff(const float *a, const float *b, size_t n)
{
    double d = 0, m = 1e-6;
    for (size_t i = 0; i < n; i++) d = fmax(d, fabs((double)a[i] - b[i])), m = fmax(m, fabs((double)b[i]));
    return d / m;
}

static qwen2_gen_options with_limits(const qwen2_model *m, int min_new, int max_new)
{
    qwen2_gen_options o = qwen2_gen_defaults(m, 0);
    o.sampler.min_new_tokens = min_new;
    o.max_new_tokens = max_new;
    return o;
}

static double next_uniform(void *ctx)
{
    double **u = ctx;
    return *(*u)++;
}

/* The trace hook's "layer" outputs of one call, kept in order. */
typedef struct {
    float *data; /* [layers][L][hidden] */
    size_t per_layer;
    int layers, seen;
} hidden_log;

static void keep_layer(void *user, const char *name, int layer, const void *data, size_t bytes)
{
    hidden_log *h = user;
    CHECK(strcmp(name, "layer") == 0 && layer == h->seen && layer < h->layers && bytes == h->per_layer * 4,
          "trace: stage %s %d of %zu bytes, expected layer %d of %zu", name, layer, bytes, h->seen, h->per_layer * 4);
    if (layer == h->seen && layer < h->layers && bytes == h->per_layer * 4)
        memcpy(h->data + (size_t)layer * h->per_layer, data, bytes);
    h->seen++;
}

/* Every layer's output of the teacher-forced pass against the reference's,
 * so a divergence is found where it starts. */
static void check_hidden(const hidden_log *h)
{
    size_t n = (size_t)h->layers * h->per_layer, got = 0;
    float *want = malloc(n * sizeof *want);
    FILE *f = open_golden("hidden_tf.bin", "rb");
    if (f && want) got = fread(want, sizeof *want, n, f);
    if (f) fclose(f);
    CHECK(got == n && h->seen == h->layers, "hidden_tf.bin: %zu values, expected %zu; %d layers traced of %d", got, n,
          h->seen, h->layers);
    for (int l = 0; got == n && l < h->layers; l++) {
        double d = row_diff(h->data + (size_t)l * h->per_layer, want + (size_t)l * h->per_layer, h->per_layer);
        CHECK(d <= 1e-4, "layer %d: relative difference %.3g > 1e-4", l, d);
        fprintf(stderr, "  layer %d output       max relative difference %.2e (tolerance 1e-4)\n", l, d);
    }
    free(want);
}

/* Logits at every position in one pass against the reference; returns them. */
static float *teacher_forcing(const qwen2_model *m, const int *seq, int L, ac_arena *a)
{
    size_t V = (size_t)m->cfg.vocab;
    float *got = malloc((size_t)L * V * sizeof *got), *want = malloc((size_t)L * V * sizeof *want);
    qwen2_session *s;
    hidden_log h = {.per_layer = (size_t)L * (size_t)m->cfg.hidden, .layers = m->cfg.layers};
    h.data = malloc((size_t)h.layers * h.per_layer * sizeof *h.data);
    CHECK(h.data && qwen2_session_new(m, L, L, a, &s) == AC_OK, "teacher forcing: %s", ac_last_error());
    if (!h.data) return got;
    qwen2_session_trace(s, &(ac_trace){.fn = keep_layer, .user = &h});
    CHECK(qwen2_forward(s, seq, L, 0, L, got) == AC_OK, "teacher forcing: %s", ac_last_error());
    check_hidden(&h);
    free(h.data);
    FILE *f = open_golden("logits_tf.bin", "rb");
    size_t n = f ? fread(want, sizeof *want, (size_t)L * V, f) : 0;
    if (f) fclose(f);
    CHECK(n == (size_t)L * V, "logits_tf.bin: %zu values, expected %zu", n, (size_t)L * V);
    double worst = 0;
    for (int t = 0; n == (size_t)L * V && t < L; t++) worst = fmax(worst, row_diff(got + t * V, want + t * V, V));
    CHECK(worst <= 1e-4, "teacher forcing: relative difference %.3g > 1e-4", worst);
    fprintf(stderr, "  teacher forcing      %d positions, max relative difference %.2e (tolerance 1e-4)\n", L, worst);
    free(want);
    return got;
}

/* The prompt in one pass, then one cached step per id, against FULL. */
static void cached_steps(const qwen2_model *m, const int *seq, int P, int L, const float *full, ac_arena *a)
{
    size_t V = (size_t)m->cfg.vocab;
    float *lg = malloc(V * sizeof *lg);
    qwen2_session *s;
    double worst = 0;
    CHECK(qwen2_session_new(m, L, P, a, &s) == AC_OK && qwen2_forward(s, seq, P, 0, 1, lg) == AC_OK, "prefill: %s",
          ac_last_error());
    worst = row_diff(lg, full + (size_t)(P - 1) * V, V);
    for (int t = P; t < L; t++) {
        CHECK(qwen2_forward(s, seq + t, 1, t, 1, lg) == AC_OK, "step %d: %s", t, ac_last_error());
        worst = fmax(worst, row_diff(lg, full + (size_t)t * V, V));
    }
    CHECK(worst <= 1e-5, "cached steps vs recomputation: relative difference %.3g > 1e-5", worst);
    fprintf(stderr, "  kv cache vs full     %d steps, max relative difference %.2e (tolerance 1e-5)\n", L - P, worst);
    /* past the cache, and positions not yet cached */
    CHECK(qwen2_forward(s, seq, 1, L, 1, lg) != AC_OK && error_has("exceed the cache"), "past the cache: %s",
          ac_last_error());
    qwen2_session *s2;
    CHECK(qwen2_session_new(m, L, P, a, &s2) == AC_OK && qwen2_forward(s2, seq, 1, 3, 1, lg) != AC_OK &&
              error_has("follows 0 cached"), "a gap: %s", ac_last_error());
    int bad = m->cfg.vocab;
    CHECK(qwen2_forward(s2, &bad, 1, 0, 1, lg) != AC_OK && error_has("outside the vocabulary"), "bad id: %s",
          ac_last_error());
    free(lg);
}

static void greedy(const qwen2_model *m, const int *prompt, int P, ac_arena *a)
{
    int want[MAX_IDS];
    double margin[MAX_IDS];
    int nw = read_ids("greedy.txt", 0, want);
    read_line("greedy.txt", 1, margin, MAX_IDS);
    qwen2_gen_options o = with_limits(m, MIN_NEW, 30);
    o.sampler.temperature = 0, o.sampler.top_k = 0, o.sampler.top_p = 1;
    qwen2_gen_result r;
    if (qwen2_generate(m, prompt, P, &o, a, &r) != AC_OK || r.n < 1) {
        CHECK(0, "greedy: %s", ac_last_error());
        return;
    }
    int same = 0;
    while (same < r.n && same < nw && r.ids[same] == want[same]) same++;
    if (same < nw && same < r.n && margin[same] < 1e-4)
        fprintf(stderr, "  note: greedy ids differ from step %d, a near-tie (margin %.2g)\n", same, margin[same]);
    else
        CHECK(same == nw && r.n == nw, "greedy: ids differ from step %d (%d ids, reference %d)", same, r.n, nw);
    fprintf(stderr, "  greedy               %d ids, %d equal to the reference\n", r.n, same);

    /* the per-step log-probabilities: log_softmax of one pass over prompt + ids */
    int seq[MAX_IDS], L = P + r.n - 1;
    size_t V = (size_t)m->cfg.vocab;
    memcpy(seq, prompt, (size_t)P * sizeof *seq);
    memcpy(seq + P, r.ids, (size_t)(r.n - 1) * sizeof *seq);
    float *lg = malloc((size_t)L * V * sizeof *lg);
    qwen2_session *s;
    double worst = 0;
    CHECK(qwen2_session_new(m, L, L, a, &s) == AC_OK && qwen2_forward(s, seq, L, 0, r.n, lg) == AC_OK, "%s",
          ac_last_error());
    for (int step = 0; step < r.n; step++) {
        float *row = lg + (size_t)step * V;
        for (int i = 0; i < o.n_stop; i++) ac_bar_eos(row, o.stop[i], step, MIN_NEW);
        ac_log_softmax(row, V);
        worst = fmax(worst, fabs(row[r.ids[step]] - r.logprobs[step]));
    }
    CHECK(worst <= 1e-5, "greedy log-probabilities differ by %.3g", worst);
    fprintf(stderr, "  greedy log-probs     max difference %.2e from one pass (tolerance 1e-5)\n", worst);
    free(lg);

    /* sampling with top-k 1 is greedy, whatever the draws */
    qwen2_gen_options k1 = o;
    k1.sampler.temperature = 1, k1.sampler.top_k = 1, k1.seed = 99;
    qwen2_gen_result rk;
    CHECK(qwen2_generate(m, prompt, P, &k1, a, &rk) == AC_OK && rk.n == r.n &&
              memcmp(rk.ids, r.ids, (size_t)r.n * sizeof *r.ids) == 0,
          "top-k 1 differs from greedy");
    qwen2_gen_result_free(&rk);

    /* the first new id that did not occur before, as the only stop id:
     * barred before MIN_NEW, it changes no earlier argmax */
    int k = MIN_NEW;
    for (int seen = 1; seen && k < r.n; seen ? k++ : 0) {
        seen = 0;
        for (int j = 0; j < k; j++) seen |= r.ids[j] == r.ids[k];
    }
    if (k < r.n) {
        qwen2_gen_result rs;
        o.stop[0] = r.ids[k], o.n_stop = 1;
        CHECK(qwen2_generate(m, prompt, P, &o, a, &rs) == AC_OK && rs.stopped && rs.n == k + 1 &&
                  memcmp(rs.ids, r.ids, (size_t)rs.n * sizeof *rs.ids) == 0,
              "stop id %d: %d ids, stopped %d (expected %d)", r.ids[k], rs.n, rs.stopped, k + 1);
        qwen2_gen_result_free(&rs);
    }
    qwen2_gen_result_free(&r);
}

/* Sampling with the reference's uniforms; the C side's per-step logits and
 * distributions for the processors' check. */
static void sampled(const qwen2_model *m, const int *prompt, int P, ac_arena *a)
{
    double u[MAX_IDS], *cursor = u;
    int want[MAX_IDS], fragile[1];
    read_line("sampled.txt", 0, u, MAX_IDS);
    int nw = read_ids("sampled.txt", 1, want);
    read_ids("sampled.txt", 2, fragile);
    qwen2_gen_options o = with_limits(m, MIN_NEW, 40);
    o.uniform = next_uniform, o.uniform_ctx = &cursor;
    qwen2_gen_result r;
    CHECK(qwen2_generate(m, prompt, P, &o, a, &r) == AC_OK, "sampled: %s", ac_last_error());
    int same = 0;
    while (same < r.n && same < nw && r.ids[same] == want[same]) same++;
    if (fragile[0] >= 0 && same >= fragile[0])
        fprintf(stderr, "  note: sampled ids compared up to step %d (a draw near a boundary)\n", fragile[0]);
    else
        CHECK(same == nw && r.n == nw, "sampled: ids differ from step %d (%d ids, reference %d)", same, r.n, nw);
    fprintf(stderr, "  sampled (injected)   %d ids, %d equal to the reference\n", r.n, same);

    /* the same steps again, teacher-forced, through the sampler alone */
    size_t V = (size_t)m->cfg.vocab;
    int hist[MAX_IDS];
    memcpy(hist, prompt, (size_t)P * sizeof *hist);
    memcpy(hist + P, r.ids, (size_t)r.n * sizeof *hist);
    float *lg = malloc(V * sizeof *lg);
    ac_sampler smp;
    qwen2_session *s;
    FILE *f = open_golden("c_steps.bin", "wb"), *ids = open_golden("c_sampled.txt", "w");
    CHECK(ac_sampler_init(&smp, m->cfg.vocab, 0) == AC_OK && qwen2_session_new(m, P + r.n, P, a, &s) == AC_OK &&
              qwen2_forward(s, prompt, P, 0, 1, lg) == AC_OK, "steps: %s", ac_last_error());
    ac_sampler_options so = o.sampler;
    so.eos = -1;
    for (int step = 0; f && ids && step < r.n; step++) {
        for (int i = 0; i < o.n_stop; i++) ac_bar_eos(lg, o.stop[i], step, MIN_NEW);
        int kept;
        CHECK(ac_sampler_probs(&smp, &so, lg, hist, P + step, step, &kept) == AC_OK, "probs: %s", ac_last_error());
        fwrite(lg, sizeof *lg, V, f);
        fwrite(smp.probs, sizeof *smp.probs, V, f);
        fprintf(ids, "%d%c", r.ids[step], step + 1 < r.n ? ' ' : '\n');
        if (step + 1 < r.n) CHECK(qwen2_forward(s, &r.ids[step], 1, P + step, 1, lg) == AC_OK, "step");
    }
    if (f) fclose(f);
    if (ids) fclose(ids);
    ac_sampler_free(&smp);
    free(lg);
    qwen2_gen_result_free(&r);
}

/* Seeded sampling gives the same ids and log-probabilities on 1 and 2 threads. */
static void threads(const qwen2_model *m, const int *prompt, int P, ac_arena *a)
{
    qwen2_gen_options o = with_limits(m, MIN_NEW, 40);
    o.seed = 1234;
    qwen2_gen_result one, two;
    int before = ac_get_threads();
    ac_set_threads(1);
    CHECK(qwen2_generate(m, prompt, P, &o, a, &one) == AC_OK, "1 thread: %s", ac_last_error());
    ac_set_threads(2);
    CHECK(qwen2_generate(m, prompt, P, &o, a, &two) == AC_OK, "2 threads: %s", ac_last_error());
    ac_set_threads(before);
    CHECK(one.n == two.n && memcmp(one.ids, two.ids, (size_t)one.n * sizeof *one.ids) == 0 &&
              memcmp(one.logprobs, two.logprobs, (size_t)one.n * sizeof *one.logprobs) == 0,
          "seeded sampling differs between 1 and 2 threads");
    fprintf(stderr, "  seeded, 1 vs 2 threads  %d ids, %s\n", one.n, one.n == two.n ? "same" : "DIFFERENT");
    qwen2_gen_result_free(&one), qwen2_gen_result_free(&two);
}

/* Prompts that do not fit the position limit. */
static void limits(const qwen2_model *m, ac_arena *a)
{
    int P = m->cfg.max_positions + 1, *ids = calloc((size_t)P, sizeof *ids);
    qwen2_gen_options o = with_limits(m, 0, 1);
    qwen2_gen_result r;
    CHECK(qwen2_generate(m, ids, P, &o, a, &r) != AC_OK && error_has("max_position_embeddings"), "long prompt: %s",
          ac_last_error());
    o.max_new_tokens = 40;
    CHECK(qwen2_generate(m, ids, P - 30, &o, a, &r) != AC_OK && error_has("max_position_embeddings"),
          "prompt + new tokens: %s", ac_last_error());
    CHECK(qwen2_generate(m, ids, 0, &o, a, &r) != AC_OK && error_has("empty"), "empty prompt: %s", ac_last_error());
    qwen2_session *s;
    CHECK(qwen2_session_new(m, P, 1, a, &s) != AC_OK && error_has("max_position_embeddings"), "session: %s",
          ac_last_error());
    free(ids);
}

int main(int argc, char **argv)
{
    test_init(0, argv);
    ac_set_log_level(1);
    if (argc == 3 && strcmp(argv[1], "--load") == 0) {
        qwen2_model *m;
        if (qwen2_load(argv[2], test_weight_type(), &m)) {
            printf("%s\n", ac_last_error());
            return 3;
        }
        const qwen2_generation *g = &m->gen;
        printf("defaults: do_sample %d top_k %d top_p %g temperature %g repetition_penalty %g pad %d eos", g->do_sample,
               g->top_k, g->top_p, g->temperature, g->repetition_penalty, g->pad);
        for (int i = 0; i < g->n_eos; i++) printf(" %d", g->eos[i]);
        printf("\n");
        qwen2_free(m);
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: test_qwen2_stages MODEL_DIR GOLDEN_DIR | --load MODEL_DIR\n");
        return 2;
    }
    golden_dir = argv[2];
    qwen2_model *m;
    if (qwen2_load(argv[1], test_weight_type(), &m)) {
        fprintf(stderr, "load: %s\n", ac_last_error());
        return 1;
    }
    int seq[MAX_IDS], P[1];
    read_ids("seq.txt", 0, P);
    int L = read_ids("seq.txt", 1, seq);
    ac_arena a;
    ac_arena_init(&a, 1 << 20);
    float *full = teacher_forcing(m, seq, L, &a);
    cached_steps(m, seq, P[0], L, full, &a);
    free(full);
    greedy(m, seq, P[0], &a);
    sampled(m, seq, P[0], &a);
    threads(m, seq, P[0], &a);
    limits(m, &a);
    ac_arena_free(&a);
    qwen2_free(m);
    return test_finish();
}
