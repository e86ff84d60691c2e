/* Element types of weights as checkpoints store them. The quantized ones
 * are ggml's block layouts (tensor/quant.h), so GGUF files are used where
 * they lie. */
#ifndef AC_TENSOR_DTYPE_H
#define AC_TENSOR_DTYPE_H

#include <stdint.h>

typedef enum {
    AC_DTYPE_F32,
    AC_DTYPE_F16,
    AC_DTYPE_BF16,
    AC_DTYPE_I64,
    AC_DTYPE_Q8_0,   /* blocks of 32: an f16 scale and 32 int8 (34 bytes) */
    AC_DTYPE_Q4_K,   /* super-blocks of 256: 8 sub-blocks of 32 4-bit values, 6-bit scales and mins (144 bytes) */
    AC_DTYPE_Q6_K,   /* super-blocks of 256: 16 sub-blocks of 16 6-bit values, 8-bit scales (210 bytes) */
    AC_DTYPE_COUNT,
} ac_dtype;

const char *ac_dtype_name(ac_dtype t);
/* Elements per block: 1 for the plain types, 32 for Q8_0, 256 for the K-quants. */
uint64_t ac_dtype_block(ac_dtype t);
/* Bytes of N elements (N must be a multiple of the block); 0 if not. */
uint64_t ac_dtype_bytes(ac_dtype t, uint64_t n);
/* A type of weights that ac_mat products take (F32, F16, BF16 and the quantized ones). */
int ac_dtype_is_matrix(ac_dtype t);

#endif
