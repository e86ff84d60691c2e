/* One estimator pass of the flow-matching transformer over L frames,
 * split so that the sampler computes what does not change only once: the
 * condition's cond_mlp (fixed for a whole sampling) and the adaptive
 * norms' scales (fixed for a step, shared by both guidance passes). */
#ifndef AC_MODELS_VEVO2_FM_PASS_H
#define AC_MODELS_VEVO2_FM_PASS_H

#include "models/vevo2/fm.h"

typedef struct vevo2_fm_pass {
    size_t rows;                 /* the most rows a pass may have */
    float *h, *n, *y, *work;     /* [rows][hidden] x3 and the blocks' scratch */
    float *scales;               /* [2*layers+1][hidden]: per layer in, post; then the final norm */
} vevo2_fm_pass;

ac_status vevo2_fm_pass_new(const vevo2_fm *m, size_t rows, ac_arena *a, vevo2_fm_pass *p);
/* The scales of every adaptive norm at time T: to_weight(diff_step_mlp(sinusoid(T))). */
void vevo2_fm_pass_time(const vevo2_fm *m, vevo2_fm_pass *p, float t);
/* CP[L][hidden] = cond_mlp(COND[L][hidden]); COND NULL: the one row
 * cond_mlp(0) (its biases), which stands for every row. */
void vevo2_fm_pass_cond(const vevo2_fm *m, vevo2_fm_pass *p, const float *cond, size_t L, float *cp);
/* OUT[L][mel_dim] = the velocity of X[L][mel_dim] given CP (row r at
 * CP + r*CP_STRIDE; 0 repeats one row) and the scales of the last
 * vevo2_fm_pass_time. L <= p->rows. */
void vevo2_fm_pass_run(const vevo2_fm *m, vevo2_fm_pass *p, const float *x, size_t L, const float *cp,
                       size_t cp_stride, float *out);

#endif
