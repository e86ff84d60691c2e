/* Memory read bandwidth (GB/s) with 1 and 2 threads: the speed limit of a
 * decoding step, which reads every decoder weight once.
 * usage: bench_bandwidth [MB] */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "audioc.h"
#include "base/threadpool.h"

typedef struct {
    const float *buf;
    double sums[256];
} job;

__attribute__((target("avx2"))) static void read_range(void *ctx, size_t b, size_t e)
{
    job *j = ctx;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = b * 64; i < e * 64; i += 32) {
        a0 = _mm256_add_ps(a0, _mm256_load_ps(j->buf + i));
        a1 = _mm256_add_ps(a1, _mm256_load_ps(j->buf + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_load_ps(j->buf + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_load_ps(j->buf + i + 24));
    }
    float t[8];
    _mm256_storeu_ps(t, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    j->sums[b % 256] += t[0]; /* keep the loads alive */
}

int main(int argc, char **argv)
{
    size_t mb = argc > 1 ? (size_t)atoi(argv[1]) : 1024, n = mb << 18; /* floats */
    /* huge pages: the best the machine does (the models' hot weights use them too) */
    float *buf = aligned_alloc(1u << 21, n * sizeof *buf);
    madvise(buf, n * sizeof *buf, MADV_HUGEPAGE);
    for (size_t i = 0; i < n; i++) buf[i] = 1.0f;
    job j = {buf, {0}};
    for (int t = 1; t <= 2; t++) {
        ac_set_threads(t);
        double best = 1e9;
        for (int r = 0; r < 5; r++) {
            double t0 = ac_now();
            ac_parallel_for(n / 64, 1024, read_range, &j);
            double dt = ac_now() - t0;
            best = dt < best ? dt : best;
        }
        printf("threads %d: %.1f GB/s reading %zu MB\n", t, (double)n * 4 / best / 1e9, mb);
    }
    free(buf);
    return 0;
}
