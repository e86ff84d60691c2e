/* A file of named tensors (safetensors, GGUF or torch.save) mapped into memory. The
 * parsers validate the untrusted header against the file before any tensor
 * is exposed; what they build is this one table. */
#ifndef AC_IO_TENSOR_FILE_H
#define AC_IO_TENSOR_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "audioc.h"
#include "tensor/dtype.h"

#define AC_MAX_DIMS 8

/* Shapes are written as PyTorch does: the last dimension is contiguous. */
typedef struct ac_tensor {
    char *name;
    ac_dtype dtype;
    int ndim;
    int64_t shape[AC_MAX_DIMS];
    int64_t numel;
    const void *data;  /* inside the mapping; not necessarily aligned */
    size_t nbytes;
} ac_tensor;

typedef struct ac_meta {
    char *key, *value;
} ac_meta;

/* A file carried inside the container (GGUF packages embed config.json,
 * tokenizer.model, ...). */
typedef struct ac_embedded_file {
    char *name;
    const void *data;  /* inside the mapping */
    size_t size;
} ac_embedded_file;

typedef struct ac_tensor_file {
    char *path;
    void *map;
    size_t map_size;
    ac_tensor *tensors;      /* in header order */
    size_t n_tensors;
    ac_meta *meta;           /* string metadata */
    size_t n_meta;
    ac_embedded_file *files;
    size_t n_files;
    void **owned;            /* tensors that had to be copied (torch views, widened types) */
    size_t n_owned;
    struct ac_config *values; /* torch: the pickle's plain values; else NULL */
} ac_tensor_file;

/* Opens and validates PATH, safetensors, GGUF or a torch.save zip (told
 * apart by the magic bytes). On error nothing is left open. */
ac_status ac_tensor_file_open(const char *path, ac_tensor_file **out);
/* The parsers, over a file image in memory that outlives the result
 * (fuzzing, tests). NAME is used in messages. */
ac_status ac_safetensors_parse(const void *buf, size_t size, const char *name, ac_tensor_file **out);
ac_status ac_gguf_parse(const void *buf, size_t size, const char *name, ac_tensor_file **out);
/* torch.save archives: a tensor directly in the top-level dict is named by
 * its key, one deeper (a state dict such as medium.pt's model_state_dict)
 * by its path below that dict ("encoder.conv1.weight"). */
ac_status ac_torch_parse(const void *buf, size_t size, const char *name, ac_tensor_file **out);

const ac_tensor *ac_tensor_file_find(const ac_tensor_file *f, const char *name);
const char *ac_tensor_file_meta(const ac_tensor_file *f, const char *key);
const ac_embedded_file *ac_tensor_file_embedded(const ac_tensor_file *f, const char *name);
/* The plain values of a torch file as a config, read with the io/config.h
 * getters ("dims" -> "n_mels"); a tensor appears as {"tensor": NAME}.
 * NULL for other formats. */
const struct ac_config *ac_tensor_file_values(const ac_tensor_file *f);
void ac_tensor_file_close(ac_tensor_file *f);

/* For parsers: a new empty table named NAME, the checks every table must
 * pass (no two tensors share bytes, names are unique; torch views may share
 * bytes, so they pass only the second), and freeing a table that failed to
 * parse. */
ac_tensor_file *ac_tensor_file_new(const char *name);
ac_status ac_tensor_file_check(ac_tensor_file *f);
ac_status ac_tensor_file_check_names(ac_tensor_file *f);
void ac_tensor_file_free_table(ac_tensor_file *f);
char *ac_strdup(const char *s);

/* "[3, 4]" into BUF. */
const char *ac_shape_str(const int64_t *shape, int ndim, char *buf, size_t size);

#endif
