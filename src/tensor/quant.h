/* The quantized weight types' block layouts, as ggml defines them (so a
 * GGUF file's tensors are used where they lie), and the conversions of
 * rows between them and f32. All multi-byte fields are little-endian and
 * the structs are byte-packed (every field is 1 or 2 bytes wide), so a
 * pointer into a mapped file may be read through them at any alignment
 * only with memcpy: the kernels read fields byte-wise.
 *
 * Q8_0:  value = d * qs[i]
 * Q4_K:  8 sub-blocks of 32; sub-block j has a 6-bit scale sc[j] and a
 *        6-bit min m[j] packed in scales[12] (j < 4: sc = scales[j] & 63,
 *        m = scales[j+4] & 63; j >= 4: sc = (scales[j+4] & 15) |
 *        ((scales[j-4] >> 6) << 4), m = (scales[j+4] >> 4) | ((scales[j] >> 6) << 4));
 *        value = d * sc[j] * q - dmin * m[j], q the 4-bit value: qs holds
 *        sub-blocks in pairs, 32 bytes per pair, the low nibbles the first
 *        of the pair and the high nibbles the second.
 * Q6_K:  16 sub-blocks of 16 with int8 scales; q (0..63) from 4 low bits
 *        in ql and 2 high bits in qh, value = d * scales[j] * (q - 32); per
 *        half of 128 values: ql[0..63], qh[0..31]; value l (0..31) of the
 *        four quarters takes ql[l] & 15, ql[l+32] & 15, ql[l] >> 4,
 *        ql[l+32] >> 4 and qh[l] bits 0-1, 2-3, 4-5, 6-7. */
#ifndef AC_TENSOR_QUANT_H
#define AC_TENSOR_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include "tensor/dtype.h"

#define AC_QK8_0 32
#define AC_QK_K 256

typedef struct {
    uint16_t d; /* f16 scale */
    int8_t qs[AC_QK8_0];
} ac_block_q8_0;

typedef struct {
    uint16_t d, dmin; /* f16 super-block scales of the sub-blocks' scales and mins */
    uint8_t scales[12];
    uint8_t qs[AC_QK_K / 2];
} ac_block_q4_k;

typedef struct {
    uint8_t ql[AC_QK_K / 2];
    uint8_t qh[AC_QK_K / 4];
    int8_t scales[AC_QK_K / 16];
    uint16_t d; /* f16 */
} ac_block_q6_k;

_Static_assert(sizeof(ac_block_q8_0) == 34, "Q8_0 block is 34 bytes");
_Static_assert(sizeof(ac_block_q4_k) == 144, "Q4_K block is 144 bytes");
_Static_assert(sizeof(ac_block_q6_k) == 210, "Q6_K block is 210 bytes");

/* sub-block J's 6-bit scale and min from a Q4_K block's scales[12] */
static inline void ac_q4_k_scale_min(const uint8_t *s, int j, int *sc, int *m)
{
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/* Activations as products with Q8_0 and K-quant weights take them: per block of 32
 * values, d = amax / 127 in f32, qs = x * (1/d) rounded to nearest even,
 * and sum = the sum of qs (for kernels that offset the int8 operand by
 * 128 to make it unsigned). */
typedef struct ac_block_q8_act {
    float d;
    int32_t sum;
    int8_t qs[AC_QK8_0];
} ac_block_q8_act;

/* N values of X (N a multiple of 32) as N/32 activation blocks. */
void ac_quantize_q8_act(const float *x, ac_block_q8_act *out, size_t n);
/* N values of X quantized as ac_quantize_q8_act does, widened back to f32
 * (d * qs): for f32 kernels computing with the same activations. */
void ac_round_q8_act(const float *x, float *out, size_t n);
/* N values of X rounded to bf16 (nearest even) and widened back to f32, as
 * products with BF16 weights take activations. */
void ac_round_bf16_act(const float *x, float *out, size_t n);

/* N values of X into type T (F32, F16, BF16, Q8_0, Q4_K, Q6_K), N a
 * multiple of T's block. Returns 0, or -1 for a type it cannot write. The
 * K-quants' scales are chosen as quant_k.c says (not ggml's search). */
int ac_quantize_row(ac_dtype t, const float *x, void *out, size_t n);
/* N values of type T at IN (any alignment) as f32. Returns 0, or -1 for a
 * type it cannot read. */
int ac_dequantize_row(ac_dtype t, const void *in, float *out, size_t n);
/* N values of type FROM at IN (any alignment) as type TO at OUT, through
 * f32 a piece at a time (the one conversion of stored weights: a load's
 * and audioc quantize's). N a multiple of both blocks; -1 otherwise, or
 * for a type it cannot read or write. */
int ac_convert_row(ac_dtype from, const void *in, ac_dtype to, void *out, size_t n);
/* The first block of the N values of quantized type T at IN whose f16
 * scale (Q4_K: or min scale) is NaN or infinite, or -1 when none is. */
int64_t ac_quant_bad_scale(ac_dtype t, const void *in, size_t n);

#endif
