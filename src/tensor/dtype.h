/* Element types of weights as checkpoints store them. */
#ifndef AC_TENSOR_DTYPE_H
#define AC_TENSOR_DTYPE_H

#include <stdint.h>

typedef enum {
    AC_DTYPE_F32,
    AC_DTYPE_F16,
    AC_DTYPE_BF16,
    AC_DTYPE_I64,
    AC_DTYPE_Q8_0,   /* blocks of 32: an f16 scale and 32 int8 (34 bytes) */
    AC_DTYPE_COUNT,
} ac_dtype;

const char *ac_dtype_name(ac_dtype t);
/* Bytes of N elements (for Q8_0, N must be a multiple of 32); 0 if not. */
uint64_t ac_dtype_bytes(ac_dtype t, uint64_t n);

#endif
