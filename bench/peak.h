/* The machine's arithmetic roofs: register-only loops of the widest
 * instruction of each kind the kernel level in use has (ac_kernels_simd:
 * the CPU's, or lower where AUDIOC_SIMD caps it), on 1..N threads at once. Shared
 * by bench_roof (the table) and bench_products (each product as a fraction
 * of its roof, measured in the same run). */
#ifndef AUDIOC_BENCH_PEAK_H
#define AUDIOC_BENCH_PEAK_H

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

#endif
