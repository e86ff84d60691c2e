/* The K-quants' quantizers, behind ac_quantize_row (tensor/quant.h). N is a
 * multiple of 256. */
#ifndef AC_TENSOR_QUANT_K_H
#define AC_TENSOR_QUANT_K_H

#include <stddef.h>

void ac_quantize_q4_k(const float *x, void *out, size_t n);
void ac_quantize_q6_k(const float *x, void *out, size_t n);

#endif
