/* GGUF (v2 and v3) container parser: plain ggml files and the single-file
 * packages audio.cpp's converter writes (specs/hviske_asr.md §1.6;
 * io/gguf_write.c writes the same for audioc quantize).
 *
 * Layout (ggml docs/gguf.md and gguf.cpp; little-endian throughout):
 *   "GGUF", u32 version, u64 n_tensors, u64 n_kv,
 *   n_kv      x { string key, u32 value type, value },
 *   n_tensors x { string name, u32 n_dims, u64 dims[n_dims] (dims[0] is the
 *                 contiguous one), u32 ggml type, u64 offset },
 *   zero padding up to a multiple of general.alignment (u32 KV, a power of
 *   two, default 32), then the data section; offsets are relative to it
 *   and multiples of the alignment.
 *   string = u64 length + bytes (no NUL); array = u32 element type + u64
 *   count + elements (no nested arrays). Value types: 0 u8, 1 i8, 2 u16,
 *   3 i16, 4 u32, 5 i32, 6 f32, 7 bool, 8 string, 9 array, 10 u64, 11 i64,
 *   12 f64. ggml types we map: F32 0, F16 1, Q8_0 8, Q4_K 12, Q6_K 14, I64 27,
 *   BF16 30 (quantized ones used where they lie, tensor/quant.h); Q2_K 10,
 *   Q3_K 11 and Q5_K 13 are refused with the types to convert to instead.
 *   Version 1 (u32 counts) is rejected, as ggml does.
 *
 * audio.cpp's KVs (read from its converter and loader):
 *   audiocpp.tensor_names   STRING array, one per tensor in tensor order: the
 *       logical names. The physical name is "_audiocpp.<i>" when the logical
 *       one is >= 64 bytes (GGML_MAX_NAME) or repeats; we never parse it.
 *   audiocpp.tensor_ranks   INT32 array, one per tensor (we accept 0..8);
 *   audiocpp.tensor_shapes  INT64 array: the shapes concatenated, PyTorch
 *       order. A rank-0 scalar is stored with ggml dims [1]. The ggml dims
 *       must equal the reversed exact shape, both padded with 1s.
 *   audiocpp.embedded_files.names   STRING array (relative paths),
 *   audiocpp.embedded_files.offsets UINT64 array of n+1 cumulative offsets
 *       from 0 to the data length (file i is [off[i], off[i+1])),
 *   audiocpp.embedded_files.data    UINT8 array: the files back to back.
 * Without the audiocpp arrays, tensors keep their physical names and the
 * reversed ggml dims. String KVs go to the metadata, other scalars as
 * decimal text; other arrays are skipped. */
#include "io/tensor_file.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"

#define MAX_NAME (64u << 10)   /* keys, tensor names, file names */
#define MAX_STRING (16u << 20) /* string values */
#define DEFAULT_ALIGNMENT 32

enum { T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_F32, T_BOOL, T_STRING, T_ARRAY, T_U64, T_I64, T_F64, T_COUNT };

static const uint8_t type_size[T_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
static const char *const type_names[T_COUNT] = {
    "UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "FLOAT32",
    "BOOL", "STRING", "ARRAY", "UINT64", "INT64", "FLOAT64",
};

/* The arrays audio.cpp adds, and the element type each must have. */
enum { A_NAMES, A_RANKS, A_SHAPES, A_FILE_NAMES, A_FILE_OFFSETS, A_FILE_DATA, A_COUNT };
static const struct {
    const char *key;
    uint32_t type;
} specials[A_COUNT] = {
    {"audiocpp.tensor_names", T_STRING},
    {"audiocpp.tensor_ranks", T_I32},
    {"audiocpp.tensor_shapes", T_I64},
    {"audiocpp.embedded_files.names", T_STRING},
    {"audiocpp.embedded_files.offsets", T_U64},
    {"audiocpp.embedded_files.data", T_U8},
};

typedef struct {
    const char *p;
    size_t n;
} str;

typedef struct {
    const uint8_t *buf;
    size_t size, pos;
} reader;

/* An array KV of interest: where its elements start in the file. */
typedef struct {
    int present;
    uint64_t n;
    size_t pos;
} array_ref;

typedef struct {
    uint64_t offset;
    uint32_t type, n_dims;
    uint64_t dims[AC_MAX_DIMS];
} tensor_info;

typedef struct {
    reader r;
    ac_tensor_file *f;
    str *keys;
    size_t n_keys, cap_keys, cap_meta, cap_tensors, cap_info;
    tensor_info *info; /* parallel to f->tensors */
    uint64_t alignment;
    array_ref arrays[A_COUNT];
} parser;

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* Sign-extends the low BITS bits of V. */
static int64_t sext(uint64_t v, int bits)
{
    if (bits == 64) {
        int64_t s;
        memcpy(&s, &v, sizeof s);
        return s;
    }
    return v >> (bits - 1) & 1 ? (int64_t)v - ((int64_t)1 << bits) : (int64_t)v;
}

static ac_status need(const reader *r, uint64_t n, const char *what)
{
    if (n <= r->size - r->pos) return AC_OK;
    return ac_error(AC_ERR_FORMAT, "%s at byte %zu runs past the end of the %zu-byte file (truncated?)", what,
                    r->pos, r->size);
}

static ac_status get(reader *r, int n, uint64_t *v, const char *what)
{
    AC_TRY(need(r, (uint64_t)n, what));
    *v = le(r->buf + r->pos, n);
    r->pos += (size_t)n;
    return AC_OK;
}

static ac_status get_str(reader *r, str *s, uint64_t max, const char *what)
{
    uint64_t n = 0;
    AC_TRY(get(r, 8, &n, what));
    if (n > max) return ac_error(AC_ERR_FORMAT, "%s is %" PRIu64 " bytes long (at most %" PRIu64 ")", what, n, max);
    AC_TRY(need(r, n, what));
    s->p = (const char *)r->buf + r->pos;
    s->n = (size_t)n;
    r->pos += (size_t)n;
    return AC_OK;
}

/* Valid UTF-8 without NUL bytes: names end up as C strings. */
static int utf8_ok(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *e = p + n;
    while (p < e) {
        unsigned c = *p++, cp, min;
        int k;
        if (c == 0) return 0;
        if (c < 0x80) continue;
        if (c >= 0xC2 && c <= 0xDF) k = 1, cp = c & 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0) k = 2, cp = c & 0x0F, min = 0x800;
        else if (c >= 0xF0 && c <= 0xF4) k = 3, cp = c & 0x07, min = 0x10000;
        else return 0;
        if (e - p < k) return 0;
        for (int i = 0; i < k; i++) {
            if ((p[i] & 0xC0) != 0x80) return 0;
            cp = cp << 6 | (p[i] & 0x3F);
        }
        p += k;
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    }
    return 1;
}

/* A key or name: non-empty, bounded, valid UTF-8. */
static ac_status get_name(reader *r, str *s, const char *what)
{
    AC_TRY(get_str(r, s, MAX_NAME, what));
    if (!s->n) return ac_error(AC_ERR_FORMAT, "%s is empty", what);
    if (!utf8_ok(s->p, s->n)) return ac_error(AC_ERR_FORMAT, "%s is not valid UTF-8 (or holds a NUL byte)", what);
    return AC_OK;
}

static char *dup_str(str s)
{
    char *d = ac_malloc(s.n + 1);
    if (d) {
        memcpy(d, s.p, s.n);
        d[s.n] = 0;
    }
    return d;
}

/* A growable zero-filled array with room for element N: P itself, a
 * bigger copy (P freed), or NULL when out of memory (P kept). */
static void *grow(void *p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return p;
    size_t c = *cap ? 2 * *cap : 16;
    char *q = ac_calloc(c, elem);
    if (!q) return NULL;
    if (p) memcpy(q, p, *cap * elem);
    free(p);
    *cap = c;
    return q;
}

static int str_eq(str s, const char *c) { return s.n == strlen(c) && memcmp(s.p, c, s.n) == 0; }

/* ---- header and KVs ------------------------------------------------------ */

static ac_status parse_header(parser *ps, uint64_t *n_tensors, uint64_t *n_kv)
{
    reader *r = &ps->r;
    if (r->size < 4 || memcmp(r->buf, "GGUF", 4) != 0)
        return ac_error(AC_ERR_FORMAT, "not a GGUF file (it does not start with \"GGUF\")");
    r->pos = 4;
    uint64_t version = 0;
    AC_TRY(get(r, 4, &version, "version"));
    if (version == 1)
        return ac_error(AC_ERR_UNSUPPORTED, "GGUF version 1 is not supported (only 2 and 3)");
    if (version && !(version & 0xFFFF))
        return ac_error(AC_ERR_UNSUPPORTED, "GGUF version 0x%08" PRIx64 " looks big-endian; only little-endian "
                        "files are supported", version);
    if (version != 2 && version != 3)
        return ac_error(AC_ERR_UNSUPPORTED, "GGUF version %" PRIu64 " is not supported (only 2 and 3)", version);
    AC_TRY(get(r, 8, n_tensors, "tensor count"));
    AC_TRY(get(r, 8, n_kv, "KV count"));
    /* every KV takes at least 13 bytes and every tensor info 24: bound the
     * counts by the file before looping over them */
    size_t left = r->size - r->pos;
    if (*n_kv > left / 13)
        return ac_error(AC_ERR_FORMAT, "KV count %" PRIu64 " cannot fit in the %zu bytes after the header",
                        *n_kv, left);
    if (*n_tensors > left / 24)
        return ac_error(AC_ERR_FORMAT, "tensor count %" PRIu64 " cannot fit in the %zu bytes after the header",
                        *n_tensors, left);
    return AC_OK;
}

/* Reads a scalar of TYPE: its raw bits into *RAW and its decimal text. */
static ac_status get_scalar(reader *r, uint32_t type, uint64_t *raw, char *text, size_t size, const char *what)
{
    AC_TRY(get(r, type_size[type], raw, what));
    uint64_t v = *raw;
    switch (type) {
    case T_I8: case T_I16: case T_I32: case T_I64:
        snprintf(text, size, "%" PRId64, sext(v, 8 * type_size[type]));
        break;
    case T_F32: {
        uint32_t b = (uint32_t)v;
        float x;
        memcpy(&x, &b, sizeof x);
        snprintf(text, size, "%.9g", (double)x);
        break;
    }
    case T_F64: {
        double x;
        memcpy(&x, &v, sizeof x);
        snprintf(text, size, "%.17g", x);
        break;
    }
    case T_BOOL: snprintf(text, size, "%s", v ? "true" : "false"); break;
    default: snprintf(text, size, "%" PRIu64, v); break;
    }
    return AC_OK;
}

static ac_status parse_array(parser *ps, str key, int special, const char *what)
{
    reader *r = &ps->r;
    int kn = key.n > 120 ? 120 : (int)key.n;
    uint64_t et = 0, n = 0;
    AC_TRY(get(r, 4, &et, what));
    AC_TRY(get(r, 8, &n, what));
    if (et >= T_COUNT)
        return ac_error(AC_ERR_FORMAT, "KV '%.*s': unknown array element type %" PRIu64, kn, key.p, et);
    if (et == T_ARRAY) return ac_error(AC_ERR_FORMAT, "KV '%.*s': nested arrays are not supported", kn, key.p);
    if (special >= 0 && et != specials[special].type)
        return ac_error(AC_ERR_FORMAT, "%s must be an array of %s, not of %s", specials[special].key,
                        type_names[specials[special].type], type_names[et]);
    uint64_t min = et == T_STRING ? 8 : type_size[et];
    if (n > (r->size - r->pos) / min)
        return ac_error(AC_ERR_FORMAT, "KV '%.*s': %" PRIu64 " elements cannot fit in the %zu bytes left in the file",
                        kn, key.p, n, r->size - r->pos);
    if (special >= 0) ps->arrays[special] = (array_ref){1, n, r->pos};
    if (et != T_STRING) {
        r->pos += (size_t)(n * min);
        return AC_OK;
    }
    for (uint64_t i = 0; i < n; i++) {
        str s;
        AC_TRY(get_str(r, &s, MAX_STRING, what));
    }
    return AC_OK;
}

static ac_status parse_kv(parser *ps, uint64_t index)
{
    reader *r = &ps->r;
    ac_tensor_file *f = ps->f;
    char what[200];
    snprintf(what, sizeof what, "key of KV %" PRIu64, index);
    str key;
    AC_TRY(get_name(r, &key, what));
    str *keys = grow(ps->keys, &ps->cap_keys, ps->n_keys, sizeof *keys);
    if (!keys) return AC_ERR_NOMEM;
    ps->keys = keys;
    keys[ps->n_keys++] = key;
    int kn = key.n > 120 ? 120 : (int)key.n;
    snprintf(what, sizeof what, "value of '%.*s'", kn, key.p);
    uint64_t type = 0;
    AC_TRY(get(r, 4, &type, what));
    if (type >= T_COUNT) return ac_error(AC_ERR_FORMAT, "KV '%.*s': unknown value type %" PRIu64, kn, key.p, type);
    int special = -1;
    for (int i = 0; i < A_COUNT; i++)
        if (str_eq(key, specials[i].key)) special = i;
    if (special >= 0 && type != T_ARRAY)
        return ac_error(AC_ERR_FORMAT, "%s must be an array of %s, not a %s", specials[special].key,
                        type_names[specials[special].type], type_names[type]);
    if (type == T_ARRAY) return parse_array(ps, key, special, what);

    str sv = {0};
    char text[64];
    uint64_t raw = 0;
    if (type == T_STRING) AC_TRY(get_str(r, &sv, MAX_STRING, what));
    else AC_TRY(get_scalar(r, (uint32_t)type, &raw, text, sizeof text, what));
    if (str_eq(key, "general.alignment")) {
        if (type != T_U32)
            return ac_error(AC_ERR_FORMAT, "general.alignment must be a UINT32, not a %s", type_names[type]);
        if (!raw || (raw & (raw - 1)))
            return ac_error(AC_ERR_FORMAT, "general.alignment %" PRIu64 " is not a power of two", raw);
        ps->alignment = raw;
    }
    ac_meta *meta = grow(f->meta, &ps->cap_meta, f->n_meta, sizeof *meta);
    if (!meta) return AC_ERR_NOMEM;
    f->meta = meta;
    ac_meta *m = &meta[f->n_meta++];
    m->key = dup_str(key);
    m->value = type == T_STRING ? dup_str(sv) : ac_strdup(text);
    return m->key && m->value ? AC_OK : AC_ERR_NOMEM;
}

static int by_str(const void *a, const void *b)
{
    const str *x = a, *y = b;
    int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

static ac_status check_unique_keys(parser *ps)
{
    if (ps->n_keys > 1) qsort(ps->keys, ps->n_keys, sizeof *ps->keys, by_str);
    for (size_t i = 1; i < ps->n_keys; i++)
        if (by_str(&ps->keys[i - 1], &ps->keys[i]) == 0) {
            int kn = ps->keys[i].n > 120 ? 120 : (int)ps->keys[i].n;
            return ac_error(AC_ERR_FORMAT, "key '%.*s' appears twice", kn, ps->keys[i].p);
        }
    return AC_OK;
}

/* ---- tensors ------------------------------------------------------------- */

static ac_status parse_info(parser *ps, uint64_t index)
{
    reader *r = &ps->r;
    ac_tensor_file *f = ps->f;
    char what[200];
    snprintf(what, sizeof what, "name of tensor %" PRIu64, index);
    str name;
    AC_TRY(get_name(r, &name, what));
    ac_tensor *tensors = grow(f->tensors, &ps->cap_tensors, f->n_tensors, sizeof *tensors);
    if (!tensors) return AC_ERR_NOMEM;
    f->tensors = tensors;
    tensor_info *info = grow(ps->info, &ps->cap_info, f->n_tensors, sizeof *info);
    if (!info) return AC_ERR_NOMEM;
    ps->info = info;
    ac_tensor *t = &f->tensors[f->n_tensors];
    tensor_info *ti = &ps->info[f->n_tensors];
    if (!(t->name = dup_str(name))) return AC_ERR_NOMEM;
    f->n_tensors++;
    snprintf(what, sizeof what, "info of tensor '%.100s'", t->name);
    uint64_t v = 0;
    AC_TRY(get(r, 4, &v, what));
    if (v > AC_MAX_DIMS)
        return ac_error(AC_ERR_FORMAT, "tensor '%s': %" PRIu64 " dimensions (at most %d)", t->name, v, AC_MAX_DIMS);
    ti->n_dims = (uint32_t)v;
    for (uint32_t k = 0; k < ti->n_dims; k++) AC_TRY(get(r, 8, &ti->dims[k], what));
    AC_TRY(get(r, 4, &v, what));
    ti->type = (uint32_t)v;
    return get(r, 8, &ti->offset, what);
}

/* Replaces the physical names by audiocpp.tensor_names. */
static ac_status apply_names(parser *ps)
{
    const array_ref *a = &ps->arrays[A_NAMES];
    ac_tensor_file *f = ps->f;
    if (!a->present) return AC_OK;
    if (a->n != f->n_tensors)
        return ac_error(AC_ERR_FORMAT, "audiocpp.tensor_names has %" PRIu64 " entries for %zu tensors", a->n,
                        f->n_tensors);
    reader r = {ps->r.buf, ps->r.size, a->pos};
    for (size_t i = 0; i < f->n_tensors; i++) {
        char what[80];
        snprintf(what, sizeof what, "entry %zu of audiocpp.tensor_names", i);
        str s;
        AC_TRY(get_name(&r, &s, what));
        char *name = dup_str(s);
        if (!name) return AC_ERR_NOMEM;
        free(f->tensors[i].name);
        f->tensors[i].name = name;
    }
    return AC_OK;
}

/* The ggml dims must be the reversed exact shape, both padded with 1s. */
static ac_status agree(const ac_tensor *t, const tensor_info *ti)
{
    uint32_t n = (uint32_t)t->ndim > ti->n_dims ? (uint32_t)t->ndim : ti->n_dims;
    for (uint32_t k = 0; k < n; k++) {
        uint64_t want = k < (uint32_t)t->ndim ? (uint64_t)t->shape[t->ndim - 1 - k] : 1;
        uint64_t have = k < ti->n_dims ? ti->dims[k] : 1;
        if (want != have) {
            char a[160], b[160];
            int64_t phys[AC_MAX_DIMS];
            for (uint32_t j = 0; j < ti->n_dims; j++) phys[j] = (int64_t)ti->dims[ti->n_dims - 1 - j];
            return ac_error(AC_ERR_FORMAT, "tensor '%s': audiocpp.tensor_shapes gives %s but its GGUF dims "
                            "(reversed) are %s", t->name, ac_shape_str(t->shape, t->ndim, a, sizeof a),
                            ac_shape_str(phys, (int)ti->n_dims, b, sizeof b));
        }
    }
    return AC_OK;
}

/* Shapes from audiocpp.tensor_ranks/_shapes, else the reversed ggml dims. */
static ac_status apply_shapes(parser *ps)
{
    const array_ref *ra = &ps->arrays[A_RANKS], *sa = &ps->arrays[A_SHAPES];
    ac_tensor_file *f = ps->f;
    const uint8_t *buf = ps->r.buf;
    if (!ra->present && !sa->present) {
        for (size_t i = 0; i < f->n_tensors; i++) {
            const tensor_info *ti = &ps->info[i];
            f->tensors[i].ndim = (int)ti->n_dims;
            for (uint32_t k = 0; k < ti->n_dims; k++)
                f->tensors[i].shape[k] = (int64_t)ti->dims[ti->n_dims - 1 - k]; /* <= INT64_MAX: checked later */
        }
        return AC_OK;
    }
    if (!ra->present || !sa->present)
        return ac_error(AC_ERR_FORMAT, "audiocpp.tensor_ranks and audiocpp.tensor_shapes must appear together");
    if (ra->n != f->n_tensors)
        return ac_error(AC_ERR_FORMAT, "audiocpp.tensor_ranks has %" PRIu64 " entries for %zu tensors", ra->n,
                        f->n_tensors);
    uint64_t used = 0;
    for (size_t i = 0; i < f->n_tensors; i++) {
        ac_tensor *t = &f->tensors[i];
        int64_t rank = sext(le(buf + ra->pos + 4 * i, 4), 32);
        if (rank < 0 || rank > AC_MAX_DIMS)
            return ac_error(AC_ERR_FORMAT, "tensor '%s': audiocpp.tensor_ranks gives rank %" PRId64 " (0 to %d)",
                            t->name, rank, AC_MAX_DIMS);
        if ((uint64_t)rank > sa->n - used)
            return ac_error(AC_ERR_FORMAT, "audiocpp.tensor_shapes has %" PRIu64 " dims, fewer than "
                            "audiocpp.tensor_ranks needs", sa->n);
        t->ndim = (int)rank;
        for (int k = 0; k < t->ndim; k++) {
            t->shape[k] = sext(le(buf + sa->pos + 8 * (used + (uint64_t)k), 8), 64);
            if (t->shape[k] < 0)
                return ac_error(AC_ERR_FORMAT, "tensor '%s': audiocpp.tensor_shapes gives dim %" PRId64, t->name,
                                t->shape[k]);
        }
        used += (uint64_t)rank;
        AC_TRY(agree(t, &ps->info[i]));
    }
    if (used != sa->n)
        return ac_error(AC_ERR_FORMAT, "audiocpp.tensor_shapes has %" PRIu64 " dims but the ranks add up to %" PRIu64,
                        sa->n, used);
    return AC_OK;
}

static const char *ggml_type_name(uint32_t t)
{
    static const char *const names[] = {
        "F32", "F16", "Q4_0", "Q4_1", "Q4_2", "Q4_3", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K", "Q3_K", "Q4_K",
        "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS",
        "I8", "I16", "I32", "I64", "F64", "IQ1_M", "BF16", "?", "?", "?", "TQ1_0", "TQ2_0", "?", "?", "?", "MXFP4",
    };
    return t < sizeof names / sizeof *names ? names[t] : "?";
}

/* Dtype, element count, bytes and place of tensor I, all checked. */
static ac_status finish_tensor(parser *ps, size_t i, const uint8_t *base, uint64_t data_size)
{
    ac_tensor *t = &ps->f->tensors[i];
    const tensor_info *ti = &ps->info[i];
    switch (ti->type) {
    case 0: t->dtype = AC_DTYPE_F32; break;
    case 1: t->dtype = AC_DTYPE_F16; break;
    case 8: t->dtype = AC_DTYPE_Q8_0; break;
    case 12: t->dtype = AC_DTYPE_Q4_K; break;
    case 14: t->dtype = AC_DTYPE_Q6_K; break;
    case 27: t->dtype = AC_DTYPE_I64; break;
    case 30: t->dtype = AC_DTYPE_BF16; break;
    case 10: case 11: case 13: /* Q2_K, Q3_K, Q5_K */
        return ac_error(AC_ERR_UNSUPPORTED, "tensor '%s': ggml type %" PRIu32 " (%s) is not supported; convert the "
                        "package with --type q4_k, q6_k or q8_0 instead", t->name, ti->type,
                        ggml_type_name(ti->type));
    default:
        return ac_error(AC_ERR_UNSUPPORTED, "tensor '%s': ggml type %" PRIu32 " (%s) is not supported "
                        "(F32, F16, BF16, I64, Q8_0, Q4_K, Q6_K)", t->name, ti->type, ggml_type_name(ti->type));
    }
    /* bound the product of the non-zero dims too: an empty tensor with
     * huge other dims would overflow whoever multiplies them later */
    uint64_t numel = 1;
    int empty = 0;
    for (uint32_t k = 0; k < ti->n_dims; k++) {
        uint64_t v = ti->dims[k];
        if (!v) {
            empty = 1;
            continue;
        }
        if (numel > UINT64_MAX / 8 / v) return ac_error(AC_ERR_FORMAT, "tensor '%s': dims are too large", t->name);
        numel *= v;
    }
    if (empty) numel = 0;
    uint64_t row = ti->n_dims ? ti->dims[0] : 1;
    uint64_t blk = ac_dtype_block(t->dtype);
    if (row % blk)
        return ac_error(AC_ERR_FORMAT, "tensor '%s': %s rows of %" PRIu64 " values are not a multiple of %" PRIu64,
                        t->name, ac_dtype_name(t->dtype), row, blk);
    uint64_t bytes = ac_dtype_bytes(t->dtype, numel);
    if (ti->offset % ps->alignment)
        return ac_error(AC_ERR_FORMAT, "tensor '%s': offset %" PRIu64 " is not aligned to %" PRIu64, t->name,
                        ti->offset, ps->alignment);
    if (ti->offset > data_size || bytes > data_size - ti->offset)
        return ac_error(AC_ERR_FORMAT, "tensor '%s': %" PRIu64 " bytes at offset %" PRIu64 " run past the end of "
                        "the %" PRIu64 "-byte data section (truncated?)", t->name, bytes, ti->offset, data_size);
    t->numel = (int64_t)numel;
    t->nbytes = (size_t)bytes;
    t->data = base + ti->offset;
    return AC_OK;
}

/* ---- embedded files ------------------------------------------------------ */

static int by_cstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static ac_status check_unique_files(ac_tensor_file *f)
{
    char **v = ac_calloc(f->n_files, sizeof *v);
    if (!v) return AC_ERR_NOMEM;
    for (size_t i = 0; i < f->n_files; i++) v[i] = f->files[i].name;
    qsort(v, f->n_files, sizeof *v, by_cstr);
    ac_status s = AC_OK;
    for (size_t i = 1; i < f->n_files && !s; i++)
        if (strcmp(v[i - 1], v[i]) == 0) s = ac_error(AC_ERR_FORMAT, "embedded file '%s' appears twice", v[i]);
    free(v);
    return s;
}

static ac_status parse_files(parser *ps)
{
    const array_ref *na = &ps->arrays[A_FILE_NAMES], *oa = &ps->arrays[A_FILE_OFFSETS],
                    *da = &ps->arrays[A_FILE_DATA];
    ac_tensor_file *f = ps->f;
    const uint8_t *buf = ps->r.buf;
    int present = na->present + oa->present + da->present;
    if (!present) return AC_OK;
    if (present != 3)
        return ac_error(AC_ERR_FORMAT, "audiocpp.embedded_files needs names, offsets and data together");
    if (oa->n != na->n + 1)
        return ac_error(AC_ERR_FORMAT, "audiocpp.embedded_files.offsets has %" PRIu64 " entries for %" PRIu64
                        " files (needs one more)", oa->n, na->n);
    if (le(buf + oa->pos, 8) != 0)
        return ac_error(AC_ERR_FORMAT, "audiocpp.embedded_files.offsets must start at 0");
    if (!(f->files = ac_calloc((size_t)na->n, sizeof *f->files))) return AC_ERR_NOMEM;
    reader r = {buf, ps->r.size, na->pos};
    uint64_t begin = 0;
    for (uint64_t i = 0; i < na->n; i++) {
        char what[80];
        snprintf(what, sizeof what, "entry %" PRIu64 " of audiocpp.embedded_files.names", i);
        str s;
        AC_TRY(get_name(&r, &s, what));
        ac_embedded_file *e = &f->files[f->n_files];
        if (!(e->name = dup_str(s))) return AC_ERR_NOMEM;
        f->n_files++;
        uint64_t end = le(buf + oa->pos + 8 * (i + 1), 8);
        if (end < begin || end > da->n)
            return ac_error(AC_ERR_FORMAT, "embedded file '%s': bytes [%" PRIu64 ", %" PRIu64 ") are not inside "
                            "the %" PRIu64 "-byte audiocpp.embedded_files.data", e->name, begin, end, da->n);
        e->data = buf + da->pos + begin;
        e->size = (size_t)(end - begin);
        begin = end;
    }
    if (begin != da->n)
        return ac_error(AC_ERR_FORMAT, "audiocpp.embedded_files.offsets ends at %" PRIu64 " but the data has %"
                        PRIu64 " bytes", begin, da->n);
    return check_unique_files(f);
}

/* ---- the whole file ------------------------------------------------------ */

static ac_status parse_image(parser *ps)
{
    uint64_t n_tensors = 0, n_kv = 0;
    AC_TRY(parse_header(ps, &n_tensors, &n_kv));
    for (uint64_t i = 0; i < n_kv; i++) AC_TRY(parse_kv(ps, i));
    AC_TRY(check_unique_keys(ps));
    for (uint64_t i = 0; i < n_tensors; i++) AC_TRY(parse_info(ps, i));
    /* the data section starts at the next multiple of the alignment; a
     * file without tensor bytes may end before it */
    uint64_t size = ps->r.size, a = ps->alignment;
    uint64_t start = (ps->r.pos + a - 1) / a * a;
    uint64_t data_size = start < size ? size - start : 0;
    const uint8_t *base = ps->r.buf + (start < size ? start : size);
    AC_TRY(apply_names(ps));
    AC_TRY(apply_shapes(ps));
    for (size_t i = 0; i < ps->f->n_tensors; i++) AC_TRY(finish_tensor(ps, i, base, data_size));
    AC_TRY(parse_files(ps));
    return ac_tensor_file_check(ps->f);
}

ac_status ac_gguf_parse(const void *buf, size_t size, const char *name, ac_tensor_file **out)
{
    *out = NULL;
    parser ps = {.r = {buf, size, 0}, .alignment = DEFAULT_ALIGNMENT};
    if (!(ps.f = ac_tensor_file_new(name))) return AC_ERR_NOMEM;
    ac_status s = parse_image(&ps);
    free(ps.keys);
    free(ps.info);
    if (s) {
        ac_tensor_file_free_table(ps.f);
        return ac_error_prefix(s, "%s", name);
    }
    *out = ps.f;
    return AC_OK;
}
