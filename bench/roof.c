/* The machine's roofs on 1..N threads (N = the cores this process may
 * use): f32 FMA, bf16 dot and int8 dot rates in G ops/s (a multiply-add
 * counts 2) from register-only loops, and memory read bandwidth.
 * usage: bench_roof [MB read]; AUDIOC_SIMD=0..4 caps the instructions at a
 * kernel level (as bench_products). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "audioc.h"
#include "peak.h"
#include "read_bandwidth.h"
#include "tensor/kernels.h"

int main(int argc, char **argv)
{
    if (getenv("AUDIOC_SIMD")) ac_kernels_set_simd(atoi(getenv("AUDIOC_SIMD")));
    size_t mb = argc > 1 ? (size_t)atoi(argv[1]) : 1024;
    cpu_set_t set;
    int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    float *buf = read_buffer(mb);
    if (!buf) return 1;
    printf("| threads |");
    for (int k = 0; k < PEAK_KINDS; k++) printf(" %s G/s (%s) |", peak_name(k), peak_instruction(k));
    printf(" read GB/s (%zu MB) |\n|---|", mb);
    for (int k = 0; k <= PEAK_KINDS; k++) printf("---|");
    printf("\n");
    for (int t = 1; t <= cores; t++) {
        printf("| %d |", t);
        for (int k = 0; k < PEAK_KINDS; k++) printf(" %.1f |", peak_gops(k, t));
        ac_set_threads(t);
        printf(" %.1f |\n", read_gbs(buf, mb, 5));
    }
    free(buf);
    return 0;
}
