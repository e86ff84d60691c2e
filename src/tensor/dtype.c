#include "tensor/dtype.h"

#include "tensor/quant.h"

static const char *const names[AC_DTYPE_COUNT] = {
    [AC_DTYPE_F32] = "F32",   [AC_DTYPE_F16] = "F16",   [AC_DTYPE_BF16] = "BF16", [AC_DTYPE_I64] = "I64",
    [AC_DTYPE_Q8_0] = "Q8_0", [AC_DTYPE_Q4_K] = "Q4_K", [AC_DTYPE_Q6_K] = "Q6_K",
};

const char *ac_dtype_name(ac_dtype t) { return t < AC_DTYPE_COUNT ? names[t] : "?"; }

uint64_t ac_dtype_block(ac_dtype t)
{
    switch (t) {
    case AC_DTYPE_Q8_0: return AC_QK8_0;
    case AC_DTYPE_Q4_K:
    case AC_DTYPE_Q6_K: return AC_QK_K;
    default: return 1;
    }
}

uint64_t ac_dtype_bytes(ac_dtype t, uint64_t n)
{
    uint64_t blk = ac_dtype_block(t);
    if (n % blk) return 0;
    switch (t) {
    case AC_DTYPE_F32: return n * 4;
    case AC_DTYPE_F16:
    case AC_DTYPE_BF16: return n * 2;
    case AC_DTYPE_I64: return n * 8;
    case AC_DTYPE_Q8_0: return n / blk * sizeof(ac_block_q8_0);
    case AC_DTYPE_Q4_K: return n / blk * sizeof(ac_block_q4_k);
    case AC_DTYPE_Q6_K: return n / blk * sizeof(ac_block_q6_k);
    default: return 0;
    }
}

int ac_dtype_is_matrix(ac_dtype t) { return t < AC_DTYPE_COUNT && t != AC_DTYPE_I64; }
