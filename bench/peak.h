/* The machine's arithmetic roofs: register-only loops of the widest
 * instruction of each kind the kernel level in use has (ac_kernels_simd:
 * the CPU's, or lower where AUDIOC_SIMD caps it), on 1..N threads at once. Shared
 * by bench_roof (the table) and bench_products (each product as a fraction
 * of its roof, measured in the same run). */
#ifndef AUDIOC_BENCH_PEAK_H
#define AUDIOC_BENCH_PEAK_H

#include "tensor/dtype.h"

typedef enum {
    PEAK_F32, /* f32 FMA: vfmadd*ps */
    PEAK_BF16, /* bf16 pairs into f32: vdpbf16ps */
    PEAK_INT8, /* u8 x s8 quads into i32: vpdpbusd, else vpmaddubsw + vpmaddwd */
    PEAK_KINDS,
} peak_kind;

/* The kind's name and the instruction this CPU measures it with ("" when none). */
const char *peak_name(peak_kind k);
const char *peak_instruction(peak_kind k);
/* G ops/s (a multiply-add counts 2) of THREADS threads each running KIND's
 * loop, or 0 when this CPU has no instruction of that kind. */
double peak_gops(peak_kind k, int threads);

/* The roof a product of many rows with weights of type T runs against at
 * the kernel level in use: bf16 dot for BF16 (f32 FMA where the level
 * widens it), int8 dot for Q8_0 and the K-quants, f32 FMA otherwise. */
peak_kind peak_of_weights(ac_dtype t);
/* The roof of attention's scores and values: bf16 dot where its tiles
 * round their operands to bf16 (BF16 nonzero) and the level has the
 * instruction, else f32 FMA. */
peak_kind peak_of_attention(int bf16);
/* Seconds that FLOPS[k] operations of each kind take at the roofs of
 * THREADS threads (measured now, about 0.2 s a kind with work): the ideal
 * time of a stage of mixed arithmetic, each product at its own roof; 0
 * when the CPU has no instruction of a kind that has work. */
double peak_seconds(const double flops[PEAK_KINDS], int threads);

#endif
