#include "nn/vocos_backbone.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"

#define LN_EPS 1e-6f
#define EMBED_KERNEL 7

static ac_status load_block(ac_weights *w, const char *prefix, ac_vocos_backbone *b, int i)
{
    const float *dw;
    int D = b->dim, I = b->intermediate;
    ac_convnext *c = &b->block[i];
    AC_TRY(ac_weights_f32(w, AC_SHAPE(D, 1, EMBED_KERNEL), &dw, "%sconvnext.%d.dwconv.weight", prefix, i));
    float *dw_w = ac_weights_scratch(w, (size_t)D * EMBED_KERNEL);
    if (!dw_w) return AC_ERR_NOMEM;
    ac_depthwise_weight_from_torch(dw, dw_w, D, EMBED_KERNEL);
    ac_weights_done(w, dw, (size_t)D * EMBED_KERNEL);
    *c = (ac_convnext){.dim = D, .kernel = EMBED_KERNEL, .dw_w = dw_w, .ln_eps = LN_EPS,
                       .pw1 = &b->pw[2 * i], .pw2 = &b->pw[2 * i + 1]};
    AC_TRY(ac_weights_vec(w, D, &c->dw_b, "%sconvnext.%d.dwconv.bias", prefix, i));
    AC_TRY(ac_weights_norm(w, D, &c->ln_w, &c->ln_b, "%sconvnext.%d.norm", prefix, i));
    AC_TRY(ac_weights_linear(w, I, D, &b->pw[2 * i], &c->pw1_b, "%sconvnext.%d.pwconv1", prefix, i));
    AC_TRY(ac_weights_linear(w, D, I, &b->pw[2 * i + 1], &c->pw2_b, "%sconvnext.%d.pwconv2", prefix, i));
    return ac_weights_vec(w, D, &c->gamma, "%sconvnext.%d.gamma", prefix, i);
}

ac_status ac_vocos_backbone_load(ac_weights *w, const char *prefix, int in_channels, int dim, int intermediate,
                                 int layers, ac_vocos_backbone *out)
{
    *out = (ac_vocos_backbone){0};
    if (in_channels < 1 || dim < 1 || intermediate < 1 || layers < 0)
        return ac_error(AC_ERR_ARG, "%s: Vocos backbone sizes %d/%d/%d/%d are not valid", w->file, in_channels, dim,
                        intermediate, layers);
    ac_vocos_backbone *b = out;
    *b = (ac_vocos_backbone){.in_channels = in_channels, .dim = dim, .intermediate = intermediate, .layers = layers,
                             .embed = {.cin = in_channels, .cout = dim, .kernel = EMBED_KERNEL,
                                       .stride = 1, .pad = EMBED_KERNEL / 2, .dilation = 1}};
    int keep = ac_weights_keep(w, AC_KEEP_STORED); /* the input convolution keeps its precision */
    ac_status es = ac_weights_mat(w, AC_SHAPE(dim, in_channels, EMBED_KERNEL), &b->embed_w, "%sembed.weight", prefix);
    ac_weights_keep(w, keep);
    AC_TRY(es);
    AC_TRY(ac_weights_vec(w, dim, &b->embed_b, "%sembed.bias", prefix));
    AC_TRY(ac_weights_norm(w, dim, &b->norm_w, &b->norm_b, "%snorm", prefix));
    b->block = ac_calloc((size_t)(layers ? layers : 1), sizeof *b->block);
    b->pw = ac_calloc((size_t)(layers ? layers : 1) * 2, sizeof *b->pw);
    if (!b->block || !b->pw) {
        ac_vocos_backbone_free(b);
        return AC_ERR_NOMEM;
    }
    ac_status s = AC_OK;
    for (int i = 0; !s && i < layers; i++) s = load_block(w, prefix, b, i);
    if (!s) s = ac_weights_norm(w, dim, &b->final_w, &b->final_b, "%sfinal_layer_norm", prefix);
    if (s) ac_vocos_backbone_free(b);
    return s;
}

void ac_vocos_backbone_free(ac_vocos_backbone *b)
{
    free(b->block);
    free(b->pw);
    b->block = NULL;
    b->pw = NULL;
}

size_t ac_vocos_backbone_scratch(const ac_vocos_backbone *b, size_t T)
{
    size_t embed = ac_conv1d_scratch(&b->embed, 1, T);
    size_t block = b->layers ? ac_convnext_scratch(&b->block[0], T) : 0;
    return embed > block ? embed : block;
}

void ac_vocos_backbone_forward(const ac_vocos_backbone *b, const float *x, size_t T, float *y, float *scratch)
{
    size_t D = (size_t)b->dim;
    ac_conv1d_mat(&b->embed, x, 1, T, &b->embed_w, b->embed_b, y, scratch);
    ac_layernorm(y, y, T, D, b->norm_w, b->norm_b, LN_EPS);
    for (int i = 0; i < b->layers; i++) ac_convnext_forward(&b->block[i], y, T, scratch);
    ac_layernorm(y, y, T, D, b->final_w, b->final_b, LN_EPS);
}
