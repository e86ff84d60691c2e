#define _POSIX_C_SOURCE 200809L
#include "io/safetensors.h"

#include <cjson/cJSON.h>
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

static const struct {
    const char *name;
    size_t size;
} dtypes[AC_DTYPE_COUNT] = {
    [AC_DTYPE_F32] = {"F32", 4},
    [AC_DTYPE_F16] = {"F16", 2},
    [AC_DTYPE_BF16] = {"BF16", 2},
    [AC_DTYPE_I64] = {"I64", 8},
};

const char *ac_dtype_name(ac_dtype t) { return t < AC_DTYPE_COUNT ? dtypes[t].name : "?"; }
size_t ac_dtype_size(ac_dtype t) { return t < AC_DTYPE_COUNT ? dtypes[t].size : 0; }

const char *ac_shape_str(const int64_t *shape, int ndim, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < ndim && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, i ? ", %" PRId64 : "%" PRId64, shape[i]);
    if (n < size) snprintf(buf + n, size - n, "]");
    return buf;
}

static void free_contents(ac_safetensors *st)
{
    for (size_t i = 0; i < st->n_tensors; i++) free(st->tensors[i].name);
    for (size_t i = 0; i < st->n_meta; i++) {
        free(st->meta[i].key);
        free(st->meta[i].value);
    }
    free(st->tensors);
    free(st->meta);
    free(st->path);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = ac_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static ac_status parse_metadata(ac_safetensors *st, const cJSON *obj)
{
    if (!cJSON_IsObject(obj))
        return ac_error(AC_ERR_FORMAT, "__metadata__ is not an object");
    size_t n = (size_t)cJSON_GetArraySize(obj);
    st->meta = ac_calloc(n, sizeof *st->meta);
    if (!st->meta) return AC_ERR_NOMEM;
    for (const cJSON *it = obj->child; it; it = it->next) {
        if (!cJSON_IsString(it))
            return ac_error(AC_ERR_FORMAT, "__metadata__ value '%s' is not a string", it->string);
        ac_st_meta *m = &st->meta[st->n_meta++];
        m->key = dup_str(it->string);
        m->value = dup_str(it->valuestring);
        if (!m->key || !m->value) return AC_ERR_NOMEM;
    }
    return AC_OK;
}

/* A JSON number that is an exact non-negative integer below 2^53. */
static int get_u64(const cJSON *v, uint64_t *out)
{
    if (!cJSON_IsNumber(v)) return 0;
    double d = v->valuedouble;
    if (!(d >= 0 && d <= 9007199254740992.0) || d != (double)(uint64_t)d) return 0;
    *out = (uint64_t)d;
    return 1;
}

static ac_status parse_tensor(ac_st_tensor *t, const cJSON *desc, uint64_t data_size)
{
    const char *name = desc->string;
    if (!cJSON_IsObject(desc))
        return ac_error(AC_ERR_FORMAT, "tensor '%s': entry is not an object", name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(desc, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(desc, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(desc, "data_offsets");
    if (!cJSON_IsString(dt) || !cJSON_IsArray(shape) || !cJSON_IsArray(offs))
        return ac_error(AC_ERR_FORMAT, "tensor '%s': needs dtype, shape and data_offsets", name);
    t->dtype = AC_DTYPE_COUNT;
    for (int i = 0; i < AC_DTYPE_COUNT; i++)
        if (strcmp(dt->valuestring, dtypes[i].name) == 0) t->dtype = (ac_dtype)i;
    if (t->dtype == AC_DTYPE_COUNT)
        return ac_error(AC_ERR_UNSUPPORTED, "tensor '%s': dtype '%s' is not supported (F32, F16, BF16, I64)",
                        name, dt->valuestring);
    int ndim = cJSON_GetArraySize(shape);
    if (ndim > AC_MAX_DIMS)
        return ac_error(AC_ERR_FORMAT, "tensor '%s': %d dimensions (at most %d)", name, ndim, AC_MAX_DIMS);
    t->ndim = ndim;
    uint64_t numel = 1;
    int i = 0;
    for (const cJSON *d = shape->child; d; d = d->next, i++) {
        uint64_t v;
        if (!get_u64(d, &v))
            return ac_error(AC_ERR_FORMAT, "tensor '%s': shape entry %d is not a non-negative integer", name, i);
        t->shape[i] = (int64_t)v;
        if (v && numel > UINT64_MAX / 8 / v)
            return ac_error(AC_ERR_FORMAT, "tensor '%s': shape is too large", name);
        numel *= v;
    }
    uint64_t b, e;
    if (cJSON_GetArraySize(offs) != 2 || !get_u64(offs->child, &b) || !get_u64(offs->child->next, &e))
        return ac_error(AC_ERR_FORMAT, "tensor '%s': data_offsets must be two non-negative integers", name);
    if (b > e)
        return ac_error(AC_ERR_FORMAT, "tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] end before they begin",
                        name, b, e);
    if (e > data_size)
        return ac_error(AC_ERR_FORMAT,
                        "tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] lie outside the %" PRIu64
                        "-byte data section", name, b, e, data_size);
    uint64_t want = numel * dtypes[t->dtype].size;
    if (e - b != want) {
        char sh[128];
        return ac_error(AC_ERR_FORMAT,
                        "tensor '%s': %s %s needs %" PRIu64 " bytes but data_offsets span %" PRIu64,
                        name, dtypes[t->dtype].name, ac_shape_str(t->shape, ndim, sh, sizeof sh), want, e - b);
    }
    t->numel = (int64_t)numel;
    t->nbytes = (size_t)want;
    t->data = (const void *)(uintptr_t)b; /* relative until the base is known */
    t->name = dup_str(name);
    return t->name ? AC_OK : AC_ERR_NOMEM;
}

static int by_offset(const void *a, const void *b)
{
    const ac_st_tensor *x = *(const ac_st_tensor *const *)a, *y = *(const ac_st_tensor *const *)b;
    uintptr_t ox = (uintptr_t)x->data, oy = (uintptr_t)y->data;
    return ox < oy ? -1 : ox > oy;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const ac_st_tensor *const *)a)->name, (*(const ac_st_tensor *const *)b)->name);
}

/* No two tensors share bytes, and no name appears twice. */
static ac_status check_layout(ac_safetensors *st)
{
    size_t n = st->n_tensors;
    const ac_st_tensor **v = ac_calloc(n, sizeof *v);
    if (!v) return AC_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) v[i] = &st->tensors[i];
    ac_status s = AC_OK;
    qsort(v, n, sizeof *v, by_offset);
    /* each non-empty tensor must start at or after the furthest end so far
     * (empty tensors in between take no bytes and prove nothing) */
    const ac_st_tensor *furthest = NULL;
    for (size_t i = 0; i < n && !s; i++) {
        if (!v[i]->nbytes) continue;
        if (furthest && (uintptr_t)v[i]->data < (uintptr_t)furthest->data + furthest->nbytes)
            s = ac_error(AC_ERR_FORMAT, "tensors '%s' and '%s' overlap in the data section",
                         furthest->name, v[i]->name);
        if (!furthest || (uintptr_t)v[i]->data + v[i]->nbytes > (uintptr_t)furthest->data + furthest->nbytes)
            furthest = v[i];
    }
    qsort(v, n, sizeof *v, by_name);
    for (size_t i = 1; i < n && !s; i++)
        if (strcmp(v[i - 1]->name, v[i]->name) == 0)
            s = ac_error(AC_ERR_FORMAT, "tensor '%s' appears twice in the header", v[i]->name);
    free(v);
    return s;
}

static ac_status parse_image(ac_safetensors *st, const unsigned char *buf, size_t size)
{
    if (size < 8) return ac_error(AC_ERR_FORMAT, "file is %zu bytes, too short for a safetensors header", size);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | buf[i];
    if (hlen > AC_ST_MAX_HEADER)
        return ac_error(AC_ERR_FORMAT, "header length %" PRIu64 " exceeds the 100 MB limit", hlen);
    if (hlen > size - 8)
        return ac_error(AC_ERR_FORMAT, "header length %" PRIu64 " runs past the end of the %zu-byte file (truncated?)",
                        hlen, size);
    const char *parse_end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts((const char *)buf + 8, (size_t)hlen, &parse_end, 0);
    if (!root) return ac_error(AC_ERR_FORMAT, "header is not valid JSON");
    ac_status s = AC_OK;
    uint64_t data_size = size - 8 - hlen;
    if (!cJSON_IsObject(root)) {
        s = ac_error(AC_ERR_FORMAT, "header is not a JSON object");
        goto done;
    }
    /* the rest of the header may only be padding spaces */
    for (const char *p = parse_end; p < (const char *)buf + 8 + hlen; p++)
        if (*p != ' ' && *p != '\0' && *p != '\n' && *p != '\t' && *p != '\r') {
            s = ac_error(AC_ERR_FORMAT, "header has trailing bytes after the JSON object");
            goto done;
        }
    size_t n = (size_t)cJSON_GetArraySize(root);
    st->tensors = ac_calloc(n, sizeof *st->tensors);
    if (!st->tensors) {
        s = AC_ERR_NOMEM;
        goto done;
    }
    for (const cJSON *it = root->child; it && !s; it = it->next) {
        if (strcmp(it->string, "__metadata__") == 0) {
            if (st->meta) s = ac_error(AC_ERR_FORMAT, "__metadata__ appears twice");
            else s = parse_metadata(st, it);
            continue;
        }
        s = parse_tensor(&st->tensors[st->n_tensors], it, data_size);
        if (!s) st->n_tensors++;
    }
    if (!s) s = check_layout(st);
    if (!s) {
        const unsigned char *base = buf + 8 + hlen;
        for (size_t i = 0; i < st->n_tensors; i++)
            st->tensors[i].data = base + (uintptr_t)st->tensors[i].data;
    }
done:
    cJSON_Delete(root);
    return s;
}

ac_status ac_st_parse(const void *buf, size_t size, const char *name, ac_safetensors **out)
{
    *out = NULL;
    ac_safetensors *st = ac_calloc(1, sizeof *st);
    if (!st) return AC_ERR_NOMEM;
    st->path = dup_str(name);
    ac_status s = st->path ? parse_image(st, buf, size) : AC_ERR_NOMEM;
    if (s) {
        free_contents(st);
        free(st);
        return ac_error_prefix(s, "%s", name);
    }
    *out = st;
    return AC_OK;
}

ac_status ac_st_open(const char *path, ac_safetensors **out)
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
    ac_status s = ac_st_parse(map ? map : "", size, path, out);
    if (s) {
        if (map) munmap(map, size);
        return s;
    }
    (*out)->map = map;
    (*out)->map_size = size;
    return AC_OK;
}

const ac_st_tensor *ac_st_find(const ac_safetensors *st, const char *name)
{
    for (size_t i = 0; i < st->n_tensors; i++)
        if (strcmp(st->tensors[i].name, name) == 0) return &st->tensors[i];
    return NULL;
}

const char *ac_st_meta_get(const ac_safetensors *st, const char *key)
{
    for (size_t i = 0; i < st->n_meta; i++)
        if (strcmp(st->meta[i].key, key) == 0) return st->meta[i].value;
    return NULL;
}

void ac_st_close(ac_safetensors *st)
{
    if (!st) return;
    if (st->map) munmap(st->map, st->map_size);
    free_contents(st);
    free(st);
}
