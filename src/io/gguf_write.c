/* The GGUF writer (gguf_write.h); the keys and types are those gguf.c reads. */
#include "io/gguf_write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"
#include "io/tensor_file.h"

#define ALIGN 32
#define MAX_NAME 64 /* ggml's GGML_MAX_NAME, with its NUL */

enum { T_U8 = 0, T_U32 = 4, T_I32 = 5, T_STRING = 8, T_ARRAY = 9, T_U64 = 10, T_I64 = 11 };

typedef struct {
    unsigned char *p;
    size_t n, cap;
    int failed;
} bytes;

typedef struct {
    char *name;
    ac_dtype dtype;
    int ndim;
    int64_t shape[AC_MAX_DIMS];
} out_tensor;

typedef struct {
    char *name;
    const void *data;
    size_t size;
} out_file;

struct ac_gguf_out {
    bytes kv;         /* the caller's KVs, encoded */
    uint64_t n_kv;
    out_tensor *t;
    size_t n_t, cap_t;
    out_file *files;
    size_t n_files, cap_files;
};

static void put(bytes *b, const void *p, size_t n)
{
    if (b->failed) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        unsigned char *q = realloc(b->p, cap);
        if (!q) {
            b->failed = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void put_le(bytes *b, uint64_t v, int n)
{
    unsigned char c[8];
    for (int i = 0; i < n; i++) c[i] = (unsigned char)(v >> (8 * i));
    put(b, c, (size_t)n);
}

static void put_str(bytes *b, const char *s)
{
    size_t n = strlen(s);
    put_le(b, n, 8);
    put(b, s, n);
}

static void put_array_head(bytes *b, const char *key, uint32_t type, uint64_t n)
{
    put_str(b, key);
    put_le(b, T_ARRAY, 4);
    put_le(b, type, 4);
    put_le(b, n, 8);
}

ac_gguf_out *ac_gguf_out_new(void) { return ac_calloc(1, sizeof(ac_gguf_out)); }

void ac_gguf_out_free(ac_gguf_out *g)
{
    if (!g) return;
    free(g->kv.p);
    for (size_t i = 0; i < g->n_t; i++) free(g->t[i].name);
    free(g->t);
    for (size_t i = 0; i < g->n_files; i++) free(g->files[i].name);
    free(g->files);
    free(g);
}

static ac_status kv_done(ac_gguf_out *g)
{
    if (g->kv.failed) return ac_error(AC_ERR_NOMEM, "out of memory");
    g->n_kv++;
    return AC_OK;
}

ac_status ac_gguf_out_str(ac_gguf_out *g, const char *key, const char *value)
{
    put_str(&g->kv, key);
    put_le(&g->kv, T_STRING, 4);
    put_str(&g->kv, value);
    return kv_done(g);
}

ac_status ac_gguf_out_u32(ac_gguf_out *g, const char *key, uint32_t value)
{
    put_str(&g->kv, key);
    put_le(&g->kv, T_U32, 4);
    put_le(&g->kv, value, 4);
    return kv_done(g);
}

ac_status ac_gguf_out_strs(ac_gguf_out *g, const char *key, const char *const *values, size_t n)
{
    put_array_head(&g->kv, key, T_STRING, n);
    for (size_t i = 0; i < n; i++) put_str(&g->kv, values[i]);
    return kv_done(g);
}

/* Room for one more element in *P (N used, *CAP allocated). */
static int reserve(void **p, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap) return 1;
    size_t c = *cap ? 2 * *cap : 16;
    void *q = realloc(*p, c * elem);
    if (!q) return 0;
    *p = q;
    *cap = c;
    return 1;
}

int ac_gguf_out_has_file(const ac_gguf_out *g, const char *name)
{
    for (size_t i = 0; i < g->n_files; i++)
        if (strcmp(g->files[i].name, name) == 0) return 1;
    return 0;
}

ac_status ac_gguf_out_file(ac_gguf_out *g, const char *name, const void *data, size_t size)
{
    if (ac_gguf_out_has_file(g, name)) return ac_error(AC_ERR_ARG, "embedded file '%s' given twice", name);
    if (!reserve((void **)&g->files, g->n_files, &g->cap_files, sizeof *g->files))
        return ac_error(AC_ERR_NOMEM, "out of memory");
    char *copy = ac_strdup(name);
    if (!copy) return ac_error(AC_ERR_NOMEM, "out of memory");
    g->files[g->n_files++] = (out_file){copy, data, size};
    return AC_OK;
}

ac_status ac_gguf_out_tensor(ac_gguf_out *g, const char *name, ac_dtype dtype, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > AC_MAX_DIMS) return ac_error(AC_ERR_ARG, "tensor '%s': %d dimensions", name, ndim);
    uint64_t row = ndim ? (uint64_t)shape[ndim - 1] : 1;
    if (row % ac_dtype_block(dtype))
        return ac_error(AC_ERR_ARG, "tensor '%s': %s rows of %llu values are not whole blocks", name,
                        ac_dtype_name(dtype), (unsigned long long)row);
    if (!reserve((void **)&g->t, g->n_t, &g->cap_t, sizeof *g->t)) return ac_error(AC_ERR_NOMEM, "out of memory");
    out_tensor *t = &g->t[g->n_t];
    memset(t, 0, sizeof *t);
    if (!(t->name = ac_strdup(name))) return ac_error(AC_ERR_NOMEM, "out of memory");
    t->dtype = dtype;
    t->ndim = ndim;
    for (int k = 0; k < ndim; k++) t->shape[k] = shape[k];
    g->n_t++;
    return AC_OK;
}

static uint32_t ggml_type(ac_dtype t)
{
    switch (t) {
    case AC_DTYPE_F32: return 0;
    case AC_DTYPE_F16: return 1;
    case AC_DTYPE_Q8_0: return 8;
    case AC_DTYPE_Q4_K: return 12;
    case AC_DTYPE_Q6_K: return 14;
    case AC_DTYPE_I64: return 27;
    case AC_DTYPE_BF16: return 30;
    default: return 0;
    }
}

static uint64_t numel(const out_tensor *t)
{
    uint64_t n = 1;
    for (int k = 0; k < t->ndim; k++) n *= (uint64_t)t->shape[k];
    return n;
}

static uint64_t padded(uint64_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

/* The KVs the writer adds: embedded files, then names and shapes. The
 * files' data is written from the caller's buffers after the header bytes
 * before it (HEAD), to avoid a copy of large tokenizers. */
static void put_names(ac_gguf_out *g, bytes *b)
{
    put_array_head(b, "audiocpp.tensor_names", T_STRING, g->n_t);
    for (size_t i = 0; i < g->n_t; i++) put_str(b, g->t[i].name);
    put_array_head(b, "audiocpp.tensor_ranks", T_I32, g->n_t);
    uint64_t dims = 0;
    for (size_t i = 0; i < g->n_t; i++) put_le(b, (uint64_t)(uint32_t)g->t[i].ndim, 4), dims += (uint64_t)g->t[i].ndim;
    put_array_head(b, "audiocpp.tensor_shapes", T_I64, dims);
    for (size_t i = 0; i < g->n_t; i++)
        for (int k = 0; k < g->t[i].ndim; k++) put_le(b, (uint64_t)g->t[i].shape[k], 8);
}

static int name_taken(const ac_gguf_out *g, size_t upto, const char *name)
{
    for (size_t j = 0; j < upto; j++)
        if (strcmp(g->t[j].name, name) == 0) return 1;
    return 0;
}

static void put_infos(ac_gguf_out *g, bytes *b)
{
    uint64_t offset = 0;
    for (size_t i = 0; i < g->n_t; i++) {
        const out_tensor *t = &g->t[i];
        char phys[64];
        /* the logical names are unique (checked by the reader of the
         * source); a long one, or a repeat, takes "_audiocpp.<i>" */
        if (strlen(t->name) >= MAX_NAME || name_taken(g, i, t->name)) snprintf(phys, sizeof phys, "_audiocpp.%zu", i);
        else snprintf(phys, sizeof phys, "%s", t->name);
        put_str(b, phys);
        put_le(b, t->ndim ? (uint64_t)t->ndim : 1, 4);
        if (!t->ndim) put_le(b, 1, 8);
        for (int k = t->ndim - 1; k >= 0; k--) put_le(b, (uint64_t)t->shape[k], 8);
        put_le(b, ggml_type(t->dtype), 4);
        put_le(b, offset, 8);
        offset += padded(ac_dtype_bytes(t->dtype, numel(t)));
    }
}

static ac_status out(FILE *f, const char *path, const void *p, size_t n)
{
    if (n && fwrite(p, 1, n, f) != n)
        return ac_error(AC_ERR_IO, "%s: cannot write (%s)", path, strerror(errno ? errno : EIO));
    return AC_OK;
}

ac_status ac_gguf_out_write(ac_gguf_out *g, FILE *f, const char *path, ac_gguf_fill_fn fill, void *user)
{
    static const unsigned char zeros[ALIGN];
    bytes head = {0}, tail = {0};
    uint64_t n_kv = g->n_kv + 3 + (g->n_files ? 3 : 0);
    put(&head, "GGUF", 4);
    put_le(&head, 3, 4);
    put_le(&head, g->n_t, 8);
    put_le(&head, n_kv, 8);
    put(&head, g->kv.p, g->kv.n);
    uint64_t data = 0;
    if (g->n_files) {
        put_array_head(&head, "audiocpp.embedded_files.names", T_STRING, g->n_files);
        for (size_t i = 0; i < g->n_files; i++) put_str(&head, g->files[i].name);
        put_array_head(&head, "audiocpp.embedded_files.offsets", T_U64, g->n_files + 1);
        put_le(&head, 0, 8);
        for (size_t i = 0; i < g->n_files; i++) put_le(&head, data += g->files[i].size, 8);
        put_array_head(&head, "audiocpp.embedded_files.data", T_U8, data);
    }
    put_names(g, &tail);
    put_infos(g, &tail);
    ac_status s = head.failed || tail.failed ? ac_error(AC_ERR_NOMEM, "out of memory") : AC_OK;
    if (!s) s = out(f, path, head.p, head.n);
    for (size_t i = 0; !s && i < g->n_files; i++) s = out(f, path, g->files[i].data, g->files[i].size);
    if (!s) s = out(f, path, tail.p, tail.n);
    uint64_t header = head.n + data + tail.n;
    if (!s) s = out(f, path, zeros, (size_t)(padded(header) - header));
    free(head.p);
    free(tail.p);
    unsigned char *buf = NULL;
    size_t cap = 0;
    for (size_t i = 0; !s && i < g->n_t; i++) {
        uint64_t n = ac_dtype_bytes(g->t[i].dtype, numel(&g->t[i]));
        if (n > cap) {
            free(buf);
            cap = (size_t)n;
            if (!(buf = ac_malloc(cap))) {
                s = ac_error(AC_ERR_NOMEM, "%s: no memory for tensor '%s' (%llu bytes)", path, g->t[i].name,
                             (unsigned long long)n);
                break;
            }
        }
        s = fill(user, i, buf, (size_t)n);
        if (!s) s = out(f, path, buf, (size_t)n);
        if (!s) s = out(f, path, zeros, (size_t)(padded(n) - n));
    }
    free(buf);
    return s;
}
