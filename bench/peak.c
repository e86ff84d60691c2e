#include "peak.h"

#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>

#include "audioc.h"
#include "tensor/kernels.h"
#include "tensor/quant.h"

#define CHAINS 12 /* independent accumulators: more than latency x pipes */

static volatile float sink_f;
static volatile int32_t sink_i;

__attribute__((target("avx512f"))) static double f32_512(long n)
{
    __m512 a[CHAINS], b = _mm512_set1_ps(0.999f), c = _mm512_set1_ps(1e-6f);
    for (int j = 0; j < CHAINS; j++) a[j] = _mm512_set1_ps(1e-3f * (float)j);
    for (long i = 0; i < n; i++)
        for (int j = 0; j < CHAINS; j++) a[j] = _mm512_fmadd_ps(a[j], b, c);
    for (int j = 1; j < CHAINS; j++) a[0] = _mm512_add_ps(a[0], a[j]);
    sink_f = _mm512_reduce_add_ps(a[0]);
    return (double)n * CHAINS * 16 * 2;
}

__attribute__((target("avx2,fma"))) static double f32_256(long n)
{
    __m256 a[CHAINS], b = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(1e-6f);
    for (int j = 0; j < CHAINS; j++) a[j] = _mm256_set1_ps(1e-3f * (float)j);
    for (long i = 0; i < n; i++)
        for (int j = 0; j < CHAINS; j++) a[j] = _mm256_fmadd_ps(a[j], b, c);
    for (int j = 1; j < CHAINS; j++) a[0] = _mm256_add_ps(a[0], a[j]);
    float t[8];
    _mm256_storeu_ps(t, a[0]);
    sink_f = t[0];
    return (double)n * CHAINS * 8 * 2;
}

__attribute__((target("avx512f,avx512bf16"))) static double bf16_512(long n)
{
    __m512 a[CHAINS];
    __m512bh x = (__m512bh)_mm512_set1_epi16(0x3a83), y = (__m512bh)_mm512_set1_epi16(0x3a83); /* 1e-3 */
    for (int j = 0; j < CHAINS; j++) a[j] = _mm512_set1_ps((float)j);
    for (long i = 0; i < n; i++)
        for (int j = 0; j < CHAINS; j++) a[j] = _mm512_dpbf16_ps(a[j], x, y);
    for (int j = 1; j < CHAINS; j++) a[0] = _mm512_add_ps(a[0], a[j]);
    sink_f = _mm512_reduce_add_ps(a[0]);
    return (double)n * CHAINS * 32 * 2;
}

__attribute__((target("avx512f,avx512vnni"))) static double int8_512(long n)
{
    __m512i a[CHAINS], x = _mm512_set1_epi8(3), y = _mm512_set1_epi8(-2);
    for (int j = 0; j < CHAINS; j++) a[j] = _mm512_set1_epi32(j);
    for (long i = 0; i < n; i++)
        for (int j = 0; j < CHAINS; j++) a[j] = _mm512_dpbusd_epi32(a[j], x, y);
    for (int j = 1; j < CHAINS; j++) a[0] = _mm512_add_epi32(a[0], a[j]);
    sink_i = _mm512_reduce_add_epi32(a[0]);
    return (double)n * CHAINS * 64 * 2;
}

/* vpmaddubsw (32 products into 16 pair sums), vpmaddwd (into 8 int32), vpaddd */
__attribute__((target("avx2"))) static double int8_256(long n)
{
    __m256i a[CHAINS], x = _mm256_set1_epi8(3), y = _mm256_set1_epi8(-2), ones = _mm256_set1_epi16(1);
    for (int j = 0; j < CHAINS; j++) a[j] = _mm256_set1_epi32(j);
    for (long i = 0; i < n; i++)
        for (int j = 0; j < CHAINS; j++)
            a[j] = _mm256_add_epi32(a[j], _mm256_madd_epi16(_mm256_maddubs_epi16(x, y), ones));
    for (int j = 1; j < CHAINS; j++) a[0] = _mm256_add_epi32(a[0], a[j]);
    sink_i = _mm256_extract_epi32(a[0], 0);
    return (double)n * CHAINS * 32 * 2;
}

typedef double (*loop_fn)(long n);

static loop_fn loop_of(peak_kind k, const char **instruction)
{
    /* the instructions of the kernel level in use (AUDIOC_SIMD may cap it
     * below the CPU's, standing in for a CPU without them) */
    int level = ac_kernels_simd();
    int avx2 = level >= AC_SIMD_AVX2, avx512 = level >= AC_SIMD_AVX512;
    const char *ins = "";
    loop_fn f = NULL;
    switch (k) {
    case PEAK_F32:
        if (avx512) f = f32_512, ins = "vfmadd231ps zmm";
        else if (avx2) f = f32_256, ins = "vfmadd231ps ymm";
        break;
    case PEAK_BF16:
        if (level >= AC_SIMD_AVX512_BF16) f = bf16_512, ins = "vdpbf16ps zmm";
        break;
    case PEAK_INT8:
        if (level >= AC_SIMD_AVX512_VNNI) f = int8_512, ins = "vpdpbusd zmm";
        else if (avx2) f = int8_256, ins = "vpmaddubsw+vpmaddwd+vpaddd ymm";
        break;
    default: break;
    }
    if (instruction) *instruction = ins;
    return f;
}

const char *peak_name(peak_kind k)
{
    static const char *const names[PEAK_KINDS] = {"f32 FMA", "bf16 dot", "int8 dot"};
    return k < PEAK_KINDS ? names[k] : "?";
}

const char *peak_instruction(peak_kind k)
{
    const char *ins;
    loop_of(k, &ins);
    return ins;
}

typedef struct {
    loop_fn fn;
    long n;
    pthread_barrier_t *start;
    double ops;
} worker;

static void *run_worker(void *p)
{
    worker *w = p;
    pthread_barrier_wait(w->start);
    w->ops = w->fn(w->n);
    return NULL;
}

double peak_gops(peak_kind k, int threads)
{
    loop_fn fn = loop_of(k, NULL);
    if (!fn || threads < 1 || threads > 64) return 0;
    long n = 1 << 16;
    for (double t0 = ac_now(); fn(n), ac_now() - t0 < 0.05; t0 = ac_now()) n *= 2; /* about 0.05 s or more */
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        pthread_t tid[64];
        worker w[64];
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
        for (int i = 0; i < threads; i++) {
            w[i] = (worker){fn, n, &start, 0};
            pthread_create(&tid[i], NULL, run_worker, &w[i]);
        }
        pthread_barrier_wait(&start);
        double t0 = ac_now(), ops = 0;
        for (int i = 0; i < threads; i++) {
            pthread_join(tid[i], NULL);
            ops += w[i].ops;
        }
        double rate = ops / (ac_now() - t0) / 1e9;
        best = rate > best ? rate : best;
        pthread_barrier_destroy(&start);
    }
    return best;
}

peak_kind peak_of_weights(ac_dtype t)
{
    if (t == AC_DTYPE_BF16) return peak_of_attention(1);
    return t == AC_DTYPE_Q8_0 || ac_dtype_block(t) == AC_QK_K ? PEAK_INT8 : PEAK_F32;
}

peak_kind peak_of_attention(int bf16)
{
    return bf16 && ac_kernels_simd() >= AC_SIMD_AVX512_BF16 ? PEAK_BF16 : PEAK_F32;
}

double peak_seconds(const double flops[PEAK_KINDS], int threads)
{
    double s = 0;
    for (int k = 0; k < PEAK_KINDS; k++) {
        double roof = flops[k] > 0 ? peak_gops((peak_kind)k, threads) : 1;
        if (roof <= 0) return 0; /* no instruction of that kind here */
        s += flops[k] / (roof * 1e9);
    }
    return s;
}
