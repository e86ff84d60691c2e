/* The ConvNeXt block of Vocos and of the Coco tokenizers, over a sequence
 * x[T][dim] in place: x += gamma * pw2(GELU(pw1(LN(dwconv(x))))), the
 * depthwise conv with zero padding kernel/2 each side (k 7, pad 3). */
#ifndef AC_NN_CONVNEXT_H
#define AC_NN_CONVNEXT_H

#include <stddef.h>

#include "tensor/mat.h"

typedef struct ac_convnext {
    int dim, kernel;
    const float *dw_w, *dw_b;     /* [kernel][dim] (ac_depthwise_weight_from_torch), [dim] */
    const float *ln_w, *ln_b;     /* [dim] */
    float ln_eps;
    const ac_mat *pw1, *pw2;      /* [inner][dim], [dim][inner] */
    const float *pw1_b, *pw2_b;
    const float *gamma;           /* layer scale [dim]; NULL: none */
} ac_convnext;

/* Floats of scratch for T frames. */
size_t ac_convnext_scratch(const ac_convnext *b, size_t T);
void ac_convnext_forward(const ac_convnext *b, float *x, size_t T, float *scratch);

#endif
