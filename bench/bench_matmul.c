/* GFLOP/s of our products against OpenBLAS sgemm (f32, its own threads) on
 * the same shapes, with 1 and 2 threads:
 *   bench_matmul [M N K]...        our own f32 kernel (OpenBLAS off)
 *   bench_matmul --f16 [M N K]...  f16 weights as the models run them
 * AUDIOC_SIMD=0..4 caps the kernels at a level of kernels.h (bench/README.md).
 * With no shapes: small shapes, then streaming rates of 16-bit and Q8_0
 * weights for decoding. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audioc.h"
#include "base/f16.h"
#include "base/mem.h"
#include "tensor/kernels.h"
#include "tensor/mat.h"

static double gflops(double M, double N, double K, double s) { return 2 * M * N * K / s / 1e9; }

static double time_it(void (*fn)(void *), void *ctx)
{
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t = ac_now();
        int reps = 0;
        do {
            fn(ctx);
            reps++;
        } while (ac_now() - t < 0.05);
        double per = (ac_now() - t) / reps;
        if (per < best) best = per;
    }
    return best;
}

typedef struct {
    int M, N, K;
    float *x, *w, *y;
} job;

static int f16_mode;
static ac_mat f16_w;

static void run_ours(void *p)
{
    job *j = p;
    if (f16_mode) {
        ac_kernels_set_blas(1);
        ac_matmul(j->x, &f16_w, NULL, j->y, (size_t)j->M);
        return;
    }
    ac_kernels_set_blas(0);
    ac_mat w = ac_mat_f32(j->w, (size_t)j->N, (size_t)j->K);
    ac_matmul(j->x, &w, NULL, j->y, (size_t)j->M);
}

static int blas_threads = 1;

static void run_blas(void *p)
{
    job *j = p;
    openblas_set_num_threads(blas_threads); /* our products set it to 1 */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, j->M, j->N, j->K, 1.0f, j->x, j->K, j->w, j->K,
                0.0f, j->y, j->N);
}

typedef struct {
    ac_mat w;
    float *x, *y;
    size_t M;
} wjob;

static void run_stored(void *p)
{
    wjob *j = p;
    ac_matmul(j->x, &j->w, NULL, j->y, j->M);
}

/* Few-row products with 16-bit and Q8_0 weights are bound by reading the
 * weights: report the bytes per second they stream. */
static void stored_types(void)
{
    const size_t N = 4096, K = 1024;
    printf("\n| weights | rows M | threads | ms | weight GB/s |\n|---|---|---|---|---|\n");
    const ac_dtype types[] = {AC_DTYPE_F16, AC_DTYPE_BF16, AC_DTYPE_Q8_0};
    for (int t = 0; t < 3; t++) {
        size_t bytes = (size_t)ac_dtype_bytes(types[t], K) * N;
        unsigned char *w = malloc(bytes);
        for (size_t i = 0; i < bytes; i++) w[i] = (unsigned char)(i * 7 % 61); /* small finite values */
        wjob j = {{w, types[t], N, K}, calloc(8 * K, sizeof(float)), calloc(8 * N, sizeof(float)), 1};
        for (size_t M = 1; M <= 5; M += 4)
            for (int th = 1; th <= 2; th++) {
                j.M = M;
                ac_set_threads(th);
                double s = time_it(run_stored, &j);
                printf("| %s | %zu | %d | %.3f | %.1f |\n", ac_dtype_name(types[t]), M, th, 1e3 * s, bytes / s / 1e9);
            }
        free(w), free(j.x), free(j.y);
    }
}

typedef struct {
    ac_mat *w;
    int n;
    float *x, *y;
} chain_job;

static void run_chain(void *p)
{
    chain_job *j = p;
    for (int i = 0; i < j->n; i++) ac_matmul(j->x, &j->w[i], NULL, j->y, 1);
}

/* One decoding step's pattern: many F16 matrices read once each, far more
 * than the caches hold (on huge pages, as the decoder keeps them). */
static void decode_stream(void)
{
    enum { NM = 64, N = 4096, K = 1024 };
    size_t bytes = (size_t)N * K * 2;
    ac_mat w[NM];
    for (int i = 0; i < NM; i++) {
        unsigned char *d = ac_alloc_aligned(bytes);
        for (size_t k = 0; k < bytes; k++) d[k] = (unsigned char)(k * 7 % 61);
        w[i] = (ac_mat){d, AC_DTYPE_F16, N, K};
    }
    chain_job j = {w, NM, calloc(K, sizeof(float)), calloc(N, sizeof(float))};
    printf("\n| decode pattern: %d F16 matrices %dx%d (%.0f MB) | threads | ms | weight GB/s |\n|---|---|---|---|\n",
           NM, N, K, NM * bytes / 1e6);
    for (int th = 1; th <= 2; th++) {
        ac_set_threads(th);
        double s = time_it(run_chain, &j);
        printf("| | %d | %.2f | %.1f |\n", th, 1e3 * s, NM * bytes / s / 1e9);
    }
    for (int i = 0; i < NM; i++) ac_free_aligned((void *)w[i].data);
    free(j.x), free(j.y);
}

int main(int argc, char **argv)
{
    int def[][3] = {{1, 512, 128}, {128, 258, 256}, {128, 128, 387}, {1024, 64, 64}, {1, 4096, 1024},
                    {256, 1024, 1024}, {750, 1280, 1280}};
    if (getenv("AUDIOC_SIMD")) ac_kernels_set_simd(atoi(getenv("AUDIOC_SIMD")));
    if (argc > 1 && strcmp(argv[1], "--f16") == 0) {
        f16_mode = 1;
        argv++, argc--;
    }
    int n = argc > 1 ? (argc - 1) / 3 : (int)(sizeof def / sizeof *def);
    printf("| M | N | K | threads | audio.c GFLOP/s | OpenBLAS GFLOP/s | ratio |\n|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < n; i++) {
        job j;
        j.M = argc > 1 ? atoi(argv[1 + 3 * i]) : def[i][0];
        j.N = argc > 1 ? atoi(argv[2 + 3 * i]) : def[i][1];
        j.K = argc > 1 ? atoi(argv[3 + 3 * i]) : def[i][2];
        j.x = calloc((size_t)j.M * j.K, sizeof(float));
        j.w = calloc((size_t)j.N * j.K, sizeof(float));
        j.y = calloc((size_t)j.M * j.N, sizeof(float));
        for (size_t k = 0; k < (size_t)j.M * j.K; k++) j.x[k] = (float)(k % 7) * 0.1f;
        for (size_t k = 0; k < (size_t)j.N * j.K; k++) j.w[k] = (float)(k % 5) * 0.1f;
        uint16_t *h = malloc((size_t)j.N * j.K * sizeof *h);
        for (size_t k = 0; k < (size_t)j.N * j.K; k++) h[k] = ac_f32_to_f16(j.w[k]);
        f16_w = (ac_mat){h, AC_DTYPE_F16, (size_t)j.N, (size_t)j.K};
        for (int t = 1; t <= 2; t++) {
            ac_set_threads(t);
            blas_threads = t;
            double ours = gflops(j.M, j.N, j.K, time_it(run_ours, &j));
            double blas = gflops(j.M, j.N, j.K, time_it(run_blas, &j));
            printf("| %d | %d | %d | %d | %.1f | %.1f | %.2f |\n", j.M, j.N, j.K, t, ours, blas, ours / blas);
        }
        free(j.x), free(j.w), free(j.y), free(h);
    }
    if (argc == 1) stored_types();
    if (argc == 1) decode_stream();
    return 0;
}
