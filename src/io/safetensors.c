/* safetensors: an 8-byte header length, a JSON header naming every tensor
 * (dtype, shape, data_offsets), then the raw data. */
#include "io/tensor_file.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"

#define MAX_HEADER (100u << 20) /* the format's own limit: 100 MB */

static ac_status parse_metadata(ac_tensor_file *st, const cJSON *obj)
{
    if (!cJSON_IsObject(obj))
        return ac_error(AC_ERR_FORMAT, "__metadata__ is not an object");
    size_t n = (size_t)cJSON_GetArraySize(obj);
    st->meta = ac_calloc(n, sizeof *st->meta);
    if (!st->meta) return AC_ERR_NOMEM;
    for (const cJSON *it = obj->child; it; it = it->next) {
        if (!cJSON_IsString(it))
            return ac_error(AC_ERR_FORMAT, "__metadata__ value '%s' is not a string", it->string);
        ac_meta *m = &st->meta[st->n_meta++];
        m->key = ac_strdup(it->string);
        m->value = ac_strdup(it->valuestring);
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

static ac_status parse_tensor(ac_tensor *t, const cJSON *desc, uint64_t data_size)
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
        if (ac_dtype_block((ac_dtype)i) == 1 && strcmp(dt->valuestring, ac_dtype_name((ac_dtype)i)) == 0) t->dtype = (ac_dtype)i;
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
    uint64_t want = ac_dtype_bytes(t->dtype, numel);
    if (e - b != want) {
        char sh[128];
        return ac_error(AC_ERR_FORMAT,
                        "tensor '%s': %s %s needs %" PRIu64 " bytes but data_offsets span %" PRIu64,
                        name, ac_dtype_name(t->dtype), ac_shape_str(t->shape, ndim, sh, sizeof sh), want, e - b);
    }
    t->numel = (int64_t)numel;
    t->nbytes = (size_t)want;
    t->data = (const void *)(uintptr_t)b; /* relative until the base is known */
    t->name = ac_strdup(name);
    return t->name ? AC_OK : AC_ERR_NOMEM;
}

static ac_status parse_image(ac_tensor_file *st, const unsigned char *buf, size_t size)
{
    if (size < 8) return ac_error(AC_ERR_FORMAT, "file is %zu bytes, too short for a safetensors header", size);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | buf[i];
    if (hlen > MAX_HEADER && size > 8 && buf[8] != '{')   /* an audio file, say, given for weights */
        return ac_error(AC_ERR_FORMAT, "not a safetensors file: it does not begin with a header length and a JSON "
                        "header (as a length, its first 8 bytes would be %" PRIu64 ", over the 100 MB limit)", hlen);
    if (hlen > MAX_HEADER)
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
    if (!s) s = ac_tensor_file_check(st);
    if (!s) {
        const unsigned char *base = buf + 8 + hlen;
        for (size_t i = 0; i < st->n_tensors; i++)
            st->tensors[i].data = base + (uintptr_t)st->tensors[i].data;
    }
done:
    cJSON_Delete(root);
    return s;
}

ac_status ac_safetensors_parse(const void *buf, size_t size, const char *name, ac_tensor_file **out)
{
    *out = NULL;
    ac_tensor_file *st = ac_tensor_file_new(name);
    if (!st) return AC_ERR_NOMEM;
    ac_status s = parse_image(st, buf, size);
    if (s) {
        ac_tensor_file_free_table(st);
        return ac_error_prefix(s, "%s", name);
    }
    *out = st;
    return AC_OK;
}

