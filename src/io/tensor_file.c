#define _POSIX_C_SOURCE 200809L
#include "io/tensor_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/mem.h"
#include "io/config.h"

const char *ac_shape_str(const int64_t *shape, int ndim, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < ndim && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, i ? ", %" PRId64 : "%" PRId64, shape[i]);
    if (n < size) snprintf(buf + n, size - n, "]");
    return buf;
}

char *ac_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = ac_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

ac_tensor_file *ac_tensor_file_new(const char *name)
{
    ac_tensor_file *f = ac_calloc(1, sizeof *f);
    if (f && !(f->path = ac_strdup(name))) {
        free(f);
        f = NULL;
    }
    return f;
}

void ac_tensor_file_free_table(ac_tensor_file *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->n_tensors; i++) free(f->tensors[i].name);
    for (size_t i = 0; i < f->n_meta; i++) {
        free(f->meta[i].key);
        free(f->meta[i].value);
    }
    for (size_t i = 0; i < f->n_files; i++) free(f->files[i].name);
    for (size_t i = 0; i < f->n_owned; i++) ac_free_aligned(f->owned[i]);
    free(f->owned);
    ac_config_free(f->values);
    free(f->tensors);
    free(f->meta);
    free(f->files);
    free(f->path);
    free(f);
}

static int by_offset(const void *a, const void *b)
{
    const ac_tensor *x = *(const ac_tensor *const *)a, *y = *(const ac_tensor *const *)b;
    uintptr_t ox = (uintptr_t)x->data, oy = (uintptr_t)y->data;
    return ox < oy ? -1 : ox > oy;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const ac_tensor *const *)a)->name, (*(const ac_tensor *const *)b)->name);
}

/* Every tensor, sorted by COMPARE, in a new array. */
static const ac_tensor **sorted(const ac_tensor_file *f, int (*compare)(const void *, const void *))
{
    const ac_tensor **v = ac_calloc(f->n_tensors ? f->n_tensors : 1, sizeof *v);
    if (!v) return NULL;
    for (size_t i = 0; i < f->n_tensors; i++) v[i] = &f->tensors[i];
    qsort(v, f->n_tensors, sizeof *v, compare);
    return v;
}

ac_status ac_tensor_file_check_names(ac_tensor_file *f)
{
    const ac_tensor **v = sorted(f, by_name);
    if (!v) return AC_ERR_NOMEM;
    ac_status s = AC_OK;
    for (size_t i = 1; i < f->n_tensors && !s; i++)
        if (strcmp(v[i - 1]->name, v[i]->name) == 0)
            s = ac_error(AC_ERR_FORMAT, "duplicate tensor '%s' (the name appears twice in the header)", v[i]->name);
    free(v);
    return s;
}

ac_status ac_tensor_file_check(ac_tensor_file *f)
{
    /* names first: a name given twice usually repeats its offsets too, and
     * is better reported as what it is than as an overlap */
    AC_TRY(ac_tensor_file_check_names(f));
    const ac_tensor **v = sorted(f, by_offset);
    if (!v) return AC_ERR_NOMEM;
    ac_status s = AC_OK;
    /* each non-empty tensor must start at or after the furthest end so far
     * (empty tensors in between take no bytes and prove nothing) */
    const ac_tensor *furthest = NULL;
    for (size_t i = 0; i < f->n_tensors && !s; i++) {
        if (!v[i]->nbytes) continue;
        if (furthest && (uintptr_t)v[i]->data < (uintptr_t)furthest->data + furthest->nbytes)
            s = ac_error(AC_ERR_FORMAT, "tensors '%s' and '%s' overlap in the data section",
                         furthest->name, v[i]->name);
        if (!furthest || (uintptr_t)v[i]->data + v[i]->nbytes > (uintptr_t)furthest->data + furthest->nbytes)
            furthest = v[i];
    }
    free(v);
    return s;
}

/* A zip (whose 9th byte, the compression method, cannot be the '{' that
 * starts a safetensors header), or the pickle of torch before 1.6 (PROTO 2
 * and its magic number), which the torch parser names and refuses. */
static int is_torch(const unsigned char *b, size_t size)
{
    if (size >= 4 && (memcmp(b, "PK\3\4", 4) == 0 || memcmp(b, "PK\5\6", 4) == 0)) return size < 9 || b[8] != '{';
    return size >= 4 && memcmp(b, "\x80\x02\x8a\x0a", 4) == 0;
}

ac_status ac_tensor_file_open(const char *path, ac_tensor_file **out)
{
    *out = NULL;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return ac_error(AC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return ac_error(AC_ERR_IO, "%s: not a regular file", path);
    }
    size_t size = (size_t)sb.st_size;
    void *map = NULL;
    if (size > 0) {
        map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            close(fd);
            return ac_error(AC_ERR_IO, "%s: cannot map: %s", path, strerror(errno));
        }
    }
    close(fd);
    const unsigned char *buf = map ? map : (const void *)"";
    ac_status s = size >= 4 && memcmp(buf, "GGUF", 4) == 0 ? ac_gguf_parse(buf, size, path, out)
                  : is_torch(buf, size)                   ? ac_torch_parse(buf, size, path, out)
                                                          : ac_safetensors_parse(buf, size, path, out);
    if (s) {
        if (map) munmap(map, size);
        return s;
    }
    (*out)->map = map;
    (*out)->map_size = size;
    return AC_OK;
}

const ac_tensor *ac_tensor_file_find(const ac_tensor_file *f, const char *name)
{
    for (size_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0) return &f->tensors[i];
    return NULL;
}

const char *ac_tensor_file_meta(const ac_tensor_file *f, const char *key)
{
    for (size_t i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta[i].key, key) == 0) return f->meta[i].value;
    return NULL;
}

const ac_embedded_file *ac_tensor_file_embedded(const ac_tensor_file *f, const char *name)
{
    for (size_t i = 0; i < f->n_files; i++)
        if (strcmp(f->files[i].name, name) == 0) return &f->files[i];
    return NULL;
}

const struct ac_config *ac_tensor_file_values(const ac_tensor_file *f) { return f->values; }

void ac_tensor_file_close(ac_tensor_file *f)
{
    if (!f) return;
    if (f->map) munmap(f->map, f->map_size);
    ac_tensor_file_free_table(f);
}
