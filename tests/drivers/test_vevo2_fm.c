/* Vevo2's flow-matching transformer against the PyTorch reference's dumps
 * (tests/ref/vevo2/fm_ref.py golden):
 *   test_vevo2_fm FM_DIR GOLDEN_DIR   parity and the sampler's own checks
 *   test_vevo2_fm --load FM_DIR       loads only: prints the error, exit 3 on failure
 * Parity, max |a-b| over max |b|: the upsampled condition (1e-5), the
 * estimator at a fixed (x, t, c) with the condition and with zeros (1e-4),
 * the whole sampler from the injected noise, 32 and 4 steps (1e-3). Then:
 * seeded sampling equal on 1 and 2 threads, the progress callback and its
 * cancel, and the refusals (steps 0, F <= 0, noise that is not finite). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "models/vevo2/fm.h"
#include "test_util.h"

static const char *golden_dir;

/* NAME of GOLDEN_DIR: exactly N values of 4 bytes, or NULL. */
static void *read_golden(const char *name, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", golden_dir, name);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL, "%s: cannot open", path);
    if (!f) return NULL;
    void *buf = malloc(n * 4 + 1);
    size_t got = fread(buf, 4, n + 1, f);
    fclose(f);
    CHECK(got == n, "%s: %zu values, expected %zu", path, got, n);
    if (got != n) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* max |a-b| / max |b| */
static double rel_diff(const float *a, const float *b, size_t n)
{
    double d = 0, m = 1e-12;
    for (size_t i = 0; i < n; i++) d = fmax(d, fabs((double)a[i] - b[i])), m = fmax(m, fabs((double)b[i]));
    return d / m;
}

static void compare(const char *what, const float *got, const char *golden, size_t n, double tol)
{
    float *want = read_golden(golden, n);
    if (!want) return;
    double d = rel_diff(got, want, n);
    CHECK(d <= tol, "%s: relative difference %.3g > %g", what, d, tol);
    fprintf(stderr, "  %-26s max relative difference %.2e (tolerance %g)\n", what, d, tol);
    free(want);
}

typedef struct {
    int calls, last, cancel_at;
} progress_log;

static int on_step(void *user, int step, int steps)
{
    progress_log *p = user;
    p->calls++;
    p->last = step * 1000 + steps;
    return p->cancel_at && step == p->cancel_at;
}

static int load(const char *dir, vevo2_fm **m)
{
    char p[4200];
    vevo2_fm_config cfg;
    snprintf(p, sizeof p, "%s/config.json", dir);
    if (vevo2_fm_config_load(p, &cfg) != AC_OK) return 0;
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    return vevo2_fm_load(p, &cfg, test_weight_type(), m) == AC_OK;
}

/* The refusals of the sampler and of the noise reader. */
static void bad_calls(const vevo2_fm *m, const float *cond, int L, const float *prompt, int Tt, ac_arena *a)
{
    int F = L - Tt, C = m->cfg.mel_dim;
    float *mel = calloc((size_t)F * (size_t)C, sizeof *mel);
    vevo2_fm_options o = vevo2_fm_defaults();
    o.steps = 0;
    CHECK(vevo2_fm_sample(m, cond, L, prompt, Tt, &o, mel, a) == AC_ERR_ARG && error_has("0 sampling steps"),
          "steps 0: %s", ac_last_error());
    o = vevo2_fm_defaults();
    CHECK(vevo2_fm_sample(m, cond, Tt, prompt, Tt, &o, mel, a) == AC_ERR_ARG &&
              error_has("leave 0 frames to generate"), "F = 0: %s", ac_last_error());
    CHECK(vevo2_fm_sample(m, cond, Tt - 3, prompt, Tt, &o, mel, a) == AC_ERR_ARG && error_has("leave -3 frames"),
          "F < 0: %s", ac_last_error());
    float *nan_noise = calloc((size_t)F * C, sizeof *nan_noise);
    nan_noise[7] = NAN;
    o.noise = nan_noise;
    CHECK(vevo2_fm_sample(m, cond, L, prompt, Tt, &o, mel, a) == AC_ERR_ARG && error_has("value 7 is not finite"),
          "non-finite noise: %s", ac_last_error());
    o.noise = NULL;
    free(nan_noise);
    int bad_id = m->cfg.cond_codebook;
    CHECK(vevo2_fm_cond(m, &bad_id, 1, mel, a) == AC_ERR_ARG && error_has("outside the codebook"), "bad id: %s",
          ac_last_error());
    free(mel);
}

/* Seeded noise: the same mel on 1 and 2 threads; the progress callback
 * sees every step and can stop the run. */
static void seeded(const vevo2_fm *m, const float *cond, int L, const float *prompt, int Tt, ac_arena *a)
{
    size_t n = (size_t)(L - Tt) * (size_t)m->cfg.mel_dim;
    float *one = malloc(n * sizeof *one), *two = malloc(n * sizeof *two);
    vevo2_fm_options o = vevo2_fm_defaults();
    o.steps = 4, o.seed = 1234;
    progress_log log = {0};
    o.progress = on_step, o.progress_user = &log;
    ac_set_threads(1);
    CHECK(vevo2_fm_sample(m, cond, L, prompt, Tt, &o, one, a) == AC_OK, "1 thread: %s", ac_last_error());
    ac_set_threads(2);
    CHECK(vevo2_fm_sample(m, cond, L, prompt, Tt, &o, two, a) == AC_OK, "2 threads: %s", ac_last_error());
    CHECK(memcmp(one, two, n * sizeof *one) == 0, "seeded sampling differs on 1 and 2 threads (%.3g)",
          rel_diff(one, two, n));
    CHECK(log.calls == 8 && log.last == 4004, "progress: %d calls, last %d", log.calls, log.last);
    log = (progress_log){.cancel_at = 2};
    CHECK(vevo2_fm_sample(m, cond, L, prompt, Tt, &o, two, a) == AC_ERR_CANCELLED && log.calls == 2 &&
              error_has("cancelled after step 2 of 4"), "cancel: %d calls, %s", log.calls, ac_last_error());
    fprintf(stderr, "  seeded noise               1 and 2 threads bit-identical: %s\n",
            memcmp(one, two, n * sizeof *one) == 0 ? "yes" : "no");
    free(one), free(two);
}

static void parity(const char *dir)
{
    vevo2_fm *m = NULL;
    CHECK(load(dir, &m), "%s: %s", dir, ac_last_error());
    if (!m) return;
    int N = 0, Tt = 0, F = 0, steps[2] = {0, 0};
    float t = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/params.txt", golden_dir);
    FILE *f = fopen(path, "r");
    CHECK(f && fscanf(f, "%d %d %d %f %d %d", &N, &Tt, &F, &t, &steps[0], &steps[1]) == 6, "%s: unreadable", path);
    if (f) fclose(f);
    size_t D = (size_t)m->cfg.hidden, C = (size_t)m->cfg.mel_dim, L = 4 * (size_t)N;
    int *ids = read_golden("ids.i32", (size_t)N);
    float *x = read_golden("x.f32", L * C), *prompt = read_golden("prompt.f32", (size_t)Tt * C);
    float *noise = read_golden("noise.f32", (size_t)F * C);
    float *cond = malloc(L * D * sizeof *cond), *v = malloc(L * C * sizeof *v), *mel = malloc(L * C * sizeof *mel);
    ac_arena a;
    ac_arena_init(&a, 1 << 20);
    if (ids && x && prompt && noise && F == (int)L - Tt) {
        CHECK(vevo2_fm_cond(m, ids, N, cond, &a) == AC_OK, "cond: %s", ac_last_error());
        compare("condition", cond, "cond.f32", L * D, 1e-5);
        ac_arena_reset(&a);
        CHECK(vevo2_fm_estimate(m, x, (int)L, t, cond, v, &a) == AC_OK, "estimate: %s", ac_last_error());
        compare("estimator", v, "v_cond.f32", L * C, 1e-4);
        ac_arena_reset(&a);
        CHECK(vevo2_fm_estimate(m, x, (int)L, t, NULL, v, &a) == AC_OK, "estimate: %s", ac_last_error());
        compare("estimator, zero condition", v, "v_zero.f32", L * C, 1e-4);
        for (int i = 0; i < 2; i++) {
            ac_arena_reset(&a);
            vevo2_fm_options o = vevo2_fm_defaults();
            o.steps = steps[i], o.noise = noise;
            char what[64], name[64];
            snprintf(what, sizeof what, "sampler, %d steps", steps[i]);
            snprintf(name, sizeof name, "mel_%d.f32", steps[i]);
            CHECK(vevo2_fm_sample(m, cond, (int)L, prompt, Tt, &o, mel, &a) == AC_OK, "%s: %s", what, ac_last_error());
            compare(what, mel, name, (size_t)F * C, 1e-3);
        }
        ac_arena_reset(&a);
        seeded(m, cond, (int)L, prompt, Tt, &a);
        ac_arena_reset(&a);
        bad_calls(m, cond, (int)L, prompt, Tt, &a);
    }
    ac_arena_free(&a);
    free(ids), free(x), free(prompt), free(noise), free(cond), free(v), free(mel);
    vevo2_fm_free(m);
}

int main(int argc, char **argv)
{
    test_init(0, argv);
    if (argc == 3 && strcmp(argv[1], "--load") == 0) {
        vevo2_fm *m = NULL;
        if (!load(argv[2], &m)) {
            printf("%s\n", ac_last_error());
            return 3;
        }
        printf("ok: hidden %d layers %d heads %d mel %d codebook %d text_condition %d\n", m->cfg.hidden,
               m->cfg.layers, m->cfg.heads, m->cfg.mel_dim, m->cfg.cond_codebook, m->cfg.text_condition);
        vevo2_fm_free(m);
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: test_vevo2_fm FM_DIR GOLDEN_DIR | --load FM_DIR\n");
        return 2;
    }
    golden_dir = argv[2];
    char *args[] = {argv[0], (char *)golden_dir, NULL};
    test_init(2, args);
    parity(argv[1]);
    return test_finish();
}
