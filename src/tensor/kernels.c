/* The kernels' plain names, each a call through the kernel table of the
 * level in use (dispatch.c); threading; and the kernels built from others
 * (conv via im2col, LSTM cell). */
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "base/threadpool.h"
#include "tensor/dispatch.h"

/* Set by tests and benchmarks while pool threads may read it. */
static atomic_int blas_wanted = 1;

void ac_kernels_set_blas(int on) { atomic_store_explicit(&blas_wanted, on, memory_order_relaxed); }

static int blas_on(void) { return atomic_load_explicit(&blas_wanted, memory_order_relaxed); }

/* ---- matmul ------------------------------------------------------------- */

typedef struct {
    const float *x, *w, *bias;
    float *y;
    size_t ldx, ldw, ldy, M, N, K;
    int split_n; /* parallel over output columns (weight rows) or rows */
} matmul_job;

static void matmul_range(void *ctx, size_t b, size_t e)
{
    const matmul_job *j = ctx;
    size_t m0 = 0, m1 = j->M, n0 = 0, n1 = j->N;
    if (j->split_n) n0 = b, n1 = e;
    else m0 = b, m1 = e;
    ac_kernels()->matmul_nt_range(j->x, j->ldx, j->w, j->ldw, j->bias, j->y, j->ldy, j->K, m0, m1, n0, n1);
}

/* Large products with many rows go to OpenBLAS: it packs and blocks for the
 * cache and uses the widest vectors the CPU has. Its own threads are off
 * while we call it: our pool gives each thread a slice of the output
 * columns, so one set of threads does all the work and none spin against
 * another. */
typedef struct {
    const float *x, *w, *bias;
    float *y;
    size_t ldx, ldw, ldy, M, K;
} blas_job;

/* OpenBLAS's thread count is process-wide and may be the host program's
 * (numpy on the same OpenBLAS): the first of our products at once saves it
 * and sets one thread, the last restores it. A host that calls OpenBLAS
 * from another thread during one of our products gets one thread for it. */
static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static int blas_users, blas_host_threads;

static void blas_enter(void)
{
    pthread_mutex_lock(&blas_lock);
    if (blas_users++ == 0) {
        blas_host_threads = openblas_get_num_threads();
        if (blas_host_threads != 1) openblas_set_num_threads(1);
    }
    pthread_mutex_unlock(&blas_lock);
}

static void blas_leave(void)
{
    pthread_mutex_lock(&blas_lock);
    if (--blas_users == 0 && blas_host_threads != 1) openblas_set_num_threads(blas_host_threads);
    pthread_mutex_unlock(&blas_lock);
}

static void blas_range(void *ctx, size_t n0, size_t n1)
{
    const blas_job *j = ctx;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)j->M, (int)(n1 - n0), (int)j->K, 1.0f, j->x,
                (int)j->ldx, j->w + n0 * j->ldw, (int)j->ldw, 0.0f, j->y + n0, (int)j->ldy);
    if (j->bias)
        for (size_t m = 0; m < j->M; m++)
            for (size_t n = n0; n < n1; n++) j->y[m * j->ldy + n] += j->bias[n];
}

static void blas_matmul(const float *x, size_t ldx, const float *w, size_t ldw, const float *bias, float *y,
                        size_t ldy, size_t M, size_t N, size_t K)
{
    blas_job j = {x, w, bias, y, ldx, ldw, ldy, M, K};
    blas_enter();
    ac_parallel_for(N, 64, blas_range, &j);
    blas_leave();
}

void ac_matmul_nt(const float *x, size_t ldx, const float *w, size_t ldw, const float *bias,
                  float *y, size_t ldy, size_t M, size_t N, size_t K)
{
    matmul_job j = {x, w, bias, y, ldx, ldw, ldy, M, N, K, N >= M};
    double flops = 2.0 * (double)M * (double)N * (double)K;
    if (blas_on() && M >= 32 && N >= 32 && flops >= 4e6 && M < (1u << 30) && N < (1u << 30) && K < (1u << 30)) {
        blas_matmul(x, ldx, w, ldw, bias, y, ldy, M, N, K);
        return;
    }
    if (flops < 2e5) { /* too small to be worth waking threads */
        matmul_range(&j, 0, j.split_n ? N : M);
        return;
    }
    ac_parallel_for(j.split_n ? N : M, j.split_n ? 16 : 4, matmul_range, &j);
}

/* ---- conv1d ------------------------------------------------------------- */

size_t ac_conv1d_scratch(const ac_conv1d_shape *s, size_t batch, size_t T)
{
    return batch * ac_conv1d_out_len(s, T) * (size_t)s->kernel * (size_t)s->cin;
}

void ac_conv1d(const ac_conv1d_shape *s, const float *x, size_t batch, size_t T,
               const float *w, const float *bias, float *y, float *cols)
{
    size_t To = ac_conv1d_out_len(s, T), cin = (size_t)s->cin;
    size_t row = (size_t)s->kernel * cin;
    if (s->kernel == 1 && s->stride == 1 && s->pad == 0) {
        ac_matmul_nt(x, cin, w, cin, bias, y, (size_t)s->cout, batch * T, (size_t)s->cout, cin);
        return;
    }
    /* im2col: one row of kernel*cin inputs per output frame, matching the
     * [cout][kernel][cin] weight layout, then one matmul. */
    for (size_t b = 0; b < batch; b++)
        for (size_t t = 0; t < To; t++) {
            float *dst = cols + (b * To + t) * row;
            for (int k = 0; k < s->kernel; k++) {
                long ti = (long)t * s->stride - s->pad + (long)k * s->dilation;
                if (ti < 0 || ti >= (long)T)
                    memset(dst + (size_t)k * cin, 0, cin * sizeof(float));
                else
                    memcpy(dst + (size_t)k * cin, x + (b * T + (size_t)ti) * cin,
                           cin * sizeof(float));
            }
        }
    ac_matmul_nt(cols, row, w, row, bias, y, (size_t)s->cout, batch * To, (size_t)s->cout, row);
}

void ac_conv1d_weight_from_torch(const float *src, float *dst, int cout, int cin, int kernel)
{
    for (int o = 0; o < cout; o++)
        for (int c = 0; c < cin; c++)
            for (int k = 0; k < kernel; k++)
                dst[((size_t)o * kernel + k) * cin + c] = src[((size_t)o * cin + c) * kernel + k];
}

void ac_conv1d_depthwise(const ac_conv1d_shape *s, const float *x, size_t batch,
                         size_t T, const float *w, const float *bias, float *y)
{
    ac_kernels()->conv1d_depthwise(s, x, batch, T, w, bias, y);
}

size_t ac_conv_transpose1d_scratch(const ac_convt1d_shape *s, size_t batch, size_t T)
{
    return batch * T * (size_t)s->kernel * (size_t)s->cout;
}

/* One product gives every input frame's contribution to each tap,
 * Z[batch*T][kernel][cout]; each is then added at its output frame. */
void ac_conv_transpose1d(const ac_convt1d_shape *s, const float *x, size_t batch, size_t T,
                         const float *w, const float *bias, float *y, float *z)
{
    size_t To = ac_conv_transpose1d_out_len(s, T), cin = (size_t)s->cin, cout = (size_t)s->cout;
    size_t row = (size_t)s->kernel * cout;
    ac_matmul_nt(x, cin, w, cin, NULL, z, row, batch * T, row, cin);
    for (size_t b = 0; b < batch; b++) {
        float *yb = y + b * To * cout;
        for (size_t t = 0; t < To; t++)
            if (bias) memcpy(yb + t * cout, bias, cout * sizeof *yb);
            else memset(yb + t * cout, 0, cout * sizeof *yb);
        for (size_t ti = 0; ti < T; ti++)
            for (int k = 0; k < s->kernel; k++) {
                long to = (long)ti * s->stride - s->pad + (long)k * s->dilation;
                if (to >= 0 && to < (long)To) ac_axpy(yb + (size_t)to * cout, z + (b * T + ti) * row + (size_t)k * cout, 1.0f, cout);
            }
    }
}

void ac_conv_transpose1d_weight_from_torch(const float *src, float *dst, int cin, int cout, int kernel)
{
    for (int c = 0; c < cin; c++)
        for (int o = 0; o < cout; o++)
            for (int k = 0; k < kernel; k++)
                dst[((size_t)k * cout + o) * cin + c] = src[((size_t)c * cout + o) * kernel + k];
}

void ac_depthwise_weight_from_torch(const float *src, float *dst, int C, int kernel)
{
    for (int c = 0; c < C; c++)
        for (int k = 0; k < kernel; k++) dst[(size_t)k * C + c] = src[(size_t)c * kernel + k];
}

void ac_polyphase(const float *bank, size_t taps, size_t stride, size_t phases, const float *x, size_t step,
                  size_t blocks, float *out)
{
    ac_kernels()->polyphase(bank, taps, stride, phases, x, step, blocks, out);
}

/* ---- element-wise --------------------------------------------------------- */

void ac_channel_affine(float *x, size_t rows, size_t C, const float *scale,
                       const float *shift, int relu)
{
    ac_kernels()->channel_affine(x, rows, C, scale, shift, relu);
}

void ac_batchnorm_fold(const float *gamma, const float *beta, const float *mean,
                       const float *var, float eps, size_t C, float *scale, float *shift)
{
    for (size_t c = 0; c < C; c++) {
        scale[c] = gamma[c] / sqrtf(var[c] + eps);
        shift[c] = beta[c] - mean[c] * scale[c];
    }
}

/* Element-wise work on many values spreads over the pool: below this many
 * values waking the threads costs more than it saves. */
enum { SPREAD_VALUES = 1 << 15, SPREAD_GRAIN = 64 };

/* An element-wise kernel over [0, n) of Y (and X): one of the three forms.
 * Pieces start at multiples of SPREAD_GRAIN, so a kernel's vector body and
 * scalar tail fall on the values they fall on in one call: the bits do not
 * depend on the pool. */
typedef struct {
    void (*unary)(float *y, size_t n);
    void (*binary)(float *y, const float *x, size_t n);
    void (*axpy)(float *y, const float *x, float alpha, size_t n);
    float *y;
    const float *x;
    float alpha;
} values_job;

static void values_range(void *ctx, size_t b, size_t e)
{
    const values_job *j = ctx;
    if (j->unary) j->unary(j->y + b, e - b);
    else if (j->binary) j->binary(j->y + b, j->x + b, e - b);
    else j->axpy(j->y + b, j->x + b, j->alpha, e - b);
}

static void spread_values(const values_job *j, size_t n)
{
    if (n < SPREAD_VALUES) values_range((void *)j, 0, n);
    else ac_parallel_for(n, SPREAD_GRAIN, values_range, (void *)j);
}

void ac_relu(float *x, size_t n) { spread_values(&(values_job){.unary = ac_kernels()->relu, .y = x}, n); }
void ac_sigmoid(float *x, size_t n) { spread_values(&(values_job){.unary = ac_kernels()->sigmoid, .y = x}, n); }
void ac_tanh(float *x, size_t n) { spread_values(&(values_job){.unary = ac_kernels()->tanh, .y = x}, n); }
void ac_exp(float *x, size_t n) { spread_values(&(values_job){.unary = ac_kernels()->exp, .y = x}, n); }
void ac_silu(float *x, size_t n) { spread_values(&(values_job){.unary = ac_kernels()->silu, .y = x}, n); }
void ac_gelu(float *x, size_t n) { spread_values(&(values_job){.unary = ac_kernels()->gelu, .y = x}, n); }

void ac_mul(float *y, const float *x, size_t n)
{
    spread_values(&(values_job){.binary = ac_kernels()->mul, .y = y, .x = x}, n);
}

void ac_silu_mul(float *y, const float *x, size_t n)
{
    spread_values(&(values_job){.binary = ac_kernels()->silu_mul, .y = y, .x = x}, n);
}

void ac_axpy(float *y, const float *x, float alpha, size_t n)
{
    spread_values(&(values_job){.axpy = ac_kernels()->axpy, .y = y, .x = x, .alpha = alpha}, n);
}

/* Row-wise work (norms, rotations) spreads by rows the same way: each row
 * is one kernel call whatever the pool. */
typedef struct {
    const float *x, *gamma, *beta;
    float *y;
    size_t C, gamma_stride;
    float eps;
} norm_job;

static void rmsnorm_range(void *ctx, size_t r0, size_t r1)
{
    const norm_job *j = ctx;
    const float *g = j->gamma ? j->gamma + r0 * j->gamma_stride : NULL;
    ac_kernels()->rmsnorm(j->x + r0 * j->C, j->y + r0 * j->C, r1 - r0, j->C, g, j->gamma_stride, j->eps);
}

static void layernorm_range(void *ctx, size_t r0, size_t r1)
{
    const norm_job *j = ctx;
    ac_kernels()->layernorm(j->x + r0 * j->C, j->y + r0 * j->C, r1 - r0, j->C, j->gamma, j->beta, j->eps);
}

static void spread_rows(ac_range_fn fn, void *job, size_t rows, size_t C)
{
    if (rows < 2 || rows * C < SPREAD_VALUES) fn(job, 0, rows);
    else ac_parallel_for(rows, 1, fn, job);
}

void ac_rmsnorm(const float *x, float *y, size_t rows, size_t C, const float *gamma, size_t gamma_stride,
                float eps)
{
    norm_job j = {x, gamma, NULL, y, C, gamma_stride, eps};
    spread_rows(rmsnorm_range, &j, rows, C);
}

typedef struct {
    float *x;
    size_t ld, heads, dim, head_step;
    const int *pos;
    const float *inv; /* the DIM/2 inverse frequencies */
} rope_job;

enum { ROPE_MAX_HALF = 256 };

static void rope_range(void *ctx, size_t r0, size_t r1)
{
    const rope_job *j = ctx;
    const ac_kernel_table *k = ac_kernels();
    float cs[ROPE_MAX_HALF], sn[ROPE_MAX_HALF];
    for (size_t r = r0; r < r1; r++) {
        for (size_t i = 0; i < j->dim / 2; i++) {
            float a = (float)(j->pos ? j->pos[r] : (int)r) * j->inv[i];
            cs[i] = cosf(a), sn[i] = sinf(a);
        }
        if (j->head_step == j->dim) k->rope_rotate(j->x + r * j->ld, j->heads, j->dim, cs, sn);
        else /* the row's angles once for every head */
            for (size_t h = 0; h < j->heads; h++)
                k->rope_rotate(j->x + r * j->ld + h * j->head_step, 1, j->dim, cs, sn);
    }
}

void ac_rope_partial(float *x, size_t rows, size_t ld, size_t heads, size_t head_step, size_t dim, const int *pos,
                     float theta)
{
    size_t half = dim / 2;
    if (half > ROPE_MAX_HALF) { /* more angles than the buffers hold */
        for (size_t h = 0; h < heads; h++) ac_rope_ref(x + h * head_step, rows, ld, 1, dim, pos, theta);
        return;
    }
    float inv[ROPE_MAX_HALF];
    for (size_t i = 0; i < half; i++) inv[i] = 1.0f / powf(theta, (float)(2 * i) / (float)dim);
    rope_job j = {x, ld, heads, dim, head_step, pos, inv};
    spread_rows(rope_range, &j, rows, heads * dim);
}

void ac_rope(float *x, size_t rows, size_t ld, size_t heads, size_t dim, const int *pos, float theta)
{
    ac_rope_partial(x, rows, ld, heads, dim, dim, pos, theta);
}

void ac_softmax_masked(float *x, size_t rows, size_t cols, float scale, const ac_mask *mask)
{
    ac_kernels()->softmax_masked(x, rows, cols, scale, mask);
}

void ac_glu(const float *x, float *y, size_t rows, size_t C)
{
    ac_kernels()->glu(x, y, rows, C);
}

void ac_layernorm(const float *x, float *y, size_t rows, size_t C, const float *gamma,
                  const float *beta, float eps)
{
    norm_job j = {x, gamma, beta, y, C, 0, eps};
    spread_rows(layernorm_range, &j, rows, C);
}

void ac_log_softmax(float *x, size_t n)
{
    ac_kernels()->log_softmax(x, n);
}

void ac_softmax_rows(float *x, size_t rows, size_t cols)
{
    ac_kernels()->softmax_rows(x, rows, cols);
}

void ac_lstm_cell(const float *gx, const float *w_hh, float *h, float *c,
                  size_t H, float *g)
{
    ac_matmul_nt(h, H, w_hh, H, gx, g, 4 * H, 1, 4 * H, H);
    ac_sigmoid(g, 2 * H);          /* i, f */
    ac_tanh(g + 2 * H, H);         /* g */
    ac_sigmoid(g + 3 * H, H);      /* o */
    for (size_t j = 0; j < H; j++) c[j] = g[H + j] * c[j] + g[j] * g[2 * H + j];
    memcpy(h, c, H * sizeof *h);
    ac_tanh(h, H);
    for (size_t j = 0; j < H; j++) h[j] *= g[3 * H + j];
}
