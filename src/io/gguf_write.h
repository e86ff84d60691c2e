/* Writing a GGUF file (v3, little-endian) in the layout src/io/gguf.c
 * reads: the KVs given, the embedded files
 * (audiocpp.embedded_files.{names,offsets,data}), the logical names and
 * exact shapes (audiocpp.tensor_names/_ranks/_shapes), then the tensor
 * infos and the data section, each tensor padded to 32 bytes. A logical
 * name of 64 bytes or more (ggml's GGML_MAX_NAME), or one already taken,
 * gets the physical name "_audiocpp.<index>", as the ggml runtime's
 * converter does.
 *
 *     ac_gguf_out *g = ac_gguf_out_new();
 *     ac_gguf_out_str(g, "general.architecture", "audiocpp");
 *     ac_gguf_out_file(g, "config.json", bytes, n);     (bytes live until the write)
 *     ac_gguf_out_tensor(g, "enc.weight", AC_DTYPE_Q8_0, 2, shape);
 *     ac_gguf_out_write(g, f, "out.gguf", fill, user);  (fill gives each tensor's bytes)
 *     ac_gguf_out_free(g); */
#ifndef AC_IO_GGUF_WRITE_H
#define AC_IO_GGUF_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "audioc.h"
#include "tensor/dtype.h"

typedef struct ac_gguf_out ac_gguf_out;

ac_gguf_out *ac_gguf_out_new(void);
void ac_gguf_out_free(ac_gguf_out *g);

/* KVs, written in the order given, before the embedded files and names. */
ac_status ac_gguf_out_str(ac_gguf_out *g, const char *key, const char *value);
ac_status ac_gguf_out_u32(ac_gguf_out *g, const char *key, uint32_t value);
ac_status ac_gguf_out_strs(ac_gguf_out *g, const char *key, const char *const *values, size_t n);

/* An embedded file NAME of SIZE bytes at DATA, which must stay valid until
 * ac_gguf_out_write; a name given twice is refused. */
ac_status ac_gguf_out_file(ac_gguf_out *g, const char *name, const void *data, size_t size);
int ac_gguf_out_has_file(const ac_gguf_out *g, const char *name);

/* The next tensor: its logical NAME, type and PyTorch-order shape (the
 * last dimension contiguous; a quantized type's last dimension must be a
 * multiple of its block). */
ac_status ac_gguf_out_tensor(ac_gguf_out *g, const char *name, ac_dtype dtype, int ndim, const int64_t *shape);

/* Fills DST with the BYTES of tensor I (in the order added). */
typedef ac_status (*ac_gguf_fill_fn)(void *user, size_t i, void *dst, size_t bytes);

/* Writes the whole file to F; PATH names it in messages. */
ac_status ac_gguf_out_write(ac_gguf_out *g, FILE *f, const char *path, ac_gguf_fill_fn fill, void *user);

#endif
