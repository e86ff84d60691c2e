#include "tensor/dtype.h"

static const char *const names[AC_DTYPE_COUNT] = {
    [AC_DTYPE_F32] = "F32", [AC_DTYPE_F16] = "F16", [AC_DTYPE_BF16] = "BF16",
    [AC_DTYPE_I64] = "I64", [AC_DTYPE_Q8_0] = "Q8_0",
};

const char *ac_dtype_name(ac_dtype t) { return t < AC_DTYPE_COUNT ? names[t] : "?"; }

uint64_t ac_dtype_bytes(ac_dtype t, uint64_t n)
{
    switch (t) {
    case AC_DTYPE_F32: return n * 4;
    case AC_DTYPE_F16:
    case AC_DTYPE_BF16: return n * 2;
    case AC_DTYPE_I64: return n * 8;
    case AC_DTYPE_Q8_0: return n % 32 ? 0 : n / 32 * 34;
    default: return 0;
    }
}
