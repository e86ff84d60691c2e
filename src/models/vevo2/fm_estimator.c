/* The DiffLlama estimator (spec vevo2.md §4.9): every product runs on all
 * frames at once through ac_matmul; the adaptive RMSNorm is ac_rmsnorm
 * with one scale vector shared by every frame. */
#include <math.h>

#include "base/error.h"
#include "models/vevo2/fm_pass.h"
#include "nn/attention.h"
#include "nn/ffn.h"
#include "tensor/kernels.h"

#define RMS_EPS 1e-6f
#define ROPE_THETA 10000.0f

static ac_ffn plain(const vevo2_fm_mlp *p)
{
    return (ac_ffn){.up = &p->w0, .down = &p->w2, .b_up = p->b0, .b_down = p->b2, .act = AC_ACT_SILU};
}

static ac_ffn gated(const vevo2_fm_layer *L)
{
    return (ac_ffn){.up = &L->up, .gate = &L->gate, .down = &L->down, .act = AC_ACT_SILU};
}

/* With BF16 or Q8_0 layers the attention's products take bf16 operands: measured
 * to keep the held accuracy (docs/models/vevo2_fm.md) */
static ac_attn_opts attn_opts(const vevo2_fm *m)
{
    const vevo2_fm_config *c = &m->cfg;
    ac_dtype t = m->layer[0].wq.dtype;
    return (ac_attn_opts){.heads = c->heads, .kv_heads = c->heads, .head_dim = c->hidden / c->heads,
                          .rope_theta = ROPE_THETA, .tiles = 1, .bf16 = t == AC_DTYPE_Q8_0 || t == AC_DTYPE_BF16};
}

ac_status vevo2_fm_pass_new(const vevo2_fm *m, size_t rows, ac_arena *a, vevo2_fm_pass *p)
{
    const vevo2_fm_config *c = &m->cfg;
    size_t D = (size_t)c->hidden;
    ac_attn_opts o = attn_opts(m);
    ac_ffn g = gated(&m->layer[0]), f = plain(&m->mel_mlp);
    size_t work = ac_attn_layer_scratch(&o, rows, rows);
    if (ac_ffn_scratch(&g, rows) > work) work = ac_ffn_scratch(&g, rows);
    if (ac_ffn_scratch(&f, rows) > work) work = ac_ffn_scratch(&f, rows);
    *p = (vevo2_fm_pass){.rows = rows};
    p->h = ac_arena_floats(a, rows * D);
    p->n = ac_arena_floats(a, rows * D);
    p->y = ac_arena_floats(a, rows * D);
    p->work = ac_arena_floats(a, work);
    p->scales = ac_arena_floats(a, (2 * (size_t)c->layers + 1) * D);
    if (!p->h || !p->n || !p->y || !p->work || !p->scales) return AC_ERR_NOMEM;
    return AC_OK;
}

void vevo2_fm_pass_time(const vevo2_fm *m, vevo2_fm_pass *p, float t)
{
    const vevo2_fm_config *c = &m->cfg;
    size_t D = (size_t)c->hidden, half = D / 2;
    /* [sin(t f_i), cos(t f_i)], f_i = 10000^(-i/(half-1)), in f32 as torch */
    float *e = p->n, *tau = p->y, step = (float)(log(10000.0) / (double)(half - 1));
    for (size_t i = 0; i < half; i++) {
        float a = t * expf((float)i * -step);
        e[i] = sinf(a), e[half + i] = cosf(a);
    }
    ac_ffn f = plain(&m->step_mlp);
    ac_ffn_forward(&f, e, 1, tau, p->work);
    for (int l = 0; l < c->layers; l++) {
        const vevo2_fm_layer *L = &m->layer[l];
        ac_matmul(tau, &L->norm_in, L->norm_in_b, p->scales + 2 * (size_t)l * D, 1);
        ac_matmul(tau, &L->norm_post, L->norm_post_b, p->scales + (2 * (size_t)l + 1) * D, 1);
    }
    ac_matmul(tau, &m->norm, m->norm_b, p->scales + 2 * (size_t)c->layers * D, 1);
}

void vevo2_fm_pass_cond(const vevo2_fm *m, vevo2_fm_pass *p, const float *cond, size_t L, float *cp)
{
    ac_ffn f = plain(&m->cond_mlp);
    if (cond) {
        ac_ffn_forward(&f, cond, L, cp, p->work);
        return;
    }
    float *zero = p->n;
    for (size_t i = 0; i < (size_t)m->cfg.hidden; i++) zero[i] = 0;
    ac_ffn_forward(&f, zero, 1, cp, p->work);
}

void vevo2_fm_pass_run(const vevo2_fm *m, vevo2_fm_pass *p, const float *x, size_t L, const float *cp,
                       size_t cp_stride, float *out)
{
    const vevo2_fm_config *c = &m->cfg;
    size_t D = (size_t)c->hidden, n = L * D;
    ac_attn_opts o = attn_opts(m);
    ac_ffn f = plain(&m->mel_mlp);
    ac_ffn_forward(&f, x, L, p->h, p->work);
    for (size_t r = 0; r < L; r++) ac_axpy(p->h + r * D, cp + r * cp_stride, 1.0f, D);
    for (int l = 0; l < c->layers; l++) {
        const vevo2_fm_layer *ly = &m->layer[l];
        ac_rmsnorm(p->h, p->n, L, D, p->scales + 2 * (size_t)l * D, 0, RMS_EPS);
        ac_attn_weights w = {.wq = &ly->wq, .wk = &ly->wk, .wv = &ly->wv, .wo = &ly->wo};
        ac_attn_self(&o, &w, p->n, L, NULL, NULL, p->y, p->work);
        ac_axpy(p->h, p->y, 1.0f, n);
        ac_rmsnorm(p->h, p->n, L, D, p->scales + (2 * (size_t)l + 1) * D, 0, RMS_EPS);
        ac_ffn g = gated(ly);
        ac_ffn_forward(&g, p->n, L, p->y, p->work);
        ac_axpy(p->h, p->y, 1.0f, n);
    }
    ac_rmsnorm(p->h, p->n, L, D, p->scales + 2 * (size_t)c->layers * D, 0, RMS_EPS);
    f = plain(&m->out_mlp);
    ac_ffn_forward(&f, p->n, L, out, p->work);
}

ac_status vevo2_fm_estimate(const vevo2_fm *m, const float *x, int L, float t, const float *cond, float *out,
                            ac_arena *a)
{
    if (L < 1) return ac_error(AC_ERR_ARG, "vevo2 fm: an estimator pass over %d frames", L);
    size_t D = (size_t)m->cfg.hidden;
    vevo2_fm_pass p;
    AC_TRY(vevo2_fm_pass_new(m, (size_t)L, a, &p));
    float *cp = ac_arena_floats(a, (cond ? (size_t)L : 1) * D);
    if (!cp) return AC_ERR_NOMEM;
    vevo2_fm_pass_cond(m, &p, cond, (size_t)L, cp);
    vevo2_fm_pass_time(m, &p, t);
    vevo2_fm_pass_run(m, &p, x, (size_t)L, cp, cond ? D : 0, out);
    return AC_OK;
}
