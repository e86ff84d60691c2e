/* The factorized vector quantizer of Amphion's codecs (FactorizedVectorQuantize
 * with l2-normalized codes), encoder side: a weight-normed 1x1 projection
 * to the code dimension, then the nearest code by cosine similarity. Only
 * what ids need: out_project and the decoder are not loaded. */
#ifndef AC_NN_VQ_H
#define AC_NN_VQ_H

#include <stddef.h>
#include <stdint.h>

#include "io/weights.h"
#include "tensor/mat.h"

/* x[n] /= max(||x||, 1e-12), as torch.nn.functional.normalize. */
void ac_l2_normalize(float *x, size_t n);

/* The code of each row of Z[T][dim] (rows already unit length) among the
 * unit rows of CODEBOOK[size][dim]: ids[t] = argmax_k z.c_k, the first on
 * ties. GAP (may be NULL) gets each frame's margin between the best and the
 * second-best similarity, so callers can tell near-ties. */
void ac_cosine_vq_search(const float *codebook, int size, int dim, const float *z, size_t T, int32_t *ids,
                         float *gap);

typedef struct ac_fvq {
    int in_dim, dim, size;
    ac_mat in_w;             /* resolved weight norm [dim][in_dim], f32 */
    const float *in_b;       /* [dim] */
    const float *codebook;   /* [size][dim], rows normalized at load */
} ac_fvq;

/* PREFIX.in_project.{weight_g [dim,1,1], weight_v [dim,in_dim,1], bias} and
 * PREFIX.codebook.weight [size,dim] (PREFIX e.g. "quantizer.quantizers.0").
 * Memory belongs to W. A zero row of weight_v is refused; a zero code stays
 * zero (it matches nothing better than 0), as in torch. */
ac_status ac_fvq_load(ac_weights *w, const char *prefix, int in_dim, int dim, int size, ac_fvq *out);

/* X[T][in_dim] -> LATENT[T][dim] (the normalized projection, what the codes
 * are compared with), IDS[T], GAP[T] (may be NULL). */
void ac_fvq_encode(const ac_fvq *q, const float *x, size_t T, float *latent, int32_t *ids, float *gap);

#endif
