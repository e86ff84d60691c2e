/* Fuzz the safetensors header parser: whatever it accepts must describe
 * tensors that lie inside the buffer and match their shapes. */
#include <stdint.h>
#include <stdlib.h>

#include "io/tensor_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ac_tensor_file *st = NULL;
    if (ac_safetensors_parse(data, size, "fuzz.safetensors", &st) != AC_OK) return 0;
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < st->n_tensors; i++) {
        const ac_tensor *t = &st->tensors[i];
        const uint8_t *p = t->data;
        /* the parser promised these; a violation is a bug, not bad input */
        if (p < data || p + t->nbytes > data + size) abort();
        if (t->nbytes != ac_dtype_bytes(t->dtype, (uint64_t)t->numel)) abort();
        if (ac_tensor_file_find(st, t->name) == NULL) abort();
        if (t->dtype != AC_DTYPE_I64 && t->nbytes) sink ^= p[0] ^ p[t->nbytes - 1];
    }
    (void)ac_tensor_file_meta(st, "format");
    (void)sink;
    ac_tensor_file_close(st);
    return 0;
}
