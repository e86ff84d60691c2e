/* Fuzz the GGUF parser: whatever it accepts must describe tensors and
 * embedded files that lie inside the buffer and match their shapes, and
 * quantized tensors (Q8_0, Q4_K, Q6_K) must convert from where they lie. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/tensor_file.h"
#include "tensor/quant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ac_tensor_file *f = NULL;
    if (ac_gguf_parse(data, size, "fuzz.gguf", &f) != AC_OK) return 0;
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < f->n_tensors; i++) {
        const ac_tensor *t = &f->tensors[i];
        const uint8_t *p = t->data;
        /* the parser promised these; a violation is a bug, not bad input */
        if (p < data || p > data + size || t->nbytes > (size_t)(data + size - p)) abort();
        if (t->ndim < 0 || t->ndim > AC_MAX_DIMS) abort();
        /* the parser bounds the product of the non-zero dims */
        uint64_t nonzero = 1;
        int empty = 0;
        for (int k = 0; k < t->ndim; k++) {
            uint64_t v = (uint64_t)t->shape[k];
            if (t->shape[k] < 0 || (v && nonzero > UINT64_MAX / 8 / v)) abort();
            if (v) nonzero *= v;
            else empty = 1;
        }
        if (t->numel != (int64_t)(empty ? 0 : nonzero)) abort();
        if (t->nbytes != ac_dtype_bytes(t->dtype, (uint64_t)t->numel)) abort();
        if (ac_tensor_file_find(f, t->name) != t) abort();
        if (t->nbytes) sink ^= p[0] ^ p[t->nbytes - 1];
        /* quantized blocks as they lie: scales scanned, a few rows converted */
        if (ac_dtype_block(t->dtype) > 1 && t->numel) {
            (void)ac_quant_bad_scale(t->dtype, p, (size_t)t->numel);
            size_t n = (size_t)t->numel < 4096 ? (size_t)t->numel : 4096;
            n -= n % ac_dtype_block(t->dtype);
            static float row[4096];
            if (ac_dequantize_row(t->dtype, p, row, n)) abort();
            if (n) sink ^= (uint8_t)(row[n - 1] != row[n - 1]);
        }
    }
    for (size_t i = 0; i < f->n_files; i++) {
        const ac_embedded_file *e = &f->files[i];
        const uint8_t *p = e->data;
        if (p < data || p > data + size || e->size > (size_t)(data + size - p)) abort();
        if (ac_tensor_file_embedded(f, e->name) != e) abort();
        if (e->size) sink ^= p[0] ^ p[e->size - 1];
    }
    for (size_t i = 0; i < f->n_meta; i++) sink ^= (uint8_t)(strlen(f->meta[i].key) + strlen(f->meta[i].value));
    (void)ac_tensor_file_meta(f, "general.architecture");
    (void)sink;
    ac_tensor_file_close(f);
    return 0;
}
