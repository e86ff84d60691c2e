#include "nn/convnext.h"

#include "tensor/kernels.h"

size_t ac_convnext_scratch(const ac_convnext *b, size_t T) { return T * (2 * (size_t)b->dim + b->pw1->rows); }

void ac_convnext_forward(const ac_convnext *b, float *x, size_t T, float *scratch)
{
    size_t C = (size_t)b->dim, n = T * C;
    float *h = scratch, *y = h + n, *mid = y + n;
    ac_conv1d_shape dw = {.cin = b->dim, .cout = b->dim, .kernel = b->kernel,
                          .stride = 1, .pad = b->kernel / 2, .dilation = 1};
    ac_conv1d_depthwise(&dw, x, 1, T, b->dw_w, b->dw_b, h);
    ac_layernorm(h, h, T, C, b->ln_w, b->ln_b, b->ln_eps);
    ac_matmul(h, b->pw1, b->pw1_b, mid, T);
    ac_gelu(mid, T * b->pw1->rows);
    ac_matmul(mid, b->pw2, b->pw2_b, y, T);
    if (b->gamma)
        for (size_t t = 0; t < T; t++) ac_mul(y + t * C, b->gamma, C);
    ac_axpy(x, y, 1.0f, n);
}
