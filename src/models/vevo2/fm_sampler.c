/* Amphion's reverse_diffusion (spec vevo2.md §4.9): Euler steps at the
 * midpoints t = (i + 1/2)/N; each step runs the estimator on the prompt
 * followed by x under the condition, and on x alone under a zero
 * condition, then guides with CFG rescaled to the conditional velocity's
 * spread. */
#include <math.h>
#include <string.h>

#include "base/error.h"
#include "base/rng.h"
#include "models/vevo2/fm_pass.h"
#include "tensor/kernels.h"

vevo2_fm_options vevo2_fm_defaults(void)
{
    return (vevo2_fm_options){.steps = 32, .cfg = 1.0f, .rescale = 0.75f};
}

void vevo2_fm_noise_seeded(uint64_t seed, size_t n, float *out)
{
    ac_rng r;
    ac_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) out[i] = (float)ac_rng_gaussian(&r);
}

/* Unbiased standard deviation, as torch.std, accumulated in double. */
static double stddev(const float *x, size_t n)
{
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++) sum += x[i];
    double mean = sum / (double)n;
    for (size_t i = 0; i < n; i++) sq += (x[i] - mean) * (x[i] - mean);
    return n > 1 ? sqrt(sq / (double)(n - 1)) : 0.0;
}

/* G = vc + cfg (vc - vu), rescaled: rescale * G std(vc)/std(G) + (1 - rescale) G. */
static void guide(float *g, const float *vc, const float *vu, size_t n, float cfg, float rescale)
{
    for (size_t i = 0; i < n; i++) g[i] = vc[i] + cfg * (vc[i] - vu[i]);
    double sg = stddev(g, n);
    float ratio = sg > 0 ? (float)(stddev(vc, n) / sg) : 1.0f;
    for (size_t i = 0; i < n; i++) g[i] = rescale * (g[i] * ratio) + (1 - rescale) * g[i];
}

static ac_status check(int Lc, const float *prompt, int Tt, const vevo2_fm_options *o)
{
    if (o->steps < 1) return ac_error(AC_ERR_ARG, "vevo2 fm: %d sampling steps (at least 1 is needed)", o->steps);
    if (Tt < 0 || (Tt > 0 && !prompt)) return ac_error(AC_ERR_ARG, "vevo2 fm: a prompt of %d frames", Tt);
    int F = vevo2_fm_frames(Lc, Tt);
    if (F <= 0)
        return ac_error(AC_ERR_ARG,
                        "vevo2 fm: %d condition frames leave %d frames to generate after the %d-frame prompt "
                        "(the condition must be longer than the prompt)",
                        Lc, F, Tt);
    if (!(o->cfg >= 0) || !(o->rescale >= 0 && o->rescale <= 1))
        return ac_error(AC_ERR_ARG, "vevo2 fm: guidance %g and rescale %g (cfg >= 0, rescale in [0, 1])", o->cfg,
                        o->rescale);
    return AC_OK;
}

ac_status vevo2_fm_sample(const vevo2_fm *m, const float *cond, int Lc, const float *prompt, int Tt,
                          const vevo2_fm_options *o, float *mel, ac_arena *a)
{
    AC_TRY(check(Lc, prompt, Tt, o));
    size_t D = (size_t)m->cfg.hidden, C = (size_t)m->cfg.mel_dim, F = (size_t)(Lc - Tt), P = (size_t)Tt;
    size_t n = F * C;
    vevo2_fm_pass p;
    AC_TRY(vevo2_fm_pass_new(m, (size_t)Lc, a, &p));
    float *cp = ac_arena_floats(a, (size_t)Lc * D), *cp0 = ac_arena_floats(a, D);
    float *xin = ac_arena_floats(a, (size_t)Lc * C), *vc = ac_arena_floats(a, (size_t)Lc * C);
    float *vu = ac_arena_floats(a, n);
    if (!cp || !cp0 || !xin || !vc || !vu) return AC_ERR_NOMEM;
    /* x lives in the tail of XIN, behind the prompt */
    float *x = xin + P * C;
    if (P) memcpy(xin, prompt, P * C * sizeof *xin);
    for (size_t i = 0; o->noise && i < n; i++)
        if (!isfinite(o->noise[i])) return ac_error(AC_ERR_ARG, "the injected noise: value %zu is not finite", i);
    if (o->noise) memcpy(x, o->noise, n * sizeof *x);
    else vevo2_fm_noise_seeded(o->seed, n, x);
    vevo2_fm_pass_cond(m, &p, cond, (size_t)Lc, cp);
    int guided = o->cfg > 0;
    if (guided) vevo2_fm_pass_cond(m, &p, NULL, F, cp0);
    double h = 1.0 / o->steps;
    for (int i = 0; i < o->steps; i++) {
        vevo2_fm_pass_time(m, &p, (float)((i + 0.5) * h));
        vevo2_fm_pass_run(m, &p, xin, (size_t)Lc, cp, D, vc);
        float *v = vc + P * C;
        if (guided) {
            vevo2_fm_pass_run(m, &p, x, F, cp0, 0, vu);
            guide(vu, v, vu, n, o->cfg, o->rescale);
            v = vu;
        }
        ac_axpy(x, v, (float)h, n);
        if (o->progress && o->progress(o->progress_user, i + 1, o->steps))
            return ac_error(AC_ERR_CANCELLED, "vevo2 fm: cancelled after step %d of %d", i + 1, o->steps);
    }
    memcpy(mel, x, n * sizeof *mel);
    return AC_OK;
}
