/* Speed of Vevo2's flow-matching sampler on an FM folder (e.g. that of
 * the package tests/ref/vevo2/make_package.py --full writes; see
 * bench/vevo2_bench.py): seconds per Euler step (two estimator passes, over Tt+F and over F frames) at 1 and 2 threads, the
 * GFLOP/s that makes, and OpenBLAS sgemm's rate on the step's linear
 * products (f32 weights, its own threads) for comparison. WEIGHTS (stored,
 * f32, f16, bf16, q8_0: --weights) converts the matrices as a load would;
 * the step is then also given as a fraction of the roof of the arithmetic
 * that type takes (f32 FMA, bf16 dot, int8 dot: bench/peak.c), all its
 * operations at that rate, and of the roofs of its arithmetic (the step's
 * ideal time over its measured one, the linear products at their type's
 * roof, attention's scores and values at bf16 dot where its tiles round to
 * bf16, with BF16 and Q8_0 weights, else f32 FMA), both measured right
 * after it.
 * usage: bench_vevo2_fm FM_DIR [Tt 500] [F 500] [STEPS 3] [WEIGHTS stored] */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "audioc.h"
#include "base/arena.h"
#include "models/vevo2/fm.h"
#include "peak.h"

typedef struct {
    double last, best;
} step_clock;

static int on_step(void *user, int step, int steps)
{
    step_clock *c = user;
    double now = ac_now();
    /* the first step also faults the weights in from the file */
    if (step > 1 && now - c->last < c->best) c->best = now - c->last;
    if (steps == 1) c->best = now - c->last;
    c->last = now;
    return 0;
}

/* The linear products of one estimator pass: {N, K, count} (cond_mlp is
 * computed once per sampling, not per step). */
static void pass_shapes(int Dm, int mel, int layers, int shapes[][3], int *n)
{
    int W = 4 * Dm;
    int s[][3] = {{W, mel, 1}, {Dm, W, 1}, {Dm, Dm, 4 * layers}, {W, Dm, 2 * layers}, {Dm, W, layers},
                  {W, Dm, 1}, {mel, W, 1}};
    *n = (int)(sizeof s / sizeof *s);
    for (int i = 0; i < *n; i++)
        for (int j = 0; j < 3; j++) shapes[i][j] = s[i][j];
}

static double pass_flops(const vevo2_fm_config *c, double L)
{
    int shapes[8][3] = {{0}}, n;
    pass_shapes(c->hidden, c->mel_dim, c->layers, shapes, &n);
    double f = 0;
    for (int i = 0; i < n; i++) f += 2.0 * L * shapes[i][0] * shapes[i][1] * shapes[i][2];
    return f + c->layers * 4.0 * L * L * c->hidden; /* scores and weighted values */
}

/* Seconds OpenBLAS sgemm takes for the linear products of a step. */
static double blas_step(const vevo2_fm_config *c, int rows[2], int threads)
{
    int shapes[8][3] = {{0}}, n;
    pass_shapes(c->hidden, c->mel_dim, c->layers, shapes, &n);
    size_t big = (size_t)4 * c->hidden * c->hidden, R = (size_t)rows[0];
    float *x = calloc(R * 4 * c->hidden, sizeof *x), *w = calloc(big, sizeof *w), *y = calloc(R * 4 * c->hidden, 4);
    for (size_t i = 0; i < big; i++) w[i] = (float)((i * 7 % 61) - 30) / 300.0f;
    for (size_t i = 0; i < R * 4 * c->hidden; i++) x[i] = (float)((i * 13 % 71) - 35) / 100.0f;
    openblas_set_num_threads(threads);
    double total = 0;
    for (int p = 0; p < 2; p++)
        for (int i = 0; i < n; i++) {
            int N = shapes[i][0], K = shapes[i][1];
            double best = 1e30;
            for (int r = 0; r < 3; r++) {
                double t = ac_now();
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows[p], N, K, 1.0f, x, K, w, K, 0.0f, y, N);
                if (ac_now() - t < best) best = ac_now() - t;
            }
            total += best * shapes[i][2];
        }
    openblas_set_num_threads(1);
    free(x), free(w), free(y);
    return total;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_vevo2_fm FM_DIR [Tt] [F] [STEPS] [WEIGHTS]\n");
        return 2;
    }
    int Tt = argc > 2 ? atoi(argv[2]) : 500, F = argc > 3 ? atoi(argv[3]) : 500;
    int steps = argc > 4 ? atoi(argv[4]) : 3;
    ac_weight_type type = AC_WEIGHTS_STORED;
    if (argc > 5 && ac_weight_type_parse(argv[5], &type) != AC_OK) goto fail;
    char p[4200];
    vevo2_fm_config cfg;
    vevo2_fm *m;
    snprintf(p, sizeof p, "%s/config.json", argv[1]);
    if (vevo2_fm_config_load(p, &cfg) != AC_OK) goto fail;
    snprintf(p, sizeof p, "%s/model.safetensors", argv[1]);
    ac_weights *w;
    if (ac_weights_open_as(p, type, &w) != AC_OK || vevo2_fm_load_from(w, &cfg, &m) != AC_OK) goto fail;
    int L = Tt + F, N = (L + 3) / 4;
    L = 4 * N, F = L - Tt;
    int *ids = malloc((size_t)N * sizeof *ids);
    for (int i = 0; i < N; i++) ids[i] = (int)((i * 7919u + 13u) % (unsigned)cfg.cond_codebook);
    float *cond = malloc((size_t)L * cfg.hidden * sizeof *cond);
    float *prompt = calloc((size_t)Tt * cfg.mel_dim, sizeof *prompt), *mel = malloc((size_t)F * cfg.mel_dim * 4);
    ac_arena a;
    ac_arena_init(&a, 1 << 20);
    if (vevo2_fm_cond(m, ids, N, cond, &a) != AC_OK) goto fail;
    double flops = pass_flops(&cfg, L) + pass_flops(&cfg, F);
    int rows[2] = {L, F};
    /* the arithmetic of the step's products at this kernel level (as stored the package is F16 or F32):
     * the linear ones at their weights' type, attention's at that of its tiles (fm_estimator.c) */
    ac_dtype wt = m->layer[0].wq.dtype;
    peak_kind kind = peak_of_weights(wt);
    double attn = cfg.layers * 4.0 * ((double)L * L + (double)F * F) * cfg.hidden, by_kind[PEAK_KINDS] = {0};
    by_kind[kind] += flops - attn;
    by_kind[peak_of_attention(wt == AC_DTYPE_Q8_0 || wt == AC_DTYPE_BF16)] += attn;
    printf("| weights | Tt | F | threads | s/step | GFLOP/s | roof G/s (%s) | of roof | ideal s at its roofs "
           "| of its roofs | OpenBLAS sgemm GFLOP/s (f32, linear products) | ratio |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|\n", peak_name(kind));
    for (int th = 1; th <= 2; th++) {
        ac_set_threads(th);
        step_clock c = {ac_now(), 1e30};
        vevo2_fm_options o = vevo2_fm_defaults();
        o.steps = steps, o.progress = on_step, o.progress_user = &c;
        ac_arena_reset(&a);
        if (vevo2_fm_sample(m, cond, L, prompt, Tt, &o, mel, &a) != AC_OK) goto fail;
        double blas = blas_step(&cfg, rows, th);
        double lin = flops - attn, roof = peak_gops(kind, th), ideal = peak_seconds(by_kind, th);
        printf("| %s | %d | %d | %d | %.2f | %.1f | %.1f | %.2f | %.2f | %.2f | %.1f | %.2f |\n",
               ac_weight_type_name(type), Tt, F, th, c.best, flops / c.best / 1e9, roof, flops / c.best / 1e9 / roof,
               ideal, ideal / c.best, lin / blas / 1e9, (flops / c.best) / (lin / blas));
        fflush(stdout);
    }
    ac_arena_free(&a);
    free(ids), free(cond), free(prompt), free(mel);
    vevo2_fm_free(m);
    return 0;
fail:
    fprintf(stderr, "%s\n", ac_last_error());
    return 1;
}
