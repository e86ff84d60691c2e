#include "nn/ffn.h"

#include "tensor/kernels.h"

void ac_act_apply(ac_act act, float *x, size_t n)
{
    switch (act) {
    case AC_ACT_RELU: ac_relu(x, n); break;
    case AC_ACT_SILU: ac_silu(x, n); break;
    case AC_ACT_GELU: ac_gelu(x, n); break;
    }
}

size_t ac_ffn_scratch(const ac_ffn *f, size_t rows) { return (f->gate ? 2 : 1) * rows * f->up->rows; }

void ac_ffn_forward(const ac_ffn *f, const float *x, size_t rows, float *y, float *scratch)
{
    size_t n = rows * f->up->rows;
    float *h = scratch;
    if (f->gate) {
        float *u = scratch + n;
        const ac_mat *mats[2] = {f->gate, f->up};
        const float *bias[2] = {f->b_gate, f->b_up};
        float *outs[2] = {h, u};
        ac_matmul_multi(x, rows, mats, bias, outs, 2);
        if (f->act == AC_ACT_SILU) {
            ac_silu_mul(h, u, n); /* one pass over h */
        } else {
            ac_act_apply(f->act, h, n);
            ac_mul(h, u, n);
        }
    } else {
        ac_matmul(x, f->up, f->b_up, h, rows);
        ac_act_apply(f->act, h, n);
    }
    ac_matmul(h, f->down, f->b_down, y, rows);
}
