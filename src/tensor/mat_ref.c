/* Scalar kernels of ac_matmul: the scalar level's kernel table entries, and
 * the reference product the tests compare against. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/f16.h"
#include "tensor/mat.h"
#include "tensor/quant.h"

/* Row R as f32, alignment-safe. */
static void row_f32(const ac_mat *w, size_t r, float *out)
{
    const unsigned char *p = (const unsigned char *)w->data + r * (size_t)ac_dtype_bytes(w->dtype, w->cols);
    if (ac_dequantize_row(w->dtype, p, out, w->cols)) memset(out, 0, w->cols * sizeof *out);
}

void ac_mat_rows_ref(const ac_mat *w, size_t r0, size_t r1, float *out)
{
    for (size_t r = r0; r < r1; r++) row_f32(w, r, out + (r - r0) * w->cols);
}

void ac_matmul_ref(const float *x, const ac_mat *w, const float *bias, float *y, size_t M)
{
    float *row = malloc(w->cols * sizeof *row);
    if (!row) return;
    for (size_t n = 0; n < w->rows; n++) {
        row_f32(w, n, row);
        for (size_t m = 0; m < M; m++) {
            double acc = 0; /* in double, so that tests measure the kernels' rounding, not this sum's */
            for (size_t k = 0; k < w->cols; k++) acc += (double)x[m * w->cols + k] * row[k];
            y[m * w->rows + n] = (float)(acc + (bias ? bias[n] : 0.0f));
        }
    }
    free(row);
}

void ac_matmul_few_ref(const float *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0, size_t n1)
{
    size_t K = w->cols;
    float *row = malloc(K * sizeof *row);
    if (!row) return;
    for (size_t n = n0; n < n1; n++) {
        row_f32(w, n, row);
        for (size_t m = 0; m < M; m++) {
            float acc = 0;
            for (size_t k = 0; k < K; k++) acc += x[m * K + k] * row[k];
            y[m * w->rows + n] = acc + (bias ? bias[n] : 0.0f);
        }
    }
    free(row);
}

void ac_matmul_q8_ref(const ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                      size_t n1)
{
    size_t blocks = w->cols / AC_QK8_0;
    for (size_t n = n0; n < n1; n++) {
        const unsigned char *row = (const unsigned char *)w->data + n * blocks * sizeof(ac_block_q8_0);
        for (size_t m = 0; m < M; m++) {
            const ac_block_q8_act *xb = x + m * blocks;
            float acc = 0;
            for (size_t b = 0; b < blocks; b++) {
                ac_block_q8_0 wb;
                memcpy(&wb, row + b * sizeof wb, sizeof wb);
                int32_t dot = 0;
                for (int i = 0; i < AC_QK8_0; i++) dot += wb.qs[i] * xb[b].qs[i];
                acc += (float)dot * (ac_f16_to_f32(wb.d) * xb[b].d);
            }
            y[m * w->rows + n] = acc + (bias ? bias[n] : 0.0f);
        }
    }
}

/* One weight row's Q4_K super-blocks against activation row X: per
 * sub-block j of 32 (one activation block), the integer sum sc_j * q.x,
 * scaled by d and the activation's d, less dmin * m_j * d_x * sum(x) */
static float dot_q4_k(const unsigned char *row, const ac_block_q8_act *x, size_t supers)
{
    float acc = 0;
    for (size_t s = 0; s < supers; s++) {
        ac_block_q4_k b;
        memcpy(&b, row + s * sizeof b, sizeof b);
        float d = ac_f16_to_f32(b.d), dmin = ac_f16_to_f32(b.dmin), mins = 0;
        for (int j = 0; j < 8; j++) {
            const ac_block_q8_act *a = x + s * 8 + j;
            const uint8_t *q = b.qs + 32 * (j / 2);
            int sc, m, dot = 0;
            ac_q4_k_scale_min(b.scales, j, &sc, &m);
            for (int l = 0; l < 32; l++) dot += (j % 2 ? q[l] >> 4 : q[l] & 15) * a->qs[l];
            acc += (float)(sc * dot) * (d * a->d);
            mins += a->d * (float)(m * a->sum);
        }
        acc -= dmin * mins;
    }
    return acc;
}

/* One weight row's Q6_K super-blocks against activation row X: per
 * quarter of a half (32 values, one activation block), the integer sum of
 * its two sub-blocks' scales times (q - 32).x, scaled by d and the
 * activation's d */
static float dot_q6_k(const unsigned char *row, const ac_block_q8_act *x, size_t supers)
{
    float acc = 0;
    for (size_t s = 0; s < supers; s++) {
        ac_block_q6_k b;
        memcpy(&b, row + s * sizeof b, sizeof b);
        float d = ac_f16_to_f32(b.d);
        for (int h = 0; h < 2; h++)
            for (int k = 0; k < 4; k++) {
                const ac_block_q8_act *a = x + s * 8 + 4 * h + k;
                const uint8_t *ql = b.ql + 64 * h + 32 * (k % 2), *qh = b.qh + 32 * h;
                int dot = 0;
                for (int l = 0; l < 32; l++) {
                    int q = ((k / 2 ? ql[l] >> 4 : ql[l] & 15) | ((qh[l] >> 2 * k) & 3) << 4) - 32;
                    dot += b.scales[8 * h + 2 * k + l / 16] * q * a->qs[l];
                }
                acc += (float)dot * (d * a->d);
            }
    }
    return acc;
}

void ac_matmul_qk_ref(const ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                      size_t n1)
{
    size_t supers = w->cols / AC_QK_K, stride = (size_t)ac_dtype_bytes(w->dtype, w->cols);
    for (size_t n = n0; n < n1; n++) {
        const unsigned char *row = (const unsigned char *)w->data + n * stride;
        for (size_t m = 0; m < M; m++) {
            const ac_block_q8_act *xm = x + m * (w->cols / AC_QK8_0);
            float acc = w->dtype == AC_DTYPE_Q4_K ? dot_q4_k(row, xm, supers) : dot_q6_k(row, xm, supers);
            y[m * w->rows + n] = acc + (bias ? bias[n] : 0.0f);
        }
    }
}

/* The levels that have no one-row or many-row kernel of their own leave
 * every column to the caller's next path. */
size_t ac_matmul_row16_none(const float *x, const ac_mat *w, const float *bias, float *y, size_t n0, size_t n1)
{
    return n0;
}

size_t ac_gemm_q8_none(const ac_block_q8_act *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0,
                       size_t n1, float *pack)
{
    return n0;
}

size_t ac_gemm16_none(const float *x, const ac_mat *w, const float *bias, float *y, size_t M, size_t n0, size_t n1,
                      float *pack)
{
    return n0;
}
