/* Position-wise feed-forward: plain, down(act(up x)), or gated (SwiGLU
 * when the activation is SiLU), down(act(gate x) * up x). */
#ifndef AC_NN_FFN_H
#define AC_NN_FFN_H

#include <stddef.h>

#include "tensor/mat.h"

typedef enum { AC_ACT_RELU, AC_ACT_SILU, AC_ACT_GELU } ac_act;

/* x = act(x), in place. */
void ac_act_apply(ac_act act, float *x, size_t n);

typedef struct ac_ffn {
    const ac_mat *up, *gate, *down;    /* gate NULL: plain */
    const float *b_up, *b_gate, *b_down;
    ac_act act;
} ac_ffn;

/* Floats of scratch for ROWS rows. */
size_t ac_ffn_scratch(const ac_ffn *f, size_t rows);
/* Y[rows][down->rows] from X[rows][up->cols]; Y may not be X. */
void ac_ffn_forward(const ac_ffn *f, const float *x, size_t rows, float *y, float *scratch);

#endif
