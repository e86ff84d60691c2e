#include "nn/vq.h"

#include <math.h>
#include <stdio.h>

#include "base/error.h"

void ac_l2_normalize(float *x, size_t n)
{
    double ss = 0;
    for (size_t i = 0; i < n; i++) ss += (double)x[i] * x[i];
    float norm = (float)sqrt(ss);
    float inv = 1.0f / (norm > 1e-12f ? norm : 1e-12f);
    for (size_t i = 0; i < n; i++) x[i] *= inv;
}

void ac_cosine_vq_search(const float *codebook, int size, int dim, const float *z, size_t T, int32_t *ids,
                         float *gap)
{
    for (size_t t = 0; t < T; t++) {
        const float *zt = z + t * (size_t)dim;
        float best = -INFINITY, second = -INFINITY;
        int32_t arg = 0;
        for (int k = 0; k < size; k++) {
            const float *c = codebook + (size_t)k * dim;
            float s = 0;
            for (int i = 0; i < dim; i++) s += zt[i] * c[i];
            if (s > best) second = best, best = s, arg = k;
            else if (s > second) second = s;
        }
        ids[t] = arg;
        if (gap) gap[t] = size > 1 ? best - second : INFINITY;
    }
}

ac_status ac_fvq_load(ac_weights *w, const char *prefix, int in_dim, int dim, int size, ac_fvq *out)
{
    float *W, *cb;
    *out = (ac_fvq){.in_dim = in_dim, .dim = dim, .size = size};
    AC_TRY(ac_weights_weight_norm(w, AC_SHAPE(dim, in_dim, 1), &W, "%s.in_project", prefix));
    out->in_w = ac_mat_f32(W, (size_t)dim, (size_t)in_dim);
    AC_TRY(ac_weights_vec(w, dim, &out->in_b, "%s.in_project.bias", prefix));
    AC_TRY(ac_weights_f32_copy(w, AC_SHAPE(size, dim), &cb, "%s.codebook.weight", prefix));
    for (int k = 0; k < size; k++) ac_l2_normalize(cb + (size_t)k * dim, (size_t)dim);
    out->codebook = cb;
    return AC_OK;
}

void ac_fvq_encode(const ac_fvq *q, const float *x, size_t T, float *latent, int32_t *ids, float *gap)
{
    ac_matmul(x, &q->in_w, q->in_b, latent, T);
    for (size_t t = 0; t < T; t++) ac_l2_normalize(latent + t * (size_t)q->dim, (size_t)q->dim);
    ac_cosine_vq_search(q->codebook, q->size, q->dim, latent, T, ids, gap);
}
