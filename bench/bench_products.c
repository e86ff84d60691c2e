/* ac_matmul on the shapes of the real models, per weight type, as a
 * fraction of this machine's roof measured in the same run: products of
 * many rows against the arithmetic roof of their instruction (f32 FMA for
 * F32 and F16, bf16 dot for BF16 (f32 FMA below AVX512_BF16), int8 dot
 * for Q8_0 and the K-quants, each of the kernel level in use), one-row products
 * (decoding) against memory read bandwidth, their weights streamed from
 * DRAM (copies enough to leave the caches). Each product and its roofs
 * are measured in alternation, and the best of each kept; each type's
 * relative error (rel_error) is its product's against the exact one.
 *   bench_products [M N K]...
 * BENCH_TYPES=Q8_0,BF16 measures only those weight types;
 * AUDIOC_SIMD=0..4 caps the kernels (kernels.h: scalar, AVX2, AVX-512,
 * AVX512_VNNI, AVX512_BF16). */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audioc.h"
#include "base/mem.h"
#include "peak.h"
#include "read_bandwidth.h"
#include "tensor/kernels.h"
#include "tensor/mat.h"
#include "tensor/quant.h"

#define MAX_THREADS 8
#define STREAM_BYTES (256u << 20) /* one-row products read this much weight, in copies */
#define ROUNDS 6

typedef struct {
    ac_mat *w;
    int copies, next;
    float *x, *y;
    size_t M;
} job;

static void run(job *j)
{
    ac_matmul(j->x, &j->w[j->next], NULL, j->y, j->M);
    j->next = (j->next + 1) % j->copies;
}

/* seconds per product over at least 0.1 s */
static double time_once(job *j)
{
    double t = ac_now();
    int reps = 0;
    do {
        run(j);
        reps++;
    } while (ac_now() - t < 0.1);
    return (ac_now() - t) / reps;
}

/* The product's error against the exact one of X and the f32 weights WF,
 * RMS over its first 8 rows relative to the exact outputs' RMS: what the
 * weights' type and the rounding of X it brings cost. */
static double rel_error(job *j, const float *wf, size_t N, size_t K)
{
    size_t M = j->M < 8 ? j->M : 8;
    run(j);
    double e2 = 0, r2 = 0;
    for (size_t m = 0; m < M; m++)
        for (size_t n = 0; n < N; n++) {
            double ref = 0;
            for (size_t k = 0; k < K; k++) ref += (double)j->x[m * K + k] * wf[n * K + k];
            double e = j->y[m * N + n] - ref;
            e2 += e * e, r2 += ref * ref;
        }
    return r2 > 0 ? sqrt(e2 / r2) : 0;
}

/* whether BENCH_TYPES (names, comma-separated) is unset or names T */
static int wanted(ac_dtype t)
{
    const char *only = getenv("BENCH_TYPES"), *name = ac_dtype_name(t);
    if (!only) return 1;
    for (const char *p = only; *p; p += strcspn(p, ","), p += *p == ',')
        if (strcspn(p, ",") == strlen(name) && strncmp(p, name, strlen(name)) == 0) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    const size_t def[][3] = {{1000, 4096, 1024}, {1000, 1024, 1024}, {1, 4864, 896}, {1, 896, 4864}, {1, 1024, 1024}};
    const ac_dtype types[] = {AC_DTYPE_F32, AC_DTYPE_F16, AC_DTYPE_BF16, AC_DTYPE_Q8_0, AC_DTYPE_Q4_K, AC_DTYPE_Q6_K};
    if (getenv("AUDIOC_SIMD")) ac_kernels_set_simd(atoi(getenv("AUDIOC_SIMD")));
    cpu_set_t set;
    int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    cores = cores > MAX_THREADS ? MAX_THREADS : cores;
    float *buf = read_buffer(512);
    if (!buf) return 1;
    printf("kernels at level %d; each product and its roofs: the best of %d rounds that alternate them\n\n",
           ac_kernels_simd(), ROUNDS);
    printf("| M | N | K | weights | rel. error | threads | ms | GFLOP/s | roof G/s | of roof | weight GB/s | read GB/s "
           "| of read |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    int n = argc > 1 ? (argc - 1) / 3 : (int)(sizeof def / sizeof *def);
    for (int i = 0; i < n; i++) {
        size_t M = argc > 1 ? (size_t)atol(argv[1 + 3 * i]) : def[i][0];
        size_t N = argc > 1 ? (size_t)atol(argv[2 + 3 * i]) : def[i][1];
        size_t K = argc > 1 ? (size_t)atol(argv[3 + 3 * i]) : def[i][2];
        float *wf = malloc(N * K * sizeof *wf);
        job j = {.x = malloc(M * K * sizeof(float)), .y = malloc(M * N * sizeof(float)), .M = M};
        uint32_t s = 1;
        for (size_t k = 0; k < N * K; k++) { /* near-Gaussian, as trained weights are: a sum of 4 uniforms */
            wf[k] = 0;
            for (int u = 0; u < 4; u++) wf[k] += (float)((s = s * 1664525u + 1013904223u) >> 8) / (1 << 24) - 0.5f;
        }
        for (size_t k = 0; k < M * K; k++) j.x[k] = (float)((s = s * 1664525u + 1013904223u) >> 8) / (1 << 24) - 0.5f;
        for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
            if (ac_dtype_bytes(types[t], K) == 0 || !wanted(types[t])) continue;
            size_t bytes = (size_t)ac_dtype_bytes(types[t], K) * N;
            j.copies = M == 1 ? (int)(STREAM_BYTES / bytes + 1) : 1, j.next = 0;
            j.w = calloc((size_t)j.copies, sizeof *j.w);
            for (int c = 0; c < j.copies; c++) {
                unsigned char *d = ac_alloc_aligned(bytes);
                for (size_t r = 0; r < N; r++)
                    ac_quantize_row(types[t], wf + r * K, d + r * (bytes / N), K);
                j.w[c] = (ac_mat){d, types[t], N, K};
            }
            double err = rel_error(&j, wf, N, K);
            for (int th = 1; th <= cores; th++) {
                ac_set_threads(th);
                /* the best of each over rounds that alternate them: on a shared
                 * machine another process may take half a core at any moment */
                double roof = 0, bw = 0, sec = 1e30;
                for (int r = 0; r < ROUNDS; r++) {
                    double g = peak_gops(peak_of_weights(types[t]), th), b = read_gbs(buf, 512, 1), s1 = time_once(&j);
                    roof = g > roof ? g : roof, bw = b > bw ? b : bw, sec = s1 < sec ? s1 : sec;
                }
                double gf = 2.0 * M * N * K / sec / 1e9, gbs = bytes / sec / 1e9;
                printf("| %zu | %zu | %zu | %s | %.1e | %d | %.3f | %.1f | %.1f %s | %.2f | %.1f | %.1f | %.2f |\n", M, N,
                       K, ac_dtype_name(types[t]), err, th, 1e3 * sec, gf, roof, peak_name(peak_of_weights(types[t])), gf / roof,
                       gbs, bw, gbs / bw);
                fflush(stdout);
            }
            for (int c = 0; c < j.copies; c++) ac_free_aligned((void *)j.w[c].data);
            free(j.w);
        }
        free(wf), free(j.x), free(j.y);
    }
    free(buf);
    return 0;
}
