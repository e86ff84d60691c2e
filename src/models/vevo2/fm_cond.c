/* The 50 Hz condition of spec vevo2.md §4.9: cond_emb rows of the ids,
 * then twice GELU(ConvTranspose1d(k4, s2, p1)), each doubling the frames. */

#include "base/error.h"
#include "models/vevo2/fm.h"
#include "tensor/kernels.h"

ac_status vevo2_fm_cond(const vevo2_fm *m, const int *ids, int n, float *cond, ac_arena *a)
{
    const vevo2_fm_config *c = &m->cfg;
    if (n < 1) return ac_error(AC_ERR_ARG, "vevo2 fm: %d condition ids (at least 1 is needed)", n);
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= c->cond_codebook)
            return ac_error(AC_ERR_ARG, "vevo2 fm: condition id %d (at %d) is outside the codebook of %d", ids[i], i,
                            c->cond_codebook);
    size_t D = (size_t)c->hidden, N = (size_t)n;
    ac_convt1d_shape s = {.cin = c->hidden, .cout = c->hidden, .kernel = 4,
                          .stride = 2, .pad = 1, .out_pad = 0, .dilation = 1};
    float *e = ac_arena_floats(a, N * D), *mid = ac_arena_floats(a, 2 * N * D);
    float *z = ac_arena_floats(a, ac_conv_transpose1d_scratch(&s, 1, 2 * N));
    if (!e || !mid || !z) return AC_ERR_NOMEM;
    for (size_t i = 0; i < N; i++) ac_mat_rows(&m->cond_emb, (size_t)ids[i], (size_t)ids[i] + 1, e + i * D);
    ac_conv_transpose1d(&s, e, 1, N, m->up_w[0], m->up_b[0], mid, z);
    ac_gelu(mid, 2 * N * D);
    ac_conv_transpose1d(&s, mid, 1, 2 * N, m->up_w[1], m->up_b[1], cond, z);
    ac_gelu(cond, 4 * N * D);
    return AC_OK;
}
