#include "tensor/mat.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "audioc.h"
#include "base/threadpool.h"
#include "tensor/dispatch.h"
#include "tensor/mat_bf16.h"

#define PANEL_FLOATS (4u << 20) /* weights converted at a time for f32 products */
#define MANY_ROWS 32            /* from this many input rows, pack or convert panels */
/* One-row products use AVX-512 up to this matrix size: from the caches it
 * streams 1.5x faster than AVX2 (a small model decodes 10% faster), but
 * matrices that come from DRAM ran 5% slower (full-size decoder, 1 thread).
 * BF16 weights on vdpbf16ps (AVX512_BF16) use it at any size: no
 * conversion, 1.5x faster than AVX2 from the caches and 1.2-1.4x from
 * DRAM (Qwen2-0.5B's 4864 x 896). */
#define AVX512_MAX_BYTES (1u << 20)

static size_t row_bytes(const ac_mat *w) { return (size_t)ac_dtype_bytes(w->dtype, w->cols); }
static int is_k_quant(const ac_mat *w) { return ac_dtype_block(w->dtype) == 256; }

void ac_mat_rows(const ac_mat *w, size_t r0, size_t r1, float *out)
{
    /* f32 rows are a copy at every level; the K-quants' rows have only the scalar conversion */
    if (w->dtype == AC_DTYPE_F32 || is_k_quant(w)) ac_mat_rows_ref(w, r0, r1, out);
    else ac_kernels()->mat_rows(w, r0, r1, out);
}

/* ---- scratch: each thread's buffers, kept between calls ---------------
 * (freed when the thread ends): the f32 panels and GEMM packs of its
 * column ranges, and the activations as a product computes with them,
 * made by the calling thread before its ranges go to the pool. */
enum { SCRATCH_PANEL, SCRATCH_ACTS, SCRATCH_KINDS };

typedef struct {
    void *buf;
    size_t cap;
} scratch;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *p)
{
    scratch *s = p;
    if (!s) return;
    for (int i = 0; i < SCRATCH_KINDS; i++) free(s[i].buf);
    free(s);
}

static void scratch_key_init(void) { pthread_key_create(&scratch_key, scratch_free); }

/* The calling thread's buffer of KIND, grown to BYTES; NULL when out of memory. */
static void *scratch_get(int kind, size_t bytes)
{
    pthread_once(&scratch_once, scratch_key_init);
    scratch *s = pthread_getspecific(scratch_key);
    if (!s) {
        if (!(s = calloc(SCRATCH_KINDS, sizeof *s))) return NULL;
        pthread_setspecific(scratch_key, s);
    }
    if (bytes > s[kind].cap) {
        void *b = realloc(s[kind].buf, bytes);
        if (!b) return NULL;
        s[kind].buf = b;
        s[kind].cap = bytes;
    }
    return s[kind].buf;
}

/* ---- the activations a product computes with ------------------------- */

/* X as a product's kernels take it */
typedef struct {
    const float *x;            /* as given, or rounded to bf16 for BF16 weights */
    const ac_block_q8_act *xq; /* quantized for Q8_0 and K-quant weights, else NULL */
} acts_job;

typedef struct {
    const float *x;
    float *xr;           /* BF16: X rounded; int8 widened: X quantized and widened */
    ac_block_q8_act *xq; /* int8 (Q8_0, K-quants): X quantized */
    ac_dtype t;
    size_t K;
} acts_fill;

static void acts_range(void *ctx, size_t m0, size_t m1)
{
    const acts_fill *f = ctx;
    const float *x = f->x + m0 * f->K;
    size_t n = (m1 - m0) * f->K;
    if (f->xq) ac_kernels()->quantize_q8_act(x, f->xq + m0 * (f->K / AC_QK8_0), n);
    else if (f->t != AC_DTYPE_BF16) ac_round_q8_act(x, f->xr + m0 * f->K, n);
    else ac_round_bf16_act(x, f->xr + m0 * f->K, n);
}

/* X[M][K] as products with weights of type T take it, rounded or
 * quantized into the calling thread's scratch; WIDEN: for the int8 types
 * (Q8_0, K-quants), quantized and widened back to f32 (J->xq NULL), for f32
 * kernels. Returns -1 when the scratch cannot be had. */
static int acts_prepare(const float *x, size_t M, size_t K, ac_dtype t, int widen, acts_job *j)
{
    *j = (acts_job){x, NULL};
    int int8 = t == AC_DTYPE_Q8_0 || ac_dtype_block(t) == AC_QK_K;
    if (t != AC_DTYPE_BF16 && !int8) return 0;
    int blocks = int8 && !widen;
    size_t bytes = blocks ? M * (K / AC_QK8_0) * sizeof *j->xq : M * K * sizeof *x;
    void *buf = scratch_get(SCRATCH_ACTS, bytes ? bytes : 1);
    if (!buf) return -1;
    acts_fill f = {x, blocks ? NULL : buf, blocks ? buf : NULL, t, K};
    if (M * K < 100000) acts_range(&f, 0, M);
    else ac_parallel_for(M, 1, acts_range, &f);
    *j = (acts_job){f.xr ? f.xr : x, f.xq};
    return 0;
}

static void fill_nan(float *y, size_t ldy, size_t M, size_t n0, size_t n1)
{
    for (size_t m = 0; m < M; m++)
        for (size_t n = n0; n < n1; n++) y[m * ldy + n] = NAN;
}

/* ---- few rows: stream the weights once, converting in registers ------- */

typedef struct {
    acts_job a;
    const ac_mat *w;
    const float *bias;
    float *y;
    size_t M;
} stream_job;

/* Up to BF16_FEW input rows over BF16 weights at the AVX512_BF16 level
 * take the one-row vdpbf16ps kernel each, over blocks of BF16_BLOCK weight
 * rows (256 KB at 1024 columns) that stay in L2 for the next input row:
 * the few-rows kernel widens the weights to f32 FMAs, and a 2-beam step of
 * a BF16 Qwen3-0.6B decoder took 8x a greedy one on it (195 ms against 23
 * ms, 2 threads). Two rows of 3072 x 1024 (bench_products): 0.23-0.26 ms
 * this way, 0.84-1.0 ms on the few-rows kernel. */
#define BF16_FEW 4
#define BF16_BLOCK 128

static void few_rows_bf16(const stream_job *j, const ac_kernel_table *k, size_t n0, size_t n1)
{
    for (size_t b = n0; b < n1; b += BF16_BLOCK) {
        size_t e = n1 - b < BF16_BLOCK ? n1 : b + BF16_BLOCK;
        for (size_t m = 0; m < j->M; m++) {
            const float *x = j->a.x + m * j->w->cols;
            float *y = j->y + m * j->w->rows;
            size_t n = k->matmul_row16(x, j->w, j->bias, y, b, e);
            if (n < e) k->matmul_few(x, j->w, j->bias, y, 1, n, e);
        }
    }
}

static void stream_range(void *ctx, size_t n0, size_t n1)
{
    const stream_job *j = ctx;
    const ac_kernel_table *k = ac_kernels();
    if (j->M > 1 && j->M <= BF16_FEW && j->w->dtype == AC_DTYPE_BF16 && k == ac_kernels_at(AC_SIMD_AVX512_BF16)) {
        few_rows_bf16(j, k, n0, n1);
        return;
    }
    if (is_k_quant(j->w)) {
        k->matmul_qk(j->a.xq, j->w, j->bias, j->y, j->M, n0, n1);
        return;
    }
    if (j->w->dtype == AC_DTYPE_Q8_0) {
        k->matmul_q8(j->a.xq, j->w, j->bias, j->y, j->M, n0, n1);
        return;
    }
    if (j->M == 1 && (j->w->rows * row_bytes(j->w) <= AVX512_MAX_BYTES ||
                      (j->w->dtype == AC_DTYPE_BF16 && k == ac_kernels_at(AC_SIMD_AVX512_BF16))))
        n0 = k->matmul_row16(j->a.x, j->w, j->bias, j->y, n0, n1);
    k->matmul_few(j->a.x, j->w, j->bias, j->y, j->M, n0, n1);
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

/* Several products of one X[M][K], their outputs' columns laid end to
 * end: [0, W[0].rows) for the first, and so on. */
typedef struct {
    acts_job a;
    size_t M;
    const ac_mat *const *w;
    const float *const *bias;
    float *const *y;
    int n;
    int failed; /* a many-rows range found no scratch */
} products_job;

typedef void (*product_cols_fn)(products_job *j, int i, size_t n0, size_t n1);

/* FN over the part of the columns [b, e) that falls in each product */
static void each_product(products_job *j, size_t b, size_t e, product_cols_fn fn)
{
    size_t base = 0;
    for (int i = 0; i < j->n && base < e; base += j->w[i]->rows, i++) {
        size_t lo = b > base ? b - base : 0, hi = e - base < j->w[i]->rows ? e - base : j->w[i]->rows;
        if (lo < hi) fn(j, i, lo, hi);
    }
}

static void stream_cols(products_job *j, int i, size_t n0, size_t n1)
{
    stream_job sj = {j->a, j->w[i], j->bias[i], j->y[i], j->M};
    stream_range(&sj, n0, n1);
}

static void multi_range(void *ctx, size_t b, size_t e) { each_product(ctx, b, e, stream_cols); }

/* ---- many rows: the weights in f32 panels, then BLAS-speed products --- */

/* Each thread converts its own slice of product I's weight rows,
 * PANEL_FLOATS at a time, into its panel scratch. */
static void panel_cols(products_job *j, int i, size_t n0, size_t n1)
{
    const ac_mat *w = j->w[i];
    size_t rows = PANEL_FLOATS / w->cols ? PANEL_FLOATS / w->cols : 1;
    if (rows > n1 - n0) rows = n1 - n0;
    float *panel_buf = scratch_get(SCRATCH_PANEL, rows * w->cols * sizeof(float));
    if (!panel_buf) {
        j->failed = 1;
        return;
    }
    for (size_t r0 = n0; r0 < n1; r0 += rows) {
        size_t nr = n1 - r0 < rows ? n1 - r0 : rows;
        ac_mat_rows(w, r0, r0 + nr, panel_buf);
        /* a single-threaded product: we are already one of the pool's threads */
        ac_matmul_nt(j->a.x, w->cols, panel_buf, w->cols, j->bias[i] ? j->bias[i] + r0 : NULL, j->y[i] + r0, w->rows,
                     j->M, nr, w->cols);
    }
}

/* Columns [n0, n1) of product I of many rows: the level's own GEMM where
 * it has one (AVX-512's converts 16-bit weights as it packs them: no f32
 * panel goes through memory); the columns it leaves, Q8_0's over int8
 * activations to the level's int8 kernel, the others to f32 panels. */
static void many_cols(products_job *j, int i, size_t n0, size_t n1)
{
    const ac_kernel_table *k = ac_kernels();
    const ac_mat *w = j->w[i];
    /* sized for this product: a small one (a VAD's) keeps a small buffer per thread */
    float *buf = is_k_quant(w) ? NULL : scratch_get(SCRATCH_PANEL, (AC_GEMM_PACK_FOR(j->M) + 16) * sizeof(float));
    if (!buf && !is_k_quant(w)) { /* the caller starts over without the GEMMs (whose X may be unrounded) */
        j->failed = 1;
        return;
    }
    if (buf) {
        float *pack = (float *)(((uintptr_t)buf + 63) & ~(uintptr_t)63);
        if (j->a.xq) n0 = k->gemm_q8(j->a.xq, w, j->bias[i], j->y[i], j->M, n0, n1, pack);
        else if (w->dtype != AC_DTYPE_Q8_0) n0 = k->gemm16(j->a.x, w, j->bias[i], j->y[i], j->M, n0, n1, pack);
    }
    if (n0 >= n1) return;
    if (j->a.xq) k->matmul_q8(j->a.xq, w, j->bias[i], j->y[i], j->M, n0, n1);
    else panel_cols(j, i, n0, n1);
}

/* Whether the level's GEMM takes every column of many rows over weights of
 * type T: its products then give the same bits however their columns are
 * split (OpenBLAS's panels round by where a column falls in a call). */
static int gemm_takes_all(ac_dtype t)
{
    const ac_kernel_table *k = ac_kernels();
    if (t == AC_DTYPE_Q8_0) return k->gemm_q8 != ac_gemm_q8_none;
    return (t == AC_DTYPE_F16 || t == AC_DTYPE_BF16) && k->gemm16 != ac_gemm16_none;
}

/* A GEMM's columns on THREADS threads cut into whole blocks of weight
 * rows: two ranges a thread where there are blocks enough (a thread that
 * loses its core leaves its last range to the others; BF16's GEMM packs
 * all of X per range, so no more: ranges of 1 block spent a sixth of 1000
 * x 1024 x 1024 on 2 threads in packing), their sizes a block apart, the
 * larger first. The pool hands ranges out in order to whichever thread is
 * free, so each thread's share is as even as whole blocks allow: 14 blocks
 * (896 columns) as 4 + 4 + 3 + 3, 7 a thread, where ranges of one size
 * gave 8 to one and 6 to the other. */
typedef struct {
    products_job *j;
    size_t rows, blocks, ranges;
} ranges_job;

static size_t range_start(const ranges_job *r, size_t i)
{
    size_t q = r->blocks / r->ranges, rem = r->blocks % r->ranges;
    size_t at = (i * q + (i < rem ? i : rem)) * AC_GEMM16_NR;
    return at < r->rows ? at : r->rows;
}

static void many_range(void *ctx, size_t i0, size_t i1)
{
    const ranges_job *r = ctx;
    for (size_t i = i0; i < i1; i++) each_product(r->j, range_start(r, i), range_start(r, i + 1), many_cols);
}

/* J's products of many rows (all of one width and type) as one parallel
 * pass over all their columns, X prepared once for all of them. Returns
 * -1, the outputs unset, when the scratch cannot be had. */
static int many_rows(const float *x, products_job *j)
{
    const ac_mat *w = j->w[0];
    size_t rows = 0;
    for (int i = 0; i < j->n; i++) rows += j->w[i]->rows;
    /* Many rows of Q8_0 on a level without an int8 GEMM, and of the
     * K-quants (which have none): the quantized activations widened back
     * to f32 on f32 panels (OpenBLAS), the same values as the int8 kernels
     * take: 1.5x the int8 one-row kernel's speed (M=1000 N=4096 K=1024) */
    int widen = (w->dtype == AC_DTYPE_Q8_0 && ac_kernels()->gemm_q8 == ac_gemm_q8_none) || is_k_quant(w);
    /* BF16's own GEMM rounds X as it packs it (vcvtne2ps2bf16: to nearest
     * even, as ac_round_bf16_act, but for inputs a hair under the least
     * normal, which it takes as 0 where the rounding would give 2^-126):
     * rounding X first cost a twentieth of the product */
    int rounds_x = w->dtype == AC_DTYPE_BF16 && ac_kernels()->gemm16 == ac_gemm16_bf16;
    j->a = (acts_job){x, NULL};
    if (!rounds_x && acts_prepare(x, j->M, w->cols, w->dtype, widen, &j->a)) return -1;
    size_t blocks = (rows + AC_GEMM16_NR - 1) / AC_GEMM16_NR, threads = (size_t)ac_get_threads();
    ranges_job r = {j, rows, blocks, blocks < 2 * threads ? blocks : 2 * threads};
    j->failed = 0;
    ac_parallel_for(r.ranges, 1, many_range, &r);
    return j->failed ? -1 : 0;
}

void ac_matmul_multi(const float *x, size_t M, const ac_mat *const *w, const float *const *bias,
                       float *const *y, int n)
{
    size_t rows = 0;
    int same = 1;
    for (int i = 0; i < n; i++) {
        rows += w[i]->rows;
        same &= w[i]->cols == w[0]->cols && w[i]->dtype == w[0]->dtype && w[i]->dtype != AC_DTYPE_F32;
    }
    products_job j = {.M = M, .w = w, .bias = bias, .y = y, .n = n};
    if (same && M >= MANY_ROWS && gemm_takes_all(w[0]->dtype) && !many_rows(x, &j)) return;
    if (M >= MANY_ROWS || !same || acts_prepare(x, M, w[0]->cols, w[0]->dtype, 0, &j.a)) {
        for (int i = 0; i < n; i++) ac_matmul(x, w[i], bias[i], y[i], M);
        return;
    }
    stream_rows(rows, M * rows * w[0]->cols, multi_range, &j);
}

void ac_matmul(const float *x, const ac_mat *w, const float *bias, float *y, size_t M)
{
    if (w->dtype == AC_DTYPE_F32) {
        ac_matmul_nt(x, w->cols, w->data, w->cols, bias, y, w->rows, M, w->rows, w->cols);
        return;
    }
    products_job pj = {.M = M, .w = &w, .bias = &bias, .y = &y, .n = 1};
    if (M >= MANY_ROWS && !many_rows(x, &pj)) return;
    /* few rows, or many whose scratch failed */
    acts_job a;
    if (acts_prepare(x, M, w->cols, w->dtype, 0, &a)) {
        fill_nan(y, w->rows, M, 0, w->rows);
        return;
    }
    stream_job j = {a, w, bias, y, M};
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
