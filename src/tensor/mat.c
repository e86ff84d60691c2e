#include "tensor/mat.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/threadpool.h"
#include "tensor/dispatch.h"

#define PANEL_FLOATS (4u << 20) /* weights converted at a time for f32 products */
#define MANY_ROWS 32            /* from this many input rows, pack or convert panels */
/* One-row products use AVX-512 up to this matrix size: from the caches it
 * streams 1.5x faster than AVX2 (a small model decodes 10% faster), but
 * matrices that come from DRAM ran 5% slower (full-size decoder, 1 thread). */
#define AVX512_MAX_BYTES (1u << 20)

static size_t row_bytes(const ac_mat *w) { return (size_t)ac_dtype_bytes(w->dtype, w->cols); }
static int is_k_quant(const ac_mat *w) { return ac_dtype_block(w->dtype) == 256; }

void ac_mat_rows(const ac_mat *w, size_t r0, size_t r1, float *out)
{
    /* f32 rows are a copy at every level; the K-quants have only the scalar kernels */
    if (w->dtype == AC_DTYPE_F32 || is_k_quant(w)) ac_mat_rows_ref(w, r0, r1, out);
    else ac_kernels()->mat_rows(w, r0, r1, out);
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
    const ac_kernel_table *k = ac_kernels();
    if (is_k_quant(j->w)) {
        ac_matmul_few_ref(j->x, j->w, j->bias, j->y, j->M, n0, n1);
        return;
    }
    if (j->M == 1 && j->w->dtype != AC_DTYPE_Q8_0 && j->w->rows * row_bytes(j->w) <= AVX512_MAX_BYTES)
        n0 = k->matmul_row16(j->x, j->w, j->bias, j->y, n0, n1);
    k->matmul_few(j->x, j->w, j->bias, j->y, j->M, n0, n1);
}

/* Weight rows [0, ROWS) of a streamed product of MACS multiply-adds:
 * small ones (a tiny model's step) run on the caller, as ac_matmul_nt's do,
 * since waking threads would cost more than they save (and on a busy
 * machine a descheduled one stalls the product). */
static void stream_rows(size_t rows, size_t macs, ac_range_fn fn, void *ctx)
{
    if (macs < 100000) fn(ctx, 0, rows);
    else ac_parallel_for(rows, 16, fn, ctx);
}

typedef struct {
    const float *x;
    size_t M;
    const ac_mat *const *w;
    const float *const *bias;
    float *const *y;
    int n;
} multi_job;

static void multi_range(void *ctx, size_t b, size_t e)
{
    const multi_job *j = ctx;
    size_t base = 0;
    for (int i = 0; i < j->n && base < e; base += j->w[i]->rows, i++) {
        size_t lo = b > base ? b - base : 0, hi = e - base < j->w[i]->rows ? e - base : j->w[i]->rows;
        if (lo >= hi) continue;
        stream_job sj = {j->x, j->w[i], j->bias[i], j->y[i], j->M};
        stream_range(&sj, lo, hi);
    }
}

void ac_matmul_multi(const float *x, size_t M, const ac_mat *const *w, const float *const *bias,
                       float *const *y, int n)
{
    size_t rows = 0;
    int same = 1;
    for (int i = 0; i < n; i++) {
        rows += w[i]->rows;
        same &= w[i]->cols == w[0]->cols && w[i]->dtype != AC_DTYPE_F32;
    }
    if (M >= MANY_ROWS || !same) {
        for (int i = 0; i < n; i++) ac_matmul(x, w[i], bias[i], y[i], M);
        return;
    }
    multi_job j = {x, M, w, bias, y, n};
    stream_rows(rows, M * rows * w[0]->cols, multi_range, &j);
}

/* ---- many rows: the weights in f32 panels, then BLAS-speed products --- */

/* Each thread converts its own slice of weight rows, PANEL_FLOATS at a
 * time, into a buffer it keeps between calls (freed when the thread ends). */
typedef struct {
    float *buf;
    size_t cap;
} panel;

static pthread_key_t panel_key;
static pthread_once_t panel_once = PTHREAD_ONCE_INIT;

static void panel_free(void *p)
{
    if (!p) return;
    free(((panel *)p)->buf);
    free(p);
}

static void panel_key_init(void) { pthread_key_create(&panel_key, panel_free); }

/* The calling thread's buffer, grown to N floats; NULL when out of memory. */
static float *panel_get(size_t n)
{
    pthread_once(&panel_once, panel_key_init);
    panel *p = pthread_getspecific(panel_key);
    if (!p) {
        if (!(p = calloc(1, sizeof *p))) return NULL;
        pthread_setspecific(panel_key, p);
    }
    if (n > p->cap) {
        float *b = realloc(p->buf, n * sizeof *b);
        if (!b) return NULL;
        p->buf = b;
        p->cap = n;
    }
    return p->buf;
}

typedef struct {
    const float *x;
    const ac_mat *w;
    const float *bias;
    float *y;
    size_t M;
    int failed;
} panel_job;

static void panel_range(void *ctx, size_t n0, size_t n1)
{
    panel_job *j = ctx;
    const ac_mat *w = j->w;
    size_t rows = PANEL_FLOATS / w->cols ? PANEL_FLOATS / w->cols : 1;
    if (rows > n1 - n0) rows = n1 - n0;
    float *panel_buf = panel_get(rows * w->cols);
    if (!panel_buf) {
        j->failed = 1;
        return;
    }
    for (size_t r0 = n0; r0 < n1; r0 += rows) {
        size_t nr = n1 - r0 < rows ? n1 - r0 : rows;
        ac_mat_rows(w, r0, r0 + nr, panel_buf);
        /* a single-threaded product: we are already one of the pool's threads */
        ac_matmul_nt(j->x, w->cols, panel_buf, w->cols, j->bias ? j->bias + r0 : NULL, j->y + r0, w->rows, j->M, nr,
                     w->cols);
    }
}

/* Columns [n0, n1) of a product of many rows: 16-bit weights go to the
 * level's own GEMM where it has one (AVX-512's converts them as it packs
 * them: no f32 panel goes through memory); the columns it leaves (all of
 * them below AVX-512, and Q8_0's at every level), to f32 panels. */
static void many_range(void *ctx, size_t n0, size_t n1)
{
    panel_job *j = ctx;
    float *buf = ac_dtype_block(j->w->dtype) == 1 ? panel_get(AC_GEMM16_KC * AC_GEMM16_NR + 16) : NULL;
    if (buf) {
        float *pack = (float *)(((uintptr_t)buf + 63) & ~(uintptr_t)63);
        n0 = ac_kernels()->gemm16(j->x, j->w, j->bias, j->y, j->M, n0, n1, pack);
    }
    if (n0 < n1) panel_range(j, n0, n1);
}

void ac_matmul(const float *x, const ac_mat *w, const float *bias, float *y, size_t M)
{
    if (w->dtype == AC_DTYPE_F32) {
        ac_matmul_nt(x, w->cols, w->data, w->cols, bias, y, w->rows, M, w->rows, w->cols);
        return;
    }
    if (M >= MANY_ROWS) {
        panel_job pj = {x, w, bias, y, M, 0};
        ac_parallel_for(w->rows, AC_GEMM16_NR, many_range, &pj);
        if (!pj.failed) return;
    }
    stream_job j = {x, w, bias, y, M};
    stream_rows(w->rows, M * w->rows * w->cols, stream_range, &j);
}

void ac_conv1d_mat(const ac_conv1d_shape *s, const float *x, size_t batch, size_t T, const ac_mat *w,
                   const float *bias, float *y, float *cols)
{
    const size_t To = ac_conv1d_out_len(s, T), cin = (size_t)s->cin, K = (size_t)s->kernel;
    /* im2col in the weight's own [cin][kernel] order, then one product */
    for (size_t b = 0; b < batch; b++)
        for (size_t t = 0; t < To; t++) {
            float *dst = cols + (b * To + t) * cin * K;
            for (size_t k = 0; k < K; k++) {
                long ti = (long)t * s->stride - s->pad + (long)k * s->dilation;
                const float *src = ti >= 0 && ti < (long)T ? x + (b * T + (size_t)ti) * cin : NULL;
                for (size_t c = 0; c < cin; c++) dst[c * K + k] = src ? src[c] : 0.0f;
            }
        }
    ac_matmul(cols, w, bias, y, batch * To);
}
