/* safetensors files over mmap. The header is untrusted: it is validated
 * against the file before any tensor is exposed. */
#ifndef AC_IO_SAFETENSORS_H
#define AC_IO_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "audioc.h"

#define AC_MAX_DIMS 8
#define AC_ST_MAX_HEADER (100u << 20) /* the format's own limit: 100 MB */

typedef enum {
    AC_DTYPE_F32,
    AC_DTYPE_F16,
    AC_DTYPE_BF16,
    AC_DTYPE_I64,
    AC_DTYPE_COUNT,
} ac_dtype;

const char *ac_dtype_name(ac_dtype t);
size_t ac_dtype_size(ac_dtype t);

typedef struct ac_st_tensor {
    char *name;
    ac_dtype dtype;
    int ndim;
    int64_t shape[AC_MAX_DIMS];
    int64_t numel;
    const void *data;  /* inside the mapping; not necessarily aligned */
    size_t nbytes;
} ac_st_tensor;

typedef struct ac_st_meta {
    char *key, *value;
} ac_st_meta;

typedef struct ac_safetensors {
    char *path;
    void *map;
    size_t map_size;
    ac_st_tensor *tensors;  /* in header order */
    size_t n_tensors;
    ac_st_meta *meta;       /* __metadata__ */
    size_t n_meta;
} ac_safetensors;

/* Opens and validates PATH. On error nothing is left open. */
ac_status ac_st_open(const char *path, ac_safetensors **out);
/* Parses a file image already in memory (fuzzing, tests); BUF must stay
 * alive as long as the result. NAME is used in messages. */
ac_status ac_st_parse(const void *buf, size_t size, const char *name, ac_safetensors **out);
const ac_st_tensor *ac_st_find(const ac_safetensors *st, const char *name);
const char *ac_st_meta_get(const ac_safetensors *st, const char *key);
void ac_st_close(ac_safetensors *st);

/* "[3, 4]" into BUF. */
const char *ac_shape_str(const int64_t *shape, int ndim, char *buf, size_t size);

#endif
