/* ac_attention over many query rows at the shapes of Vevo2's flow-matching
 * transformer (1000 and 500 rows) and Whisper-medium's encoder (1500 rows):
 * 16 heads of 64, self-attention (rows = keys), with no mask and with a
 * padding mask (the last tenth of the keys), on 1 and 2 threads, at the
 * CPU's highest level. Each is timed before (ac_attn_opts.tiles 0: OpenBLAS
 * products around the softmax) and after (tiles 1: the AVX-512 tiles
 * where the CPU has them), as GFLOP/s of 4 rows keys head_dim heads and
 * as a fraction of the f32 FMA roof of that many threads at the highest
 * level, measured right before each row; then (where the CPU has
 * AVX512_BF16) the tiles on bf16 operands (ac_attn_opts.bf16) against the
 * bf16 dot roof (on a busy machine a read can
 * come out low, or absurd when the clock jumps: compare rows). On a shared machine the rate per
 * CPU-second of the process (its threads' time on a core, clock()) says
 * more than the wall's: the "cpu" columns (GFLOP per CPU-second; compare
 * them with the 1-thread roof bench_roof reads on the idle machine). The padded rows count the masked keys
 * too, which the tiles skip. Last, the softmax alone at each size (ns a
 * value, one thread).
 *   bench_attention [rows]... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audioc.h"
#include "nn/attention.h"
#include "peak.h"
#include "tensor/dispatch.h"
#include "tensor/kernels.h"

enum { HEADS = 16, HEAD_DIM = 64 };

/* seconds per call, the best of 3 runs of at least 0.2 s, and the CPU seconds of that run in *CPU */
static double time_attention(const ac_attn_opts *o, const float *q, const float *k, const float *v, size_t n,
                             const ac_mask *mask, float *out, float *scratch, double *cpu)
{
    size_t w = HEADS * HEAD_DIM;
    ac_attn_kv kv = {.n = n, .k = k, .v = v, .ld = w};
    double best = 1e30;
    for (int run = 0; run < 3; run++) {
        double t = ac_now();
        clock_t c = clock();
        int reps = 0;
        do {
            ac_attention(o, q, n, w, &kv, mask, out, w, scratch);
            reps++;
        } while (ac_now() - t < 0.2);
        double s = (ac_now() - t) / reps;
        if (s < best) {
            best = s;
            *cpu = (double)(clock() - c) / CLOCKS_PER_SEC / reps;
        }
    }
    return best;
}

/* The softmax alone, on one thread: ns a value over 256 rows of N scores,
 * the best of 20 calls on fresh scores, through ac_softmax_masked (the
 * OpenBLAS path's) and the kernel table's attn_softmax (the tiles'). */
static void time_softmax(size_t n)
{
    enum { ROWS = 256 };
    float *x = malloc(ROWS * n * sizeof *x), *y = malloc(ROWS * n * sizeof *y);
    if (!x || !y) exit(1);
    for (size_t e = 0; e < ROWS * n; e++) x[e] = (float)(e * 2654435761u % 1000) / 100.0f;
    double best[2] = {1e30, 1e30};
    for (int rep = 0; rep < 20; rep++)
        for (int tiles = 0; tiles < 2; tiles++) {
            memcpy(y, x, ROWS * n * sizeof *y);
            double t = ac_now();
            if (tiles) ac_kernels()->attn_softmax(y, ROWS, n, 0.125f, NULL);
            else ac_softmax_masked(y, ROWS, n, 0.125f, NULL);
            t = ac_now() - t;
            if (t < best[tiles]) best[tiles] = t;
        }
    printf("softmax of %d x %zu: %.3f ns a value (ac_softmax_masked), %.3f (the tiles' attn_softmax)\n", ROWS, n,
           best[0] / (ROWS * (double)n) * 1e9, best[1] / (ROWS * (double)n) * 1e9);
    free(x), free(y);
}

int main(int argc, char **argv)
{
    size_t sizes[8] = {1000, 500, 1500};
    int nsizes = 3;
    if (argc > 1) {
        nsizes = argc - 1 < 8 ? argc - 1 : 8;
        for (int i = 0; i < nsizes; i++) sizes[i] = (size_t)atol(argv[i + 1]);
    }
    ac_attn_opts o = {.heads = HEADS, .kv_heads = HEADS, .head_dim = HEAD_DIM};
    int top = ac_kernels_simd();
    printf("kernel level %d; roof: f32 FMA at that level\n", top);
    double roof[3], roof16[3];
    int has16 = top >= AC_SIMD_AVX512_BF16;
    printf("%6s %8s %7s %12s %6s %12s %6s %7s %10s %9s %10s %9s\n", "rows", "mask", "threads", "before GF/s", "roof",
           "after GF/s", "roof", "speedup", "before cpu", "after cpu", "bf16 GF/s", "bf16 roof");
    for (int i = 0; i < nsizes; i++) {
        size_t n = sizes[i], w = HEADS * HEAD_DIM;
        float *q = malloc(n * w * sizeof *q), *k = malloc(n * w * sizeof *k), *v = malloc(n * w * sizeof *v);
        float *out = malloc(n * w * sizeof *out), *scratch = malloc(ac_attention_scratch(&o, n, n) * sizeof *scratch);
        if (!q || !k || !v || !out || !scratch) return 1;
        unsigned s = 1;
        for (size_t e = 0; e < n * w; e++) {
            s = s * 1664525u + 1013904223u;
            q[e] = (float)(s >> 8) / (1 << 24) - 0.5f;
            k[e] = (float)(s >> 12 & 0xfff) / 4096 - 0.5f;
            v[e] = (float)(s & 0xfff) / 4096 - 0.5f;
        }
        ac_mask pad = {.keys = n - n / 10};
        double flops = 4.0 * (double)n * (double)n * HEAD_DIM * HEADS;
        for (int masked = 0; masked <= 1; masked++)
            for (int th = 1; th <= 2; th++) {
                ac_set_threads(th);
                double g[3] = {0}, c[3];
                roof[th] = peak_gops(PEAK_F32, th);
                roof16[th] = has16 ? peak_gops(PEAK_BF16, th) : 1;
                for (int run = 0; run < 2 + has16; run++) { /* OpenBLAS, the f32 tiles, the bf16 tiles */
                    o.tiles = run > 0, o.bf16 = run == 2;
                    g[run] = flops / time_attention(&o, q, k, v, n, masked ? &pad : NULL, out, scratch, &c[run]);
                    c[run] = flops / c[run] / 1e9;
                    g[run] /= 1e9;
                }
                printf("%6zu %8s %7d %12.1f %6.2f %12.1f %6.2f %6.2fx %10.1f %9.1f %10.1f %9.2f\n", n,
                       masked ? "padding" : "none", th, g[0], g[0] / roof[th], g[1], g[1] / roof[th], g[1] / g[0], c[0],
                       c[1], g[2], g[2] / roof16[th]);
                fflush(stdout);
            }
        free(q), free(k), free(v), free(out), free(scratch);
    }
    ac_set_threads(1);
    for (int i = 0; i < nsizes; i++) time_softmax(sizes[i]);
    return 0;
}
