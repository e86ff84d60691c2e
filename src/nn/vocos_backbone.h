/* The Vocos backbone (Amphion's VocosBackbone without adaptive norm), over
 * a sequence [T][in_channels]: embed Conv1d(k7, p3) -> LayerNorm -> N
 * ConvNeXt blocks -> final LayerNorm, giving [T][dim]. The vocoder of Vevo2
 * and the encoders of its Coco tokenizers are built on it. */
#ifndef AC_NN_VOCOS_BACKBONE_H
#define AC_NN_VOCOS_BACKBONE_H

#include <stddef.h>

#include "io/weights.h"
#include "nn/convnext.h"
#include "tensor/kernels.h"

typedef struct ac_vocos_backbone {
    int in_channels, dim, intermediate, layers;
    ac_conv1d_shape embed;
    ac_mat embed_w;                     /* [dim][in_channels*7] in the stored type (ac_conv1d_mat) */
    const float *embed_b;               /* [dim] */
    const float *norm_w, *norm_b;       /* [dim] */
    const float *final_w, *final_b;     /* [dim] */
    ac_convnext *block;                 /* [layers] */
    ac_mat *pw;                         /* [layers][2]: pwconv1, pwconv2 in their stored type */
} ac_vocos_backbone;

/* The tensors PREFIX{embed, norm, convnext.{i}.*, final_layer_norm}.* of W
 * (PREFIX "backbone." in the vocoder, "encoder.0." in a Coco file), each
 * checked against the shape the sizes imply. Weights stay owned by W. */
ac_status ac_vocos_backbone_load(ac_weights *w, const char *prefix, int in_channels, int dim, int intermediate,
                                 int layers, ac_vocos_backbone *out);
void ac_vocos_backbone_free(ac_vocos_backbone *b);

/* Floats of scratch for T frames. */
size_t ac_vocos_backbone_scratch(const ac_vocos_backbone *b, size_t T);
/* X[T][in_channels] -> Y[T][dim]. */
void ac_vocos_backbone_forward(const ac_vocos_backbone *b, const float *x, size_t T, float *y, float *scratch);

#endif
