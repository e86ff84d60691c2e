#include "tensor/mat.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/f16.h"
#include "base/threadpool.h"
#include "tensor/kernels.h"
#include "tensor/simd_avx2.h"

#define PANEL_ROWS 128   /* weight rows converted at a time for f32 products */
#define MANY_ROWS 8      /* from this many input rows, convert panels */

static size_t row_bytes(const ac_mat *w) { return (size_t)ac_dtype_bytes(w->dtype, w->cols); }

/* Row R as f32, alignment-safe. */
static void row_f32(const ac_mat *w, size_t r, float *out)
{
    const unsigned char *p = (const unsigned char *)w->data + r * row_bytes(w);
    size_t n = w->cols;
    switch (w->dtype) {
    case AC_DTYPE_F32:
        memcpy(out, p, n * sizeof *out);
        break;
    case AC_DTYPE_F16:
    case AC_DTYPE_BF16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, p + 2 * i, 2);
            out[i] = w->dtype == AC_DTYPE_F16 ? ac_f16_to_f32(h) : ac_bf16_to_f32(h);
        }
        break;
    case AC_DTYPE_Q8_0:
        for (size_t b = 0; b < n / 32; b++, p += 34) {
            uint16_t h;
            memcpy(&h, p, 2);
            float d = ac_f16_to_f32(h);
            for (int k = 0; k < 32; k++) out[b * 32 + k] = d * (float)(int8_t)p[2 + k];
        }
        break;
    default:
        memset(out, 0, n * sizeof *out);
    }
}

void ac_mat_rows(const ac_mat *w, size_t r0, size_t r1, float *out)
{
    for (size_t r = r0; r < r1; r++) row_f32(w, r, out + (r - r0) * w->cols);
}

void ac_matmul_w_ref(const float *x, const ac_mat *w, const float *bias, float *y, size_t M)
{
    float *row = malloc(w->cols * sizeof *row);
    if (!row) return;
    for (size_t n = 0; n < w->rows; n++) {
        row_f32(w, n, row);
        for (size_t m = 0; m < M; m++) {
            float acc = 0;
            for (size_t k = 0; k < w->cols; k++) acc += x[m * w->cols + k] * row[k];
            y[m * w->rows + n] = acc + (bias ? bias[n] : 0.0f);
        }
    }
    free(row);
}

/* ---- few rows: stream the weights once, converting in registers ------- */

typedef struct {
    const float *x;
    const ac_mat *w;
    const float *bias;
    float *y;
    size_t M;
} stream_job;

static void stream_range(void *ctx, size_t n0, size_t n1)
{
    const stream_job *j = ctx;
    if (ac_kernels_simd()) {
        ac_matmul_w_avx2(j->x, j->w, j->bias, j->y, j->M, n0, n1);
        return;
    }
    size_t K = j->w->cols;
    float *row = malloc(K * sizeof *row);
    if (!row) return;
    for (size_t n = n0; n < n1; n++) {
        row_f32(j->w, n, row);
        for (size_t m = 0; m < j->M; m++) {
            float acc = 0;
            for (size_t k = 0; k < K; k++) acc += j->x[m * K + k] * row[k];
            j->y[m * j->w->rows + n] = acc + (j->bias ? j->bias[n] : 0.0f);
        }
    }
    free(row);
}

/* ---- many rows: a panel of weights at a time in f32 ---------------------- */

typedef struct {
    const ac_mat *w;
    float *panel;
    size_t r0;
} panel_job;

static void panel_range(void *ctx, size_t b, size_t e)
{
    const panel_job *j = ctx;
    ac_mat_rows(j->w, j->r0 + b, j->r0 + e, j->panel + b * j->w->cols);
}

void ac_matmul_w(const float *x, const ac_mat *w, const float *bias, float *y, size_t M)
{
    if (w->dtype == AC_DTYPE_F32) {
        ac_linear(x, w->data, bias, y, M, w->rows, w->cols);
        return;
    }
    float *panel = M >= MANY_ROWS ? malloc(PANEL_ROWS * w->cols * sizeof *panel) : NULL;
    if (!panel) {
        stream_job j = {x, w, bias, y, M};
        ac_parallel_for(w->rows, 16, stream_range, &j);
        return;
    }
    for (size_t r0 = 0; r0 < w->rows; r0 += PANEL_ROWS) {
        size_t nr = w->rows - r0 < PANEL_ROWS ? w->rows - r0 : PANEL_ROWS;
        panel_job pj = {w, panel, r0};
        ac_parallel_for(nr, 8, panel_range, &pj);
        ac_matmul_nt(x, w->cols, panel, w->cols, bias ? bias + r0 : NULL, y + r0, w->rows, M, nr, w->cols);
    }
    free(panel);
}
