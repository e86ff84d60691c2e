/* Every kernel against its scalar twin, at odd sizes, with 1 and 2 threads. */
#include <cblas.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audioc.h"
#include "base/f16.h"
#include "tensor/dispatch.h"
#include "tensor/kernels.h"
#include "tensor/mat.h"
#include "tensor/quant.h"
#include "test_util.h"

static uint32_t seed = 12345;

static float *rnd(size_t n, float lo, float hi)
{
    float *x = malloc((n ? n : 1) * sizeof *x);
    fill_random(x, n, lo, hi, &seed);
    return x;
}

static void test_linear(void)
{
    const size_t shapes[][3] = {{1, 1, 1}, {1, 7, 13}, {3, 5, 8}, {5, 17, 33}, {2, 512, 128},
                                {37, 29, 129}, {64, 258, 256}, {1, 1000, 7}, {100, 3, 300}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        size_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        float *x = rnd(M * K, -1, 1), *w = rnd(N * K, -1, 1), *b = rnd(N, -1, 1);
        float *ref = malloc(M * N * sizeof *ref), *got = malloc(M * N * sizeof *got);
        ac_mat wm = ac_mat_f32(w, N, K);
        ac_matmul_nt_ref(x, K, w, K, b, ref, N, M, N, K);
        for (int threads = 1; threads <= 2; threads++)
            for (int blas = 0; blas <= 1; blas++) {
                ac_set_threads(threads);
                ac_kernels_set_blas(blas);
                ac_matmul(x, &wm, b, got, M);
                double d = max_rel_diff(got, ref, M * N);
                CHECK(d < 1e-5, "linear %zux%zux%zu threads %d blas %d: diff %g", M, N, K, threads, blas, d);
            }
        ac_matmul(x, &wm, NULL, got, M);
        ac_matmul_nt_ref(x, K, w, K, NULL, ref, N, M, N, K);
        CHECK(max_rel_diff(got, ref, M * N) < 1e-5, "linear without bias %zux%zux%zu", M, N, K);
        free(x), free(w), free(b), free(ref), free(got);
    }
}

static void test_conv1d(void)
{
    const ac_conv1d_shape shapes[] = {
        {1, 258, 256, 128, 0, 1}, {129, 128, 3, 1, 1, 1}, {128, 64, 3, 2, 1, 1}, {5, 7, 5, 3, 2, 2},
        {3, 4, 1, 1, 0, 1},       {9, 11, 7, 1, 3, 1},    {2, 3, 3, 2, 0, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        const ac_conv1d_shape *sh = &shapes[s];
        size_t batch = 3, T = sh->kernel == 256 ? 640 : 13;
        size_t To = ac_conv1d_out_len(sh, T);
        float *x = rnd(batch * T * sh->cin, -1, 1);
        float *w = rnd((size_t)sh->cout * sh->kernel * sh->cin, -1, 1), *b = rnd(sh->cout, -1, 1);
        float *ref = malloc(batch * To * sh->cout * sizeof *ref), *got = malloc(batch * To * sh->cout * sizeof *got);
        float *cols = malloc((ac_conv1d_scratch(sh, batch, T) + 1) * sizeof *cols);
        ac_conv1d_ref(sh, x, batch, T, w, b, ref);
        ac_conv1d(sh, x, batch, T, w, b, got, cols);
        CHECK(max_rel_diff(got, ref, batch * To * sh->cout) < 1e-5, "conv1d shape %zu", s);
        /* the PyTorch-layout weight in place, as f32 and as f16 (the
         * reference then on the f16-rounded weights) */
        size_t nw = (size_t)sh->cout * sh->kernel * sh->cin;
        float *tw = malloc(nw * sizeof *tw), *ow = malloc(nw * sizeof *ow);
        uint16_t *hw = malloc(nw * sizeof *hw);
        for (int o = 0; o < sh->cout; o++)
            for (int c = 0; c < sh->cin; c++)
                for (int k = 0; k < sh->kernel; k++)
                    tw[((size_t)o * sh->cin + c) * sh->kernel + k] = w[((size_t)o * sh->kernel + k) * sh->cin + c];
        ac_mat m32 = ac_mat_f32(tw, (size_t)sh->cout, (size_t)sh->cin * sh->kernel);
        ac_conv1d_mat(sh, x, batch, T, &m32, b, got, cols);
        CHECK(max_rel_diff(got, ref, batch * To * sh->cout) < 1e-5, "conv1d_mat f32 shape %zu", s);
        for (size_t i = 0; i < nw; i++) tw[i] = ac_f16_to_f32(hw[i] = ac_f32_to_f16(tw[i]));
        ac_conv1d_weight_from_torch(tw, ow, sh->cout, sh->cin, sh->kernel);
        ac_conv1d_ref(sh, x, batch, T, ow, b, ref);
        ac_mat m16 = {hw, AC_DTYPE_F16, (size_t)sh->cout, (size_t)sh->cin * sh->kernel};
        ac_conv1d_mat(sh, x, batch, T, &m16, b, got, cols);
        CHECK(max_rel_diff(got, ref, batch * To * sh->cout) < 1e-5, "conv1d_mat f16 shape %zu", s);
        free(tw), free(ow), free(hw);
        free(x), free(w), free(b), free(ref), free(got), free(cols);
    }
    /* weight layout conversion: [cout][cin][k] -> [cout][k][cin] */
    float tw[2 * 3 * 2], ow[12];
    for (int i = 0; i < 12; i++) tw[i] = (float)i;
    ac_conv1d_weight_from_torch(tw, ow, 2, 3, 2);
    CHECK(ow[0] == 0 && ow[1] == 2 && ow[2] == 4 && ow[3] == 1 && ow[6] == 6, "conv weight layout");
    /* a kernel longer than the padded input gives no output */
    ac_conv1d_shape big = {1, 1, 9, 1, 1, 1};
    CHECK(ac_conv1d_out_len(&big, 5) == 0, "empty conv output");
}

static void test_depthwise(void)
{
    const ac_conv1d_shape shapes[] = {{80, 80, 11, 2, 5, 1}, {64, 64, 29, 1, 28, 2}, {13, 13, 3, 1, 1, 1},
                                      {7, 7, 5, 3, 2, 1},    {129, 129, 1, 1, 0, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        const ac_conv1d_shape *sh = &shapes[s];
        size_t batch = 2, T = 61, To = ac_conv1d_out_len(sh, T), C = (size_t)sh->cin;
        float *x = rnd(batch * T * C, -2, 2), *w = rnd((size_t)sh->kernel * C, -1, 1), *b = rnd(C, -1, 1);
        float *ref = malloc(batch * To * C * sizeof *ref), *got = malloc(batch * To * C * sizeof *got);
        ac_conv1d_depthwise_ref(sh, x, batch, T, w, b, ref);
        ac_conv1d_depthwise(sh, x, batch, T, w, b, got);
        CHECK(max_rel_diff(got, ref, batch * To * C) < 1e-5, "depthwise shape %zu", s);
        ac_conv1d_depthwise(sh, x, batch, T, w, NULL, got);
        ac_conv1d_depthwise_ref(sh, x, batch, T, w, NULL, ref);
        CHECK(max_rel_diff(got, ref, batch * To * C) < 1e-5, "depthwise no bias %zu", s);
        free(x), free(w), free(b), free(ref), free(got);
    }
    float tw[6] = {0, 1, 2, 3, 4, 5}, ow[6]; /* [C=2][1][K=3] -> [K][C] */
    ac_depthwise_weight_from_torch(tw, ow, 2, 3);
    CHECK(ow[0] == 0 && ow[1] == 3 && ow[2] == 1 && ow[5] == 5, "depthwise weight layout");
}

static void test_polyphase(void)
{
    /* {taps, stride, phases, step, blocks}: stride is taps rounded up to 8 */
    const size_t shapes[][5] = {{1, 8, 1, 1, 1}, {13, 16, 3, 2, 9}, {32, 32, 5, 7, 4}, {37, 40, 160, 147, 6}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        size_t taps = shapes[s][0], stride = shapes[s][1], phases = shapes[s][2], step = shapes[s][3];
        size_t blocks = shapes[s][4], n = (blocks - 1) * step + stride;
        float *bank = rnd(phases * stride, -1, 1), *x = rnd(n, -1, 1);
        float *ref = malloc(blocks * phases * sizeof *ref), *got = malloc(blocks * phases * sizeof *got);
        for (size_t j = 0; j < phases; j++) memset(bank + j * stride + taps, 0, (stride - taps) * sizeof *bank);
        ac_polyphase_ref(bank, taps, stride, phases, x, step, blocks, ref);
        ac_polyphase(bank, taps, stride, phases, x, step, blocks, got);
        CHECK(max_rel_diff(got, ref, blocks * phases) < 1e-5, "polyphase shape %zu", s);
        free(bank), free(x), free(ref), free(got);
    }
}

/* A level's table with an entry left out would crash the first call of
 * that operation at that level: every entry of every level is set. */
static void test_tables_complete(void)
{
    typedef void (*entry)(void);
    _Static_assert(sizeof(ac_kernel_table) % sizeof(entry) == 0, "the table holds only function pointers");
    for (int level = AC_SIMD_NONE; level < AC_SIMD_LEVELS; level++) {
        const ac_kernel_table *t = ac_kernels_at(level);
        CHECK(t != NULL, "level %d has no table", level);
        if (!t) continue;
        entry e[sizeof *t / sizeof(entry)];
        memcpy(e, t, sizeof e);
        for (size_t i = 0; i < sizeof e / sizeof *e; i++) CHECK(e[i] != NULL, "level %d: entry %zu is NULL", level, i);
    }
    CHECK(ac_kernels_at(AC_SIMD_LEVELS) == NULL && ac_kernels_at(-1) == NULL, "a table for a level that is none");
}

static void test_affine_and_batchnorm(void)
{
    size_t rows = 7, C = 13;
    float *x = rnd(rows * C, -3, 3), *scale = rnd(C, -2, 2), *shift = rnd(C, -1, 1);
    float *a = malloc(rows * C * sizeof *a), *b = malloc(rows * C * sizeof *b);
    for (int relu = 0; relu <= 1; relu++) {
        memcpy(a, x, rows * C * sizeof *a);
        memcpy(b, x, rows * C * sizeof *b);
        ac_channel_affine(a, rows, C, scale, shift, relu);
        ac_channel_affine_ref(b, rows, C, scale, shift, relu);
        CHECK(max_rel_diff(a, b, rows * C) < 1e-6, "channel affine relu=%d", relu);
    }
    /* batch norm: (x - mean) / sqrt(var + eps) * gamma + beta */
    float g = 1.5f, be = -0.25f, mu = 0.5f, var = 4.0f, sc, sh, v = 2.5f;
    ac_batchnorm_fold(&g, &be, &mu, &var, 1e-3f, 1, &sc, &sh);
    ac_channel_affine(&v, 1, 1, &sc, &sh, 0);
    float want = (2.5f - 0.5f) / sqrtf(4.001f) * 1.5f - 0.25f;
    CHECK(fabsf(v - want) < 1e-6f, "batchnorm %g vs %g", v, want);
    free(x), free(scale), free(shift), free(a), free(b);
}

typedef void (*unary_fn)(float *, size_t);

static void compare_unary(const char *name, unary_fn fast, unary_fn ref, float lo, float hi, double tol)
{
    const size_t sizes[] = {1, 7, 8, 9, 31, 1000};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s];
        float *a = rnd(n, lo, hi), *b = malloc(n * sizeof *b);
        memcpy(b, a, n * sizeof *b);
        fast(a, n);
        ref(b, n);
        double d = max_rel_diff(a, b, n);
        CHECK(d <= tol, "%s n=%zu: diff %g", name, n, d);
        free(a), free(b);
    }
}

static void test_elementwise(void)
{
    compare_unary("relu", ac_relu, ac_relu_ref, -5, 5, 0);
    compare_unary("sigmoid", ac_sigmoid, ac_sigmoid_ref, -30, 30, 1e-6);
    compare_unary("tanh", ac_tanh, ac_tanh_ref, -10, 10, 1e-6);
    compare_unary("exp", ac_exp, ac_exp_ref, -80, 80, 1e-6);
    /* exp relative accuracy, extremes and overflow to +inf is clamped */
    float e[4] = {0.0f, 1.0f, -87.0f, 88.5f};
    ac_exp(e, 4);
    CHECK(fabsf(e[0] - 1) < 1e-7f && fabsf(e[1] - 2.7182817f) < 1e-6f, "exp values %g %g", e[0], e[1]);
    CHECK(e[2] > 0 && isfinite(e[3]), "exp extremes %g %g", e[2], e[3]);
    size_t rows = 5, cols = 19;
    float *a = rnd(rows * cols, -20, 20), *b = malloc(rows * cols * sizeof *b);
    memcpy(b, a, rows * cols * sizeof *b);
    ac_softmax_rows(a, rows, cols);
    ac_softmax_rows_ref(b, rows, cols);
    CHECK(max_rel_diff(a, b, rows * cols) < 1e-6, "softmax");
    float sum = 0;
    for (size_t i = 0; i < cols; i++) sum += a[i];
    CHECK(fabsf(sum - 1) < 1e-5f, "softmax sums to %g", sum);
    free(a), free(b);
}

static void test_matmul_strided(void)
{
    /* head 1 of 3 (width 5) of x[7][15] times head 1 of w[9][15] */
    size_t M = 7, N = 9, K = 5, ld = 15;
    float *x = rnd(M * ld, -1, 1), *w = rnd(N * ld, -1, 1), *b = rnd(N, -1, 1);
    float got[7 * 20], ref[7 * 20];
    ac_matmul_nt(x + K, ld, w + K, ld, b, got, 20, M, N, K);
    ac_matmul_nt_ref(x + K, ld, w + K, ld, b, ref, 20, M, N, K);
    int ok = 1;
    for (size_t m = 0; m < M; m++) ok &= max_rel_diff(got + m * 20, ref + m * 20, N) < 1e-5;
    CHECK(ok, "strided matmul");
    free(x), free(w), free(b);
}

static void test_transformer_ops(void)
{
    { /* attention's weighted sum of value rows: a shared prompt's, then a beam's own (ADD) */
        size_t M = 375, N = 37, lda = 64;
        float y1[64], y2[64];
        for (int add = 0; add <= 1; add++) {
            float *A = rnd(M * lda, -1, 1), *x = rnd(M, 0, 1);
            ac_kernels()->attn_mix_rows(x, M, 1, A, lda, M, N, y1, N, add);
            ac_attn_mix_rows_ref(x, M, 1, A, lda, M, N, y2, N, add);
            CHECK(memcmp(y1, y2, N * sizeof *y1) == 0, "value rows, add %d: the twin's bits", add);
            free(A), free(x);
        }
    }
    compare_unary("silu", ac_silu, ac_silu_ref, -20, 20, 1e-6);
    const size_t sizes[] = {1, 7, 33, 1280};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t C = sizes[s], rows = 3;
        float *x = rnd(rows * 2 * C, -4, 4), *g = rnd(C, 0.5f, 1.5f), *be = rnd(C, -1, 1);
        float *a = malloc(rows * 2 * C * sizeof *a), *b = malloc(rows * 2 * C * sizeof *b);
        ac_glu(x, a, rows, C);
        ac_glu_ref(x, b, rows, C);
        CHECK(max_rel_diff(a, b, rows * C) < 1e-6, "glu C=%zu", C);
        ac_layernorm(x, a, rows, C, g, be, 1e-5f);
        ac_layernorm_ref(x, b, rows, C, g, be, 1e-5f);
        CHECK(max_rel_diff(a, b, rows * C) < 1e-5, "layernorm C=%zu: %g", C, max_rel_diff(a, b, rows * C));
        memcpy(a, x, C * sizeof *a);
        memcpy(b, x, C * sizeof *b);
        ac_axpy(a, x + C, 0.5f, C);
        ac_axpy_ref(b, x + C, 0.5f, C);
        CHECK(max_rel_diff(a, b, C) < 1e-6, "axpy C=%zu", C);
        free(x), free(g), free(be), free(a), free(b);
    }
    /* layernorm by hand: [1, 2, 3] -> [-1.2247, 0, 1.2247] */
    float v[3] = {1, 2, 3}, one[3] = {1, 1, 1}, zero[3] = {0, 0, 0};
    ac_layernorm(v, v, 1, 3, one, zero, 0);
    CHECK(fabsf(v[0] + 1.2247449f) < 1e-5f && fabsf(v[1]) < 1e-6f, "layernorm values %g %g", v[0], v[1]);
    size_t V = 16387;
    float *a = rnd(V, -30, 10), *b = malloc(V * sizeof *b);
    memcpy(b, a, V * sizeof *b);
    ac_log_softmax(a, V);
    ac_log_softmax_ref(b, V);
    CHECK(max_rel_diff(a, b, V) < 1e-5, "log_softmax over a vocabulary: %g", max_rel_diff(a, b, V));
    free(a), free(b);
    float l[3] = {1, 2, 3};
    ac_log_softmax(l, 3);
    CHECK(fabsf(expf(l[0]) + expf(l[1]) + expf(l[2]) - 1) < 1e-6f && fabsf(l[2] - l[1] - 1) < 1e-6f,
          "log_softmax");
}

/* the fused SiLU and gate: the bits of the two passes, and the scalar twin's values */
static void test_silu_mul(void)
{
    size_t n = 1037;
    float *h = rnd(n, -12, 12), *u = rnd(n, -3, 3), *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    memcpy(a, h, n * sizeof *a), memcpy(b, h, n * sizeof *b);
    ac_silu_mul(a, u, n);
    ac_silu(b, n);
    ac_mul(b, u, n);
    CHECK(memcmp(a, b, n * sizeof *a) == 0, "silu_mul = silu then mul, bit for bit");
    memcpy(b, h, n * sizeof *b);
    ac_silu_mul_ref(b, u, n);
    CHECK(max_rel_diff(a, b, n) < 1e-6, "silu_mul against its scalar twin: %g", max_rel_diff(a, b, n));
    free(h), free(u), free(a), free(b);
}

/* Element-wise and row-wise kernels on many values spread over the pool:
 * the bits of one thread at every level, the scalar tail included (N odd). */
static void test_spread_over_threads(void)
{
    size_t rows = 301, C = 257, n = rows * C; /* past the spreading threshold */
    float *x = rnd(n, -6, 6), *u = rnd(n, -3, 3), *g = rnd(rows * C, 0.5f, 1.5f), *out[2];
    int *pos = malloc(rows * sizeof *pos);
    for (size_t r = 0; r < rows; r++) pos[r] = (int)(r * 7 % 513);
    const char *names[] = {"silu", "gelu", "tanh", "sigmoid", "exp", "relu", "mul", "silu_mul", "axpy",
                           "rmsnorm", "layernorm", "rope"};
    for (size_t op = 0; op < sizeof names / sizeof *names; op++) {
        for (int t = 0; t < 2; t++) {
            ac_set_threads(t + 1);
            float *y = out[t] = malloc(n * sizeof *y);
            memcpy(y, x, n * sizeof *y);
            switch (op) {
            case 0: ac_silu(y, n); break;
            case 1: ac_gelu(y, n); break;
            case 2: ac_tanh(y, n); break;
            case 3: ac_sigmoid(y, n); break;
            case 4: ac_exp(y, n); break;
            case 5: ac_relu(y, n); break;
            case 6: ac_mul(y, u, n); break;
            case 7: ac_silu_mul(y, u, n); break;
            case 8: ac_axpy(y, u, 0.37f, n); break;
            case 9: ac_rmsnorm(x, y, rows, C, g, C, 1e-6f); break;
            case 10: ac_layernorm(x, y, rows, C, g, u, 1e-5f); break;
            default: ac_rope(y, rows, C, 2, 128, pos, 10000.0f); break;
            }
        }
        CHECK(memcmp(out[0], out[1], n * sizeof(float)) == 0, "%s over 2 threads: the bits of one", names[op]);
        free(out[0]), free(out[1]);
    }
    ac_set_threads(1);
    free(x), free(u), free(g), free(pos);
}

static void test_gelu_mul(void)
{

    compare_unary("gelu", ac_gelu, ac_gelu_ref, -12, 12, 1e-6);
    float g[4] = {1, -1, 0, 3};
    ac_gelu(g, 4);
    CHECK(fabsf(g[0] - 0.8413447f) < 1e-6f && fabsf(g[1] + 0.1586553f) < 1e-6f && g[2] == 0 &&
              fabsf(g[3] - 2.9959502f) < 1e-6f,
          "gelu values %g %g %g", g[0], g[1], g[3]);
    const size_t sizes[] = {1, 7, 8, 9, 1000};
    for (size_t s = 0; s < 5; s++) {
        size_t n = sizes[s];
        float *x = rnd(n, -3, 3), *a = rnd(n, -3, 3), *b = malloc(n * sizeof *b);
        memcpy(b, a, n * sizeof *b);
        ac_mul(a, x, n);
        ac_mul_ref(b, x, n);
        CHECK(max_rel_diff(a, b, n) == 0, "mul n=%zu", n);
        free(x), free(a), free(b);
    }
}

static void test_rmsnorm(void)
{
    const size_t sizes[] = {1, 7, 64, 897};
    for (size_t s = 0; s < 4; s++)
        for (int per_row = 0; per_row <= 1; per_row++) {
            size_t C = sizes[s], rows = 5;
            float *x = rnd(rows * C, -4, 4), *g = rnd(rows * C, 0.5f, 1.5f);
            float *a = malloc(rows * C * sizeof *a), *b = malloc(rows * C * sizeof *b);
            ac_rmsnorm(x, a, rows, C, g, per_row ? C : 0, 1e-6f);
            ac_rmsnorm_ref(x, b, rows, C, g, per_row ? C : 0, 1e-6f);
            CHECK(max_rel_diff(a, b, rows * C) < 1e-5, "rmsnorm C=%zu per_row=%d", C, per_row);
            /* a per-row scale is row r's own vector */
            ac_rmsnorm_ref(x + 3 * C, b, 1, C, g + (per_row ? 3 * C : 0), 0, 1e-6f);
            CHECK(max_rel_diff(a + 3 * C, b, C) < 1e-5, "rmsnorm row 3 C=%zu per_row=%d", C, per_row);
            ac_rmsnorm_ref(x, b, rows, C, NULL, 0, 1e-6f);
            ac_rmsnorm(x, x, rows, C, NULL, 0, 1e-6f); /* in place, no scale */
            CHECK(max_rel_diff(x, b, rows * C) < 1e-5, "rmsnorm in place C=%zu", C);
            free(x), free(g), free(a), free(b);
        }
    float v[2] = {3, 4}, one[2] = {1, 2};
    ac_rmsnorm(v, v, 1, 2, one, 0, 0); /* rms = sqrt(12.5) */
    CHECK(fabsf(v[0] - 0.8485281f) < 1e-6f && fabsf(v[1] - 2.2627417f) < 1e-6f, "rmsnorm values %g %g", v[0], v[1]);
}

static void test_rope(void)
{
    const size_t dims[] = {2, 16, 64, 80};
    for (size_t d = 0; d < 4; d++) {
        size_t dim = dims[d], heads = 3, rows = 6, ld = heads * dim + 5;
        int pos[6] = {0, 1, 2, 17, 500, 32767};
        float *a = rnd(rows * ld, -1, 1), *b = malloc(rows * ld * sizeof *b);
        memcpy(b, a, rows * ld * sizeof *b);
        ac_rope(a, rows, ld, heads, dim, pos, 1e6f);
        ac_rope_ref(b, rows, ld, heads, dim, pos, 1e6f);
        CHECK(max_rel_diff(a, b, rows * ld) < 1e-6, "rope dim=%zu", dim);
        int seq[6] = {0, 1, 2, 3, 4, 5}; /* no positions: row r is at r */
        memcpy(b, a, rows * ld * sizeof *b);
        ac_rope(a, rows, ld, heads, dim, NULL, 1e4f);
        ac_rope_ref(b, rows, ld, heads, dim, seq, 1e4f);
        CHECK(max_rel_diff(a, b, rows * ld) < 1e-6, "rope dim=%zu at positions 0..rows-1", dim);
        free(a), free(b);
    }
    /* partial rotary: the first 32 of heads of 64, 5 heads; the bits of a
     * head at a time, and the other channels untouched */
    {
        size_t rows = 7, heads = 5, step = 64, dim = 32, ld = heads * step + 3;
        int pos[7] = {0, 3, 9, 100, 1499, 2, 77};
        float *a = rnd(rows * ld, -1, 1), *b = malloc(rows * ld * sizeof *b), *c = malloc(rows * ld * sizeof *c);
        memcpy(b, a, rows * ld * sizeof *b), memcpy(c, a, rows * ld * sizeof *c);
        ac_rope_partial(a, rows, ld, heads, step, dim, pos, 1e4f);
        for (size_t h = 0; h < heads; h++) ac_rope(b + h * step, rows, ld, 1, dim, pos, 1e4f);
        CHECK(memcmp(a, b, rows * ld * sizeof *a) == 0, "partial rope differs from a head at a time");
        size_t moved = 0;
        for (size_t r = 0; r < rows; r++)
            for (size_t i = 0; i < ld; i++)
                moved += a[r * ld + i] != c[r * ld + i] && (i >= heads * step || i % step >= dim);
        CHECK(moved == 0, "partial rope changed %zu channels past its %zu", moved, dim);
        free(a), free(b), free(c);
    }
    /* dim 4, theta 100, position 2: pairs (0,2) turn by 2 rad, (1,3) by 0.2 */
    float x[4] = {1, 1, 0, 0};
    int p = 2;
    ac_rope(x, 1, 4, 1, 4, &p, 100);
    CHECK(fabsf(x[0] - cosf(2)) < 1e-6f && fabsf(x[2] - sinf(2)) < 1e-6f && fabsf(x[1] - cosf(0.2f)) < 1e-6f &&
              fabsf(x[3] - sinf(0.2f)) < 1e-6f,
          "rope values %g %g %g %g", x[0], x[1], x[2], x[3]);
}

static void test_conv_transpose(void)
{
    const ac_convt1d_shape shapes[] = {{5, 7, 4, 2, 1, 0, 1}, {3, 4, 3, 3, 0, 2, 1}, {8, 9, 5, 2, 3, 1, 2},
                                       {16, 12, 1, 1, 0, 0, 1}, {64, 48, 4, 2, 1, 0, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        const ac_convt1d_shape *sh = &shapes[s];
        size_t batch = 2, T = 11, To = ac_conv_transpose1d_out_len(sh, T);
        float *x = rnd(batch * T * sh->cin, -1, 1), *b = rnd(sh->cout, -1, 1);
        float *w = rnd((size_t)sh->kernel * sh->cout * sh->cin, -1, 1);
        float *ref = malloc(batch * To * sh->cout * sizeof *ref), *got = malloc(batch * To * sh->cout * sizeof *got);
        float *z = malloc(ac_conv_transpose1d_scratch(sh, batch, T) * sizeof *z);
        ac_conv_transpose1d_ref(sh, x, batch, T, w, b, ref);
        ac_conv_transpose1d(sh, x, batch, T, w, b, got, z);
        CHECK(max_rel_diff(got, ref, batch * To * sh->cout) < 1e-5, "conv transpose shape %zu", s);
        ac_conv_transpose1d_ref(sh, x, batch, T, w, NULL, ref);
        ac_conv_transpose1d(sh, x, batch, T, w, NULL, got, z);
        CHECK(max_rel_diff(got, ref, batch * To * sh->cout) < 1e-5, "conv transpose no bias %zu", s);
        free(x), free(b), free(w), free(ref), free(got), free(z);
    }
    /* PyTorch: L_out = (L-1)*stride - 2*pad + dilation*(k-1) + output_padding + 1 */
    ac_convt1d_shape up = {1, 1, 4, 2, 1, 0, 1}, op = {1, 1, 3, 2, 1, 1, 1};
    CHECK(ac_conv_transpose1d_out_len(&up, 5) == 10 && ac_conv_transpose1d_out_len(&op, 5) == 10,
          "conv transpose lengths");
    /* k4 s2 p1 (the FM upsampler): output 2i+k-1 takes input i with tap k */
    float x[3] = {1, 10, 100}, w4[4] = {1, 2, 3, 4}, w[4], y[6], z[12];
    ac_conv_transpose1d_weight_from_torch(w4, w, 1, 1, 4);
    ac_conv_transpose1d(&up, x, 1, 3, w, NULL, y, z);
    const float want[6] = {2, 3 + 10, 4 + 20, 30 + 100, 40 + 200, 300};
    CHECK(max_rel_diff(y, want, 6) == 0, "conv transpose by hand: %g %g %g %g %g %g", y[0], y[1], y[2], y[3], y[4],
          y[5]);
    /* weight layout: torch [cin=2][cout=3][k=2] -> [k][cout][cin] */
    float tw[12], ow[12];
    for (int i = 0; i < 12; i++) tw[i] = (float)i;
    ac_conv_transpose1d_weight_from_torch(tw, ow, 2, 3, 2);
    CHECK(ow[0] == 0 && ow[1] == 6 && ow[2] == 2 && ow[6] == 1 && ow[7] == 7, "conv transpose weight layout");
}

/* The level's attention tiles against their scalar twins on the packed
 * layouts (dispatch.h): rows and keys off the tiles, head_dim off 16. */
static void test_attn_tiles(void)
{
    const size_t shapes[][3] = {{13, 45, 64}, {6, 32, 40}, {1, 1, 8}, {25, 70, 128}, {7, 17, 20}};
    const ac_kernel_table *kt = ac_kernels();
    for (size_t sh = 0; sh < sizeof shapes / sizeof *shapes; sh++) {
        size_t rows = shapes[sh][0], nk = shapes[sh][1], dk = shapes[sh][2], q_ld = dk + 3, out_ld = dk + 5;
        size_t kpn = (nk + AC_ATTN_KP - 1) / AC_ATTN_KP * AC_ATTN_KP * dk, vpn = nk * AC_ATTN_VP(dk);
        float *q = rnd(rows * q_ld, -1, 1), *kp = rnd(kpn, -1, 1), *vp = rnd(vpn, -1, 1), *p = rnd(rows * nk, 0, 1);
        for (size_t i = 0; i < kpn; i++) /* zero past the keys, as packed */
            if (i / (AC_ATTN_KP * dk) * AC_ATTN_KP + i % AC_ATTN_KP >= nk) kp[i] = 0;
        for (size_t i = 0; i < vpn; i++)
            if (i % AC_ATTN_VP(dk) >= dk) vp[i] = 0;
        float *a = calloc(rows * (nk + out_ld), sizeof *a), *b = calloc(rows * (nk + out_ld), sizeof *b);
        kt->attn_scores(q, q_ld, rows, kp, nk, dk, a);
        ac_attn_scores_ref(q, q_ld, rows, kp, nk, dk, b);
        CHECK(max_rel_diff(a, b, rows * nk) < 1e-5, "attention scores %zux%zux%zu", rows, nk, dk);
        memset(a, 0, rows * out_ld * sizeof *a), memset(b, 0, rows * out_ld * sizeof *b);
        kt->attn_values(p, rows, vp, nk, dk, a, out_ld);
        ac_attn_values_ref(p, rows, vp, nk, dk, b, out_ld);
        CHECK(max_rel_diff(a, b, rows * out_ld) < 1e-5, "attention values %zux%zux%zu (and nothing past dk)", rows, nk,
              dk);
        free(q), free(kp), free(vp), free(p), free(a), free(b);
    }
    /* the tiles' softmax, every kind of mask */
    size_t rows = 5, cols = 37;
    float *x = rnd(rows * cols, -10, 10), *add = rnd(rows * cols, -3, 3), *a = malloc(rows * cols * sizeof *a),
          *b = malloc(rows * cols * sizeof *b);
    unsigned char keep[5 * 37];
    for (size_t i = 0; i < rows * cols; i++) keep[i] = (i * 7 + 3) % 5 != 0;
    memset(keep + cols, 0, cols); /* row 1 sees nothing */
    const ac_mask masks[] = {{.causal = 1, .row0 = 20}, {.keys = 29}, {.add = add, .ld = cols}, {.keep = keep, .ld = cols}};
    for (size_t k = 0; k <= sizeof masks / sizeof *masks; k++) {
        memcpy(a, x, rows * cols * sizeof *a), memcpy(b, x, rows * cols * sizeof *b);
        kt->attn_softmax(a, rows, cols, 0.125f, k ? &masks[k - 1] : NULL);
        ac_softmax_masked_ref(b, rows, cols, 0.125f, k ? &masks[k - 1] : NULL);
        CHECK(max_rel_diff(a, b, rows * cols) < 1e-6, "attention softmax mask %zu", k);
    }
    free(x), free(add), free(a), free(b);
}

static void test_softmax_masked(void)
{
    size_t rows = 6, cols = 21;
    float *x = rnd(rows * cols, -10, 10), *add = rnd(rows * cols, -3, 3);
    unsigned char keep[6 * 21];
    for (size_t i = 0; i < rows * cols; i++) keep[i] = (i * 7 + 3) % 5 != 0;
    memset(keep + 2 * cols, 0, cols); /* row 2 sees nothing */
    float *a = malloc(rows * cols * sizeof *a), *b = malloc(rows * cols * sizeof *b);
    const ac_mask masks[] = {
        {.causal = 1}, {.causal = 1, .row0 = 9}, {.keys = 13}, {.causal = 1, .row0 = 3, .keys = 7},
        {.add = add, .ld = cols}, {.keep = keep, .ld = cols}, {.keep = keep, .add = add, .ld = cols, .keys = 20}};
    for (size_t k = 0; k <= sizeof masks / sizeof *masks; k++) {
        const ac_mask *m = k ? &masks[k - 1] : NULL;
        memcpy(a, x, rows * cols * sizeof *a);
        memcpy(b, x, rows * cols * sizeof *b);
        ac_softmax_masked(a, rows, cols, 0.125f, m);
        ac_softmax_masked_ref(b, rows, cols, 0.125f, m);
        CHECK(max_rel_diff(a, b, rows * cols) < 1e-6, "softmax mask %zu", k);
    }
    /* against the definition: causal row r is the softmax of its first r+1 scaled scores */
    memcpy(a, x, rows * cols * sizeof *a);
    ac_softmax_masked(a, rows, cols, 0.5f, &masks[0]);
    for (size_t r = 0; r < rows; r++) {
        float want[21], sum = 0, mx = -INFINITY;
        for (size_t j = 0; j <= r; j++) mx = fmaxf(mx, 0.5f * x[r * cols + j]);
        for (size_t j = 0; j < cols; j++) sum += (want[j] = j <= r ? expf(0.5f * x[r * cols + j] - mx) : 0);
        for (size_t j = 0; j < cols; j++) want[j] /= sum;
        CHECK(max_rel_diff(a + r * cols, want, cols) < 1e-6, "causal softmax row %zu", r);
    }
    /* a boolean mask equals an additive one of 0 / -inf; a row that sees nothing is zeros */
    float *inf = malloc(rows * cols * sizeof *inf);
    for (size_t i = 0; i < rows * cols; i++) inf[i] = keep[i] ? 0 : -INFINITY;
    memcpy(a, x, rows * cols * sizeof *a);
    memcpy(b, x, rows * cols * sizeof *b);
    ac_softmax_masked(a, rows, cols, 1, &(ac_mask){.keep = keep, .ld = cols});
    ac_softmax_masked(b, rows, cols, 1, &(ac_mask){.add = inf, .ld = cols});
    int zeros = 1;
    for (size_t j = 0; j < cols; j++) zeros &= a[2 * cols + j] == 0 && b[2 * cols + j] == 0;
    CHECK(max_rel_diff(a, b, rows * cols) < 1e-7 && zeros, "boolean mask = additive -inf; empty row zeros");
    free(x), free(add), free(a), free(b), free(inf);
}

/* W[rows][cols] from floats into DTYPE's bytes (Q8_0: cols % 32 == 0). */
static void *encode(const float *w, size_t rows, size_t cols, ac_dtype t)
{
    size_t rb = (size_t)ac_dtype_bytes(t, cols);
    unsigned char *out = malloc(rows * rb + 1), *p = out;
    for (size_t r = 0; r < rows; r++, p += rb) {
        const float *v = w + r * cols;
        if (t == AC_DTYPE_F32) memcpy(p, v, cols * 4);
        for (size_t i = 0; t == AC_DTYPE_F16 && i < cols; i++) {
            uint16_t h = ac_f32_to_f16(v[i]);
            memcpy(p + 2 * i, &h, 2);
        }
        for (size_t i = 0; t == AC_DTYPE_BF16 && i < cols; i++) {
            uint16_t h = ac_f32_to_bf16(v[i]);
            memcpy(p + 2 * i, &h, 2);
        }
        for (size_t b = 0; t == AC_DTYPE_Q8_0 && b < cols / 32; b++) {
            float mx = 0;
            for (int i = 0; i < 32; i++) mx = fmaxf(mx, fabsf(v[b * 32 + i]));
            float d = mx / 127;
            uint16_t h = ac_f32_to_f16(d);
            memcpy(p + 34 * b, &h, 2);
            for (int i = 0; i < 32; i++) p[34 * b + 2 + i] = (unsigned char)(int8_t)lrintf(d ? v[b * 32 + i] / d : 0);
        }
        if (ac_dtype_block(t) == 256) ac_quantize_row(t, v, p, cols); /* the K-quants' own quantizer */
    }
    return out;
}

/* Weights that ac_matmul takes with X as it is (F32, F16): against the
 * reference; BF16 and Q8_0 weights' rows here, their products in
 * test_matmul_rounded_acts. */
static void test_matmul_stored_types(void)
{
    const ac_dtype types[] = {AC_DTYPE_F32, AC_DTYPE_F16, AC_DTYPE_BF16, AC_DTYPE_Q8_0};
    const size_t Ms[] = {1, 3, 8, 9, 40}, shapes[][2] = {{37, 45}, {70, 128}, {129, 256}};
    for (size_t t = 0; t < 4; t++)
        for (size_t s = 0; s < 3; s++) {
            size_t N = shapes[s][0], K = shapes[s][1];
            if (types[t] == AC_DTYPE_Q8_0 && K % 32) continue;
            int as_is = types[t] == AC_DTYPE_F32 || types[t] == AC_DTYPE_F16;
            float *wf = rnd(N * K, -1, 1), *b = rnd(N, -1, 1), *x = rnd(40 * K, -1, 1);
            float *ref = malloc(40 * N * sizeof *ref), *got = malloc(40 * N * sizeof *got);
            void *wq = encode(wf, N, K, types[t]);
            ac_mat w = {wq, types[t], N, K};
            for (size_t mi = 0; mi < 5 && as_is; mi++) {
                size_t M = Ms[mi];
                ac_matmul_ref(x, &w, b, ref, M);
                ac_matmul(x, &w, b, got, M);
                double d = max_rel_diff(got, ref, M * N);
                CHECK(d < 2e-5, "%s %zux%zux%zu: diff %g", ac_dtype_name(types[t]), M, N, K, d);
            }
            /* the same matrix three times in one pass */
            const ac_mat *ws[3] = {&w, &w, &w};
            const float *bs[3] = {b, NULL, b};
            float *y3 = malloc(3 * N * sizeof *y3), *ys[3] = {y3, y3 + N, y3 + 2 * N};
            ac_matmul_multi(x, 1, ws, bs, ys, 3);
            /* products with X rounded are compared with ac_matmul itself */
            if (as_is) ac_matmul_ref(x, &w, b, ref, 1);
            else ac_matmul(x, &w, b, ref, 1);
            CHECK(max_rel_diff(y3, ref, N) < 2e-5 && max_rel_diff(y3 + 2 * N, ref, N) < 2e-5, "multi %s",
                  ac_dtype_name(types[t]));
            if (as_is) ac_matmul_ref(x, &w, NULL, ref, 1);
            else ac_matmul(x, &w, NULL, ref, 1);
            CHECK(max_rel_diff(y3 + N, ref, N) < 2e-5, "multi without bias");
            free(y3);
            /* the stored values are the floats up to the type's rounding */
            float *rows = malloc(N * K * sizeof *rows);
            ac_mat_rows(&w, 0, N, rows);
            double tol = types[t] == AC_DTYPE_F32 ? 0 : types[t] == AC_DTYPE_F16 ? 1e-3 : 1e-2;
            CHECK(max_rel_diff(rows, wf, N * K) <= tol, "%s rows", ac_dtype_name(types[t]));
            free(wf), free(b), free(x), free(ref), free(got), free(wq), free(rows);
        }
}

/* Many input rows (the prefill's and encoders' products) with F16 weights:
 * against the reference on 1 and 2 threads, and with AVX-512 the same bits
 * on both and one FMA chain over k per output (blocks of columns, tiles
 * and ranges do not change it), at sizes that leave partial tiles, panels
 * and column blocks. */
static void test_matmul_many_rows(void)
{
    const size_t shapes[][3] = {{33, 64, 300}, {200, 130, 600}, {47, 200, 896}};
    const ac_dtype types[] = {AC_DTYPE_F16};
    for (size_t t = 0; t < 1; t++)
        for (size_t s = 0; s < 3; s++) {
            size_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
            float *wf = rnd(N * K, -1, 1), *b = rnd(N, -1, 1), *x = rnd(M * K, -1, 1);
            float *ref = malloc(M * N * sizeof *ref), *y1 = malloc(M * N * sizeof *y1), *y2 = malloc(M * N * sizeof *y2);
            void *wq = encode(wf, N, K, types[t]);
            ac_mat w = {wq, types[t], N, K};
            ac_matmul_ref(x, &w, b, ref, M);
            ac_set_threads(1);
            ac_matmul(x, &w, b, y1, M);
            ac_set_threads(2);
            ac_matmul(x, &w, b, y2, M);
            double d1 = max_rel_diff(y1, ref, M * N), d2 = max_rel_diff(y2, ref, M * N);
            CHECK(d1 < 2e-5 && d2 < 2e-5, "%s %zux%zux%zu: diff %g (1 thread), %g (2)", ac_dtype_name(types[t]), M, N,
                  K, d1, d2);
            if (ac_kernels_simd() >= AC_SIMD_AVX512) { /* OpenBLAS's sums depend on where a range starts */
                CHECK(memcmp(y1, y2, M * N * sizeof *y1) == 0, "%s %zux%zux%zu: 1 and 2 threads differ",
                      ac_dtype_name(types[t]), M, N, K);
                float *row = malloc(K * sizeof *row);
                size_t exact = 0;
                for (size_t n = 0; n < N; n++) {
                    ac_mat_rows(&w, n, n + 1, row);
                    for (size_t m = 0; m < M; m++) {
                        float acc = 0;
                        for (size_t k = 0; k < K; k++) acc = fmaf(x[m * K + k], row[k], acc);
                        exact += y1[m * N + n] == acc + b[n];
                    }
                }
                CHECK(exact == M * N, "%s %zux%zux%zu: %zu of %zu outputs are the FMA chain", ac_dtype_name(types[t]),
                      M, N, K, exact, M * N);
                free(row);
            }
            free(wf), free(b), free(x), free(ref), free(y1), free(y2), free(wq);
        }
}

/* Every half as an F16 matrix's rows at this level (F16C from AVX2 on):
 * the bits of the scalar conversion, NaNs made quiet by both. */
static void test_f16_rows_every_value(void)
{
    enum { R = 64, K = 1024 };
    uint16_t *h = malloc(R * K * sizeof *h);
    float *got = malloc(R * K * sizeof *got), *want = malloc(R * K * sizeof *want);
    for (uint32_t i = 0; i < R * K; i++) h[i] = (uint16_t)i;
    ac_mat w = {h, AC_DTYPE_F16, R, K};
    ac_mat_rows(&w, 0, R, got);
    ac_mat_rows_ref(&w, 0, R, want);
    size_t differ = 0;
    for (size_t i = 0; i < R * K; i++) differ += memcmp(&got[i], &want[i], 4) != 0;
    CHECK(differ == 0, "%zu of the 65536 halves widen to other bits than the scalar's", differ);
    free(h), free(got), free(want);
}

/* ac_matmul_multi over many rows (the attention's q, k, v; a gated FFN's
 * gate and up): each output has the bits ac_matmul gives it alone, with
 * matrices of different heights whose columns the pool's ranges split
 * anywhere, on 1 and 2 threads. */
static void test_matmul_multi_many_rows(void)
{
    const ac_dtype types[] = {AC_DTYPE_F32, AC_DTYPE_F16, AC_DTYPE_BF16, AC_DTYPE_Q8_0};
    const size_t Ms[] = {40, 100}, N[3] = {70, 129, 64}, K = 256;
    for (size_t t = 0; t < 4; t++)
        for (size_t mi = 0; mi < 2; mi++)
            for (int threads = 1; threads <= 2; threads++) {
                size_t M = Ms[mi];
                float *x = rnd(M * K, -1, 1), *wf[3], *b[3], *want[3], *got[3];
                void *wq[3];
                ac_mat w[3];
                for (int i = 0; i < 3; i++) {
                    wf[i] = rnd(N[i] * K, -1, 1), b[i] = i == 1 ? NULL : rnd(N[i], -1, 1);
                    wq[i] = encode(wf[i], N[i], K, types[t]);
                    w[i] = (ac_mat){wq[i], types[t], N[i], K};
                    want[i] = malloc(M * N[i] * sizeof(float)), got[i] = malloc(M * N[i] * sizeof(float));
                }
                ac_set_threads(threads);
                for (int i = 0; i < 3; i++) ac_matmul(x, &w[i], b[i], want[i], M);
                const ac_mat *ws[3] = {&w[0], &w[1], &w[2]};
                const float *bs[3] = {b[0], b[1], b[2]};
                ac_matmul_multi(x, M, ws, bs, got, 3);
                for (int i = 0; i < 3; i++)
                    CHECK(memcmp(got[i], want[i], M * N[i] * sizeof(float)) == 0, "multi %s M=%zu, %d threads: matrix %d",
                          ac_dtype_name(types[t]), M, threads, i);
                for (int i = 0; i < 3; i++) free(wf[i]), free(b[i]), free(wq[i]), free(want[i]), free(got[i]);
                free(x);
            }
    ac_set_threads(1);
}

/* BF16, Q8_0 and K-quant products, which compute with X rounded (to bf16)
 * or quantized (int8 per block of 32), at this level against the scalar twin
 * that rounds X the same way (the integer sums exact, the f32 sums in
 * another order: |got - twin| <= TWIN_TOL * sum|x_k w_k| + 1e-6), and
 * against the reference of X as it is, within what the rounding of X can
 * change: bf16 moves x_k by at most 2^-8 |x_k|, int8 by at most
 * amax(block)/254. Odd row counts, K not a multiple of any vector width
 * (BF16), one row and many rows (the one-row kernel, the streamed rows and
 * the packed GEMM), with and without bias, on 1 and 2 threads (the same
 * bits on both, but for many rows on a level without a GEMM of the type,
 * which go to OpenBLAS, whose sums depend on where a range starts). */
#define TWIN_TOL 1e-5

static void test_matmul_rounded_acts(void)
{
    const size_t Ms[] = {1, 3, 33, 100};
    const size_t bf16_shapes[][2] = {{37, 45}, {70, 128}, {129, 301}, {200, 1031}, {4, 7}};
    const size_t q8_shapes[][2] = {{37, 32}, {70, 96}, {129, 320}, {200, 1024}, {5, 64}};
    const size_t k_shapes[][2] = {{37, 256}, {70, 512}, {9, 768}, {20, 1024}, {5, 256}};
    const ac_dtype types[] = {AC_DTYPE_BF16, AC_DTYPE_Q8_0, AC_DTYPE_Q4_K, AC_DTYPE_Q6_K};
    for (int t = 0; t < 4; t++) /* t > 0: X quantized to int8 */
        for (size_t s = 0; s < 5; s++) {
            ac_dtype type = types[t];
            const size_t *shape = t == 0 ? bf16_shapes[s] : t == 1 ? q8_shapes[s] : k_shapes[s];
            size_t N = shape[0], K = shape[1];
            float *wf = rnd(N * K, -1, 1), *b = rnd(N, -1, 1), *x = rnd(100 * K, -2, 2);
            float *ref = malloc(100 * N * sizeof *ref), *twin = malloc(100 * N * sizeof *twin);
            float *got = malloc(100 * N * sizeof *got), *got1 = malloc(100 * N * sizeof *got1);
            float *wd = malloc(N * K * sizeof *wd);
            float *xr = malloc(100 * K * sizeof *xr);
            ac_block_q8_act *xq = malloc(100 * (K / 32 + 1) * sizeof *xq);
            void *wq = encode(wf, N, K, type);
            ac_mat w = {wq, type, N, K};
            ac_mat_rows_ref(&w, 0, N, wd);
            for (size_t mi = 0; mi < 4; mi++)
                for (int with_bias = 0; with_bias <= 1; with_bias++) {
                    size_t M = Ms[mi];
                    const float *bias = with_bias ? b : NULL;
                    if (t) {
                        ac_quantize_q8_act(x, xq, M * K);
                        if (t == 1) ac_matmul_q8_ref(xq, &w, bias, twin, M, 0, N);
                        else ac_matmul_qk_ref(xq, &w, bias, twin, M, 0, N);
                    } else {
                        ac_round_bf16_act(x, xr, M * K);
                        ac_matmul_few_ref(xr, &w, bias, twin, M, 0, N);
                    }
                    ac_matmul_ref(x, &w, bias, ref, M);
                    for (int threads = 1; threads <= 2; threads++) {
                        ac_set_threads(threads);
                        ac_matmul(x, &w, bias, got, M);
                        if (threads == 1) memcpy(got1, got, M * N * sizeof *got);
                        else if (M < 32 || (t == 0 && ac_kernels_simd() >= AC_SIMD_AVX512) ||
                                 (t == 1 && ac_kernels()->gemm_q8 != ac_gemm_q8_none))
                            CHECK(memcmp(got1, got, M * N * sizeof *got) == 0, "%s %zux%zux%zu: 1 and 2 threads differ",
                                  ac_dtype_name(type), M, N, K);
                        double worst_twin = 0, worst_ref = 0; /* error / allowed */
                        for (size_t m = 0; m < M; m++)
                            for (size_t n = 0; n < N; n++) {
                                double mag = 0, shift = 0; /* sum |x w|, and what rounding X may change */
                                for (size_t k0 = 0; k0 < K; k0 += 32) {
                                    double amax = 0, wsum = 0;
                                    for (size_t k = k0; k < K && k < k0 + 32; k++) {
                                        double xk = fabs(x[m * K + k]), wk = fabs(wd[n * K + k]);
                                        mag += xk * wk, wsum += wk, amax = fmax(amax, xk);
                                        if (!t) shift += ldexp(xk * wk, -8);
                                    }
                                    if (t) shift += amax / 254 * (1 + 1e-4) * wsum;
                                }
                                double e_twin = fabs(got[m * N + n] - twin[m * N + n]);
                                double e_ref = fabs(got[m * N + n] - ref[m * N + n]);
                                worst_twin = fmax(worst_twin, e_twin / (TWIN_TOL * mag + 1e-6));
                                worst_ref = fmax(worst_ref, e_ref / (shift + TWIN_TOL * mag + 1e-6));
                            }
                        CHECK(worst_twin <= 1, "%s %zux%zux%zu bias %d threads %d: %.3g of the tolerance from the twin",
                              ac_dtype_name(type), M, N, K, with_bias, threads, worst_twin);
                        CHECK(worst_ref <= 1, "%s %zux%zux%zu bias %d threads %d: %.3g of the bound from the reference",
                              ac_dtype_name(type), M, N, K, with_bias, threads, worst_ref);
                    }
                }
            free(wf), free(b), free(x), free(ref), free(twin), free(got), free(got1), free(wd), free(xr), free(xq), free(wq);
        }
}

/* The level's matmul_q8 entry (the one-row kernel of Q8_0 weights, which
 * also takes a few rows) called directly against ac_matmul_q8_ref:
 * column ranges that start and end anywhere (every thread's range is
 * one), odd block counts, short and long rows (a kernel may fetch ahead
 * differently for long ones), 1 to 5 input rows, with and without bias, a
 * block of scale 0 and one of a subnormal scale. The integer sums are
 * exact, the f32 ones in another order: within TWIN_TOL of sum|x w|.
 * Outputs outside the range stay as they were. */
/* Q8_0 weights of -128 (in range for the format, though ggml's quantizer
 * stops at -127) in every block of row ROW, against activations of both
 * signs: a kernel that moves the sign of x onto w overflows there. */
static void put_q8_min(unsigned char *wq, size_t N, size_t K, size_t row)
{
    if (row >= N) return;
    for (size_t b = 0; b < K / 32; b++) memset(wq + (row * (K / 32) + b) * 34 + 2, 0x80, 32);
}

static void test_matmul_q8_entry(void)
{
    const size_t Ks[] = {32, 96, 160, 1056, 2080}, Ns[] = {1, 5, 37}, Ms[] = {1, 2, 3, 5};
    const float keep = 12345.0f;
    for (size_t ki = 0; ki < 5; ki++)
        for (size_t ni = 0; ni < 3; ni++) {
            size_t K = Ks[ki], N = Ns[ni], blocks = K / 32;
            float *wf = rnd(N * K, -1, 1), *b = rnd(N, -1, 1), *x = rnd(5 * K, -2, 2);
            unsigned char *wq = encode(wf, N, K, AC_DTYPE_Q8_0);
            if (N > 2) {
                memset(wq + 1 * blocks * 34, 0, 2);               /* scale 0 */
                memcpy(wq + 2 * blocks * 34, &(uint16_t){3}, 2); /* subnormal scale */
                put_q8_min(wq, N, K, 3);
            }
            ac_mat w = {wq, AC_DTYPE_Q8_0, N, K};
            float *wd = malloc(N * K * sizeof *wd);
            ac_mat_rows_ref(&w, 0, N, wd);
            ac_block_q8_act *xq = malloc(5 * blocks * sizeof *xq);
            ac_quantize_q8_act(x, xq, 5 * K);
            const size_t ranges[][2] = {{0, N}, {1, N}, {0, N - 1}, {N / 2, N / 2 + 3}, {N - 1, N}};
            float *twin = malloc(5 * N * sizeof *twin), *got = malloc(5 * N * sizeof *got);
            for (size_t mi = 0; mi < 4; mi++)
                for (int with_bias = 0; with_bias <= 1; with_bias++)
                    for (size_t ri = 0; ri < 5; ri++) {
                        size_t M = Ms[mi], n0 = ranges[ri][0], n1 = ranges[ri][1] < N ? ranges[ri][1] : N;
                        const float *bias = with_bias ? b : NULL;
                        if (n0 >= n1) continue;
                        ac_matmul_q8_ref(xq, &w, bias, twin, M, 0, N);
                        for (size_t i = 0; i < M * N; i++) got[i] = keep;
                        ac_kernels()->matmul_q8(xq, &w, bias, got, M, n0, n1);
                        double worst = 0;
                        size_t moved = 0;
                        for (size_t m = 0; m < M; m++)
                            for (size_t n = 0; n < N; n++) {
                                float g = got[m * N + n];
                                if (n < n0 || n >= n1) {
                                    moved += g != keep;
                                    continue;
                                }
                                double mag = 0;
                                for (size_t k = 0; k < K; k++)
                                    mag += fabs(xq[m * blocks + k / 32].d * xq[m * blocks + k / 32].qs[k % 32] *
                                                (double)wd[n * K + k]);
                                worst = fmax(worst, fabs(g - twin[m * N + n]) / (TWIN_TOL * mag + 1e-6));
                            }
                        CHECK(worst <= 1 && moved == 0,
                              "matmul_q8 %zux%zux%zu cols [%zu,%zu) bias %d: %.3g of the tolerance from the twin, "
                              "%zu outputs outside the range written",
                              M, N, K, n0, n1, with_bias, worst, moved);
                    }
            free(wf), free(b), free(x), free(wq), free(wd), free(xq), free(twin), free(got);
        }
}

/* More input rows than a GEMM packs at a time (AC_GEMM_MC), BF16 and Q8_0:
 * against the twins as test_matmul_rounded_acts, the same bits on 1 and 2
 * threads where that test asks it. */
static void test_matmul_tall(void)
{
    const size_t M = AC_GEMM_MC + 13, N = 70;
    const ac_dtype types[] = {AC_DTYPE_BF16, AC_DTYPE_Q8_0};
    for (int t = 0; t < 2; t++) {
        size_t K = t ? 96 : 101;
        float *wf = rnd(N * K, -1, 1), *b = rnd(N, -1, 1), *x = rnd(M * K, -2, 2), *xr = malloc(M * K * sizeof *xr);
        float *wd = malloc(N * K * sizeof *wd), *twin = malloc(M * N * sizeof *twin);
        float *got = malloc(M * N * sizeof *got), *got1 = malloc(M * N * sizeof *got1);
        ac_block_q8_act *xq = malloc(M * (K / 32 + 1) * sizeof *xq);
        void *wq = encode(wf, N, K, types[t]);
        if (t) put_q8_min(wq, N, K, 5);
        ac_mat w = {wq, types[t], N, K};
        ac_mat_rows_ref(&w, 0, N, wd);
        if (t) {
            ac_quantize_q8_act(x, xq, M * K);
            ac_matmul_q8_ref(xq, &w, b, twin, M, 0, N);
        } else {
            ac_round_bf16_act(x, xr, M * K);
            ac_matmul_few_ref(xr, &w, b, twin, M, 0, N);
        }
        for (int threads = 1; threads <= 2; threads++) {
            ac_set_threads(threads);
            ac_matmul(x, &w, b, got, M);
            if (threads == 1) memcpy(got1, got, M * N * sizeof *got);
            else if ((t == 0 && ac_kernels_simd() >= AC_SIMD_AVX512) || (t == 1 && ac_kernels()->gemm_q8 != ac_gemm_q8_none))
                CHECK(memcmp(got1, got, M * N * sizeof *got) == 0, "%s %zux%zux%zu: 1 and 2 threads differ",
                      ac_dtype_name(types[t]), M, N, K);
            double worst = 0;
            for (size_t m = 0; m < M; m++)
                for (size_t n = 0; n < N; n++) {
                    double mag = 0;
                    for (size_t k = 0; k < K; k++) mag += fabs(x[m * K + k] * wd[n * K + k]);
                    worst = fmax(worst, fabs(got[m * N + n] - twin[m * N + n]) / (TWIN_TOL * mag + 1e-6));
                }
            CHECK(worst <= 1, "%s %zux%zux%zu threads %d: %.3g of the tolerance from the twin", ac_dtype_name(types[t]),
                  M, N, K, threads, worst);
        }
        free(wf), free(b), free(x), free(xr), free(wd), free(twin), free(got), free(got1), free(xq), free(wq);
    }
}

/* The level's quantizer of activations against ac_quantize_q8_act, bit
 * for bit: random blocks and ones of zeros, a NaN, infinities, huge and
 * subnormal values, and values half way between two steps. */
static void test_quantize_acts(void)
{
    const size_t n = 32 * 12;
    float *x = rnd(n, -3, 3);
    for (int i = 0; i < 32; i++) x[32 + i] = 0, x[64 + i] = i % 2 ? 1e-40f : -3e-41f, x[96 + i] = (float)(i - 16);
    x[130] = NAN, x[170] = INFINITY, x[200] = -INFINITY, x[230] = 3e38f, x[260] = -3e38f;
    for (int i = 0; i < 32; i++) x[288 + i] = (i - 15.5f) * 127 / 16; /* amax 127: steps of 1, .5 off them */
    ac_block_q8_act *got = malloc(n / 32 * sizeof *got), *want = malloc(n / 32 * sizeof *want);
    memset(got, 0x55, n / 32 * sizeof *got);
    ac_kernels()->quantize_q8_act(x, got, n);
    ac_quantize_q8_act(x, want, n);
    for (size_t b = 0; b < n / 32; b++)
        CHECK(memcmp(&got[b].d, &want[b].d, sizeof got[b].d) == 0 && got[b].sum == want[b].sum &&
                  memcmp(got[b].qs, want[b].qs, sizeof got[b].qs) == 0,
              "block %zu: d %g sum %d, the scalar's d %g sum %d", b, got[b].d, (int)got[b].sum, want[b].d,
              (int)want[b].sum);
    free(x), free(got), free(want);
}

static void test_lstm(void)
{
    size_t H = 37;
    float *gx = rnd(4 * H, -2, 2), *w = rnd(4 * H * H, -0.3f, 0.3f);
    float *h1 = rnd(H, -1, 1), *c1 = rnd(H, -1, 1), h2[64], c2[64], g[4 * 64];
    memcpy(h2, h1, H * sizeof *h1);
    memcpy(c2, c1, H * sizeof *c1);
    for (int step = 0; step < 5; step++) {
        ac_lstm_cell(gx, w, h1, c1, H, g);
        ac_lstm_cell_ref(gx, w, h2, c2, H, g);
    }
    CHECK(max_rel_diff(h1, h2, H) < 1e-5 && max_rel_diff(c1, c2, H) < 1e-5, "lstm cell");
    /* one step by hand: zero state, i=f=o=sigmoid(0)=0.5, g=tanh(x) */
    float gz[4] = {0, 0, 1, 0}, wz[4] = {0, 0, 0, 0}, h = 0, c = 0, gs[4];
    ac_lstm_cell(gz, wz, &h, &c, 1, gs);
    CHECK(fabsf(c - 0.5f * tanhf(1)) < 1e-6f && fabsf(h - 0.5f * tanhf(c)) < 1e-6f, "lstm by hand");
    free(gx), free(w), free(h1), free(c1);
}

/* The threads of this process (Linux): a BLAS library's own workers would
 * show here and spin against our pool. */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Runs first. The library leaves OpenBLAS as the host set it: loading it
 * changes nothing, and a large product (OpenBLAS's sgemm) on 2 threads adds
 * only our pool's worker, OpenBLAS's thread count being one during the
 * product and the host's again after it, whatever the host set. */
static void test_blas_threads_kept(void)
{
    int host = openblas_get_num_threads(), before = thread_count();
    size_t M = 64, N = 256, K = 256;
    float *x = rnd(M * K, -1, 1), *w = rnd(N * K, -1, 1), *y = malloc(M * N * sizeof *y);
    ac_set_threads(2);
    ac_mat wm = ac_mat_f32(w, N, K);
    ac_matmul(x, &wm, NULL, y, M);
    int after = thread_count();
    CHECK(after == before + 1, "%d threads after a product on 2 threads, %d before (expected ours: one more)", after,
          before);
    CHECK(openblas_get_num_threads() == host, "OpenBLAS threads %d after our product, the host's %d",
          openblas_get_num_threads(), host);
    for (int set = 1; set <= 3; set++) {
        openblas_set_num_threads(set);
        ac_matmul(x, &wm, NULL, y, M);
        CHECK(openblas_get_num_threads() == set, "OpenBLAS threads %d after our product, the host set %d",
              openblas_get_num_threads(), set);
    }
    openblas_set_num_threads(host);
    free(x), free(w), free(y);
}

static float bf16_of(float x) { return ac_bf16_to_f32(ac_f32_to_bf16(x)); }

/* The level's bf16 pack of K and V against its scalar twin, bit for bit:
 * keys and channels off the panels and vectors (odd ones too), rows wider
 * than a head, and every kind of value (NaNs of both kinds, infinities,
 * subnormals, ties to even). */
static void test_attn_pack16(void)
{
    const size_t shapes[][2] = {{1, 1}, {17, 21}, {64, 64}, {70, 128}, {129, 40}, {33, 256}};
    const float specials[] = {NAN, -NAN, INFINITY, -INFINITY, 1e-40f, -3e-39f, -0.0f, 1.00390625f, 1.01171875f};
    uint32_t snan = 0x7f800001u;
    for (size_t sh = 0; sh < sizeof shapes / sizeof *shapes; sh++) {
        size_t nk = shapes[sh][0], dk = shapes[sh][1], ld = dk + 3;
        size_t kpn = (nk + AC_ATTN_KP - 1) / AC_ATTN_KP * AC_ATTN_KP * ((dk + 1) / 2);
        size_t vpn = (nk + 1) / 2 * AC_ATTN_VP(dk);
        float *k = rnd(nk * ld, -2, 2), *v = rnd(nk * ld, -2, 2);
        for (size_t i = 0; i < nk * ld; i += 7) k[i] = v[i + 3 < nk * ld ? i + 3 : i] = specials[i / 7 % 9];
        memcpy(&k[nk * ld / 2], &snan, sizeof snan);
        /* each pack in its own block (the sanitizers see a write past it), set apart: a word left unwritten differs */
        uint32_t *ka = malloc(kpn * sizeof *ka), *va = malloc(vpn * sizeof *va);
        uint32_t *kb = malloc(kpn * sizeof *kb), *vb = malloc(vpn * sizeof *vb);
        memset(ka, 0xa5, kpn * sizeof *ka), memset(va, 0xa5, vpn * sizeof *va);
        memset(kb, 0x5a, kpn * sizeof *kb), memset(vb, 0x5a, vpn * sizeof *vb);
        ac_kernels()->attn_pack16(k, v, ld, nk, dk, ka, va);
        ac_attn_pack_bf16_ref(k, v, ld, nk, dk, kb, vb);
        CHECK(!memcmp(ka, kb, kpn * sizeof *ka) && !memcmp(va, vb, vpn * sizeof *va),
              "bf16 pack of %zu keys of %zu: the scalar twin's bits", nk, dk);
        free(k), free(v), free(ka), free(va), free(kb), free(vb);
    }
}

/* The level's bf16 attention tiles against their scalar twins and against
 * double sums of the operands rounded to bf16 (the pack's layout): rows and
 * keys off the tiles, odd keys and an odd head_dim. */
static void test_attn_tiles16(void)
{
    const size_t shapes[][3] = {{13, 45, 64}, {6, 32, 40}, {1, 1, 8}, {25, 70, 128}, {7, 17, 21}};
    const ac_kernel_table *kt = ac_kernels();
    for (size_t sh = 0; sh < sizeof shapes / sizeof *shapes; sh++) {
        size_t rows = shapes[sh][0], nk = shapes[sh][1], dk = shapes[sh][2], ld = dk + 3, out_ld = dk + 5;
        size_t kpn = (nk + AC_ATTN_KP - 1) / AC_ATTN_KP * AC_ATTN_KP * dk, vpn = nk * AC_ATTN_VP(dk);
        float *q = rnd(rows * ld, -1, 1), *k = rnd(nk * ld, -1, 1), *v = rnd(nk * ld, -1, 1);
        float *p = rnd(rows * nk, 0, 1), *p2 = malloc(rows * nk * sizeof *p2), *want = malloc(rows * nk * sizeof *want);
        uint32_t *kp = calloc(kpn, sizeof *kp), *vp = calloc(vpn, sizeof *vp);
        float *a = calloc(rows * (nk + out_ld), sizeof *a), *b = calloc(rows * (nk + out_ld), sizeof *b);
        kt->attn_pack16(k, v, ld, nk, dk, kp, vp);
        for (size_t r = 0; r < rows; r++)
            for (size_t t = 0; t < nk; t++) {
                double acc = 0;
                for (size_t d = 0; d < dk; d++) acc += (double)bf16_of(q[r * ld + d]) * bf16_of(k[t * ld + d]);
                want[r * nk + t] = (float)acc;
            }
        kt->attn_scores16(q, ld, rows, kp, nk, dk, a);
        ac_attn_scores16_ref(q, ld, rows, kp, nk, dk, b);
        CHECK(max_rel_diff(b, want, rows * nk) < 1e-5 && max_rel_diff(a, want, rows * nk) < 1e-5,
              "bf16 attention scores %zux%zux%zu: %g (twin %g)", rows, nk, dk, max_rel_diff(a, want, rows * nk),
              max_rel_diff(b, want, rows * nk));
        float *wv = calloc(rows * out_ld, sizeof *wv); /* zeros past dk, as the outputs' gaps stay */
        for (size_t r = 0; r < rows; r++)
            for (size_t d = 0; d < dk; d++) {
                double acc = 0;
                for (size_t t = 0; t < nk; t++) acc += (double)bf16_of(p[r * nk + t]) * bf16_of(v[t * ld + d]);
                wv[r * out_ld + d] = (float)acc;
            }
        memcpy(p2, p, rows * nk * sizeof *p2);
        memset(a, 0, rows * out_ld * sizeof *a);
        kt->attn_values16(p, rows, vp, nk, dk, a, out_ld);
        memset(b, 0, rows * out_ld * sizeof *b);
        ac_attn_values16_ref(p2, rows, vp, nk, dk, b, out_ld);
        CHECK(max_rel_diff(a, wv, rows * out_ld) < 1e-5 && max_rel_diff(b, wv, rows * out_ld) < 1e-5,
              "bf16 attention values %zux%zux%zu (and nothing past dk): %g (twin %g)", rows, nk, dk,
              max_rel_diff(a, wv, rows * out_ld), max_rel_diff(b, wv, rows * out_ld));
        free(wv), free(q), free(k), free(v), free(p), free(p2), free(want), free(kp), free(vp), free(a), free(b);
    }
}

/* The level's decoding attention over K/V rows against the scalar twins:
 * groups of 1, 2 and 7 query heads, head_dim off 8 and off 64, rows of K/V
 * wider than a head (a cache row's other heads), a shared part then the
 * own (ADD). The values' sums are the twin's bits. */
static void test_attn_rows(void)
{
    const size_t shapes[][3] = {{2, 411, 128}, {7, 37, 64}, {1, 1, 6}, {2, 17, 72}, {3, 20, 200}};
    const ac_kernel_table *kt = ac_kernels();
    for (size_t sh = 0; sh < sizeof shapes / sizeof *shapes; sh++) {
        size_t g = shapes[sh][0], n = shapes[sh][1], dk = shapes[sh][2], ld = dk + 9, s_ld = n + 3,
               out_ld = dk + 5;
        float *q = rnd(g * dk, -1, 1), *k = rnd(n * ld, -1, 1), *v = rnd(n * ld, -1, 1), *p = rnd(g * s_ld, 0, 1);
        float *a = rnd(g * (s_ld + out_ld), -1, 1), *b = malloc(g * (s_ld + out_ld) * sizeof *b);
        memcpy(b, a, g * (s_ld + out_ld) * sizeof *b);
        kt->attn_dot_rows(q, g, k, ld, n, dk, a, s_ld);
        ac_attn_dot_rows_ref(q, g, k, ld, n, dk, b, s_ld);
        CHECK(max_rel_diff(a, b, g * s_ld) < 1e-5, "attention dot rows %zux%zux%zu", g, n, dk);
        float *oa = a + g * s_ld, *ob = b + g * s_ld; /* the outputs, their gaps between rows kept */
        for (int add = 0; add <= 1; add++) {
            kt->attn_mix_rows(p, s_ld, g, v, ld, n, dk, oa, out_ld, add);
            ac_attn_mix_rows_ref(p, s_ld, g, v, ld, n, dk, ob, out_ld, add);
            CHECK(memcmp(oa, ob, g * out_ld * sizeof *oa) == 0,
                  "attention mix rows %zux%zux%zu, add %d: the same bits", g, n, dk, add);
        }
        free(q), free(k), free(v), free(p), free(a), free(b);
    }
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    RUN(test_blas_threads_kept);
    RUN(test_tables_complete);
    for (int simd = AC_SIMD_LEVELS - 1; simd >= AC_SIMD_NONE; simd--) {
        ac_kernels_set_simd(simd);
        if (ac_kernels_simd() != simd) { /* this CPU lacks the level: its kernels cannot run here */
            fprintf(stderr, "-- kernels with simd=%d skipped: this CPU lacks it\n", simd);
            continue;
        }
        fprintf(stderr, "-- kernels with simd=%d\n", simd);
        RUN(test_linear);
        RUN(test_conv1d);
        RUN(test_depthwise);
        RUN(test_polyphase);
        RUN(test_affine_and_batchnorm);
        RUN(test_elementwise);
        RUN(test_lstm);
        RUN(test_matmul_strided);
        RUN(test_transformer_ops);
        RUN(test_matmul_stored_types);
        RUN(test_matmul_many_rows);
        RUN(test_matmul_multi_many_rows);
        RUN(test_f16_rows_every_value);
        RUN(test_matmul_rounded_acts);
        RUN(test_matmul_q8_entry);
        RUN(test_quantize_acts);
        RUN(test_matmul_tall);
        RUN(test_gelu_mul);
        RUN(test_silu_mul);
        RUN(test_spread_over_threads);
        RUN(test_rmsnorm);
        RUN(test_rope);
        RUN(test_conv_transpose);
        RUN(test_softmax_masked);
        RUN(test_attn_tiles);
        RUN(test_attn_rows);
        RUN(test_attn_pack16);
        RUN(test_attn_tiles16);
    }
    return test_finish();
}
