/* src/io/gguf on GGUF images built here (audio.cpp's layout: logical names,
 * exact shapes, embedded files), every malformed file we can think of, and
 * what src/io/gguf_write.c writes (every type, a rank-0 tensor, a long
 * name, embedded files) read back by it.
 *
 *   test_gguf WORKDIR DATADIR */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audioc.h"
#include "base/error.h"
#include "base/f16.h"
#include "io/gguf_write.h"
#include "io/tensor_file.h"
#include "io/weights.h"
#include "test_util.h"

/* ---- a GGUF writer ------------------------------------------------------- */

typedef struct {
    unsigned char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 256;
        b->p = realloc(b->p, b->cap);
    }
    if (n) memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void u32(buf *b, uint32_t v)
{
    unsigned char c[4];
    for (int i = 0; i < 4; i++) c[i] = (unsigned char)(v >> 8 * i);
    put(b, c, 4);
}

static void u64(buf *b, uint64_t v)
{
    unsigned char c[8];
    for (int i = 0; i < 8; i++) c[i] = (unsigned char)(v >> 8 * i);
    put(b, c, 8);
}

static void gstr(buf *b, const char *s)
{
    u64(b, strlen(s));
    put(b, s, strlen(s));
}

enum { T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_F32, T_BOOL, T_STRING, T_ARRAY, T_U64, T_I64, T_F64 };

static void kv_str(buf *b, const char *key, const char *v)
{
    gstr(b, key);
    u32(b, T_STRING);
    gstr(b, v);
}

static void kv_arr(buf *b, const char *key, uint32_t et, uint64_t n)
{
    gstr(b, key);
    u32(b, T_ARRAY);
    u32(b, et);
    u64(b, n);
}

static void kv_scalar(buf *b, const char *key, uint32_t type, uint64_t bits, int size)
{
    gstr(b, key);
    u32(b, type);
    for (int i = 0; i < size; i++) put(b, &(unsigned char){(unsigned char)(bits >> 8 * i)}, 1);
}

/* ---- the test image ------------------------------------------------------ */

#define LONG_NAME "transf_decoder._decoder.layers.0.second_sub_layer.out_projection.weight"
#define SCALAR_NAME "encoder.layers.0.conv.batch_norm.num_batches_tracked"

typedef struct {
    const char *name;
    uint32_t ggml;
    int rank;
    int64_t shape[4];        /* logical, PyTorch order */
    int n_dims;              /* written ggml dims; -1: the reversed shape */
    uint64_t dims[4];
} tspec;

static const tspec GOOD[] = {
    {"a", 0, 2, {2, 3}, -1, {0}},
    {LONG_NAME, 8, 2, {2, 64}, -1, {0}},
    {"h", 1, 1, {4}, -1, {0}},
    {"b", 30, 1, {2}, -1, {0}},
    {SCALAR_NAME, 27, 0, {0}, 1, {1}},
    {"z", 0, 2, {0, 5}, -1, {0}},
    {"p", 0, 2, {1, 4}, 1, {4}}, /* a writer may drop trailing 1s of the ggml dims */
};
#define N_GOOD (sizeof GOOD / sizeof *GOOD)

static const char CONFIG[] = "{\"sample_rate\": 16000}\n";
static const unsigned char TOKENIZER[] = {0x0a, 0x00, 0x12, 0xff, 0x80, 0x00, 0x7f};

enum {
    GOOD_FILE,
    BAD_MAGIC, BAD_VERSION1, BAD_VERSION9, BAD_BIG_ENDIAN, BAD_KV_COUNT, BAD_TENSOR_COUNT,
    BAD_STR_PAST_END, BAD_STR_HUGE, BAD_ARRAY_COUNT, BAD_VALUE_TYPE, BAD_ELEM_TYPE, BAD_NESTED,
    BAD_EMPTY_KEY, BAD_UTF8_KEY, BAD_DUP_KEY, BAD_ALIGN_POW2, BAD_ALIGN_TYPE,
    BAD_GGML_TYPE, BAD_NDIMS, BAD_DIMS_OVERFLOW, BAD_EMPTY_HUGE, BAD_OFFSET_PAST_END, BAD_MISALIGNED, BAD_OVERLAP,
    BAD_DUP_NAMES, BAD_DUP_PHYSICAL, BAD_Q8_ROW, BAD_UTF8_NAME, BAD_SURROGATE_NAME, BAD_RANKS_COUNT,
    BAD_NAMES_COUNT, BAD_NAMES_TYPE, BAD_NAMES_SCALAR, BAD_RANKS_TYPE, BAD_RANK_NEGATIVE, BAD_RANK_9,
    BAD_SHAPE_DISAGREE, BAD_SHAPE_NEGATIVE, BAD_SHAPES_TRAILING, BAD_SHAPES_SHORT, BAD_RANKS_ALONE,
    BAD_FILES_PARTIAL, BAD_FILE_OFFSETS_COUNT, BAD_FILE_OFFSETS_TYPE, BAD_FILE_START, BAD_FILE_DECREASING,
    BAD_FILE_END, BAD_FILE_DUP,
};

typedef struct {
    int audiocpp;       /* write the audiocpp arrays (else physical names) */
    uint32_t alignment; /* 0: no general.alignment KV (32) */
    uint32_t version;
} opts;

static size_t tensor_bytes(uint32_t ggml, uint64_t numel)
{
    switch (ggml) {
    case 0: return numel * 4;
    case 1: case 30: return numel * 2;
    case 27: return numel * 8;
    default: return numel / 32 * 34;
    }
}

static uint64_t numel_of(const tspec *t)
{
    uint64_t n = 1;
    for (int k = 0; k < t->rank; k++) n *= (uint64_t)t->shape[k];
    return n;
}

static unsigned char data_byte(size_t tensor, size_t k) { return (unsigned char)(tensor * 37 + k * 11 + 1); }

/* Builds the image with one defect BAD; *VALID_FROM is the shortest prefix
 * that is still a whole file (the last tensor's end). */
static buf build(int bad, opts o, size_t *valid_from)
{
    tspec ts[N_GOOD];
    memcpy(ts, GOOD, sizeof ts);
    if (bad == BAD_DIMS_OVERFLOW) {
        ts[0].shape[0] = ts[0].shape[1] = (int64_t)1 << 40;
    }
    if (bad == BAD_EMPTY_HUGE) ts[5] = (tspec){"z", 0, 3, {0, (int64_t)1 << 40, (int64_t)1 << 40}, -1, {0}};
    if (bad == BAD_Q8_ROW) ts[1].shape[1] = 48;
    if (bad == BAD_GGML_TYPE) ts[0].ggml = 11;
    const uint32_t align = o.alignment ? o.alignment : 32;
    const size_t n = N_GOOD;

    buf b = {0};
    put(&b, bad == BAD_MAGIC ? "GGUX" : "GGUF", 4);
    u32(&b, bad == BAD_VERSION1 ? 1 : bad == BAD_VERSION9 ? 9 : bad == BAD_BIG_ENDIAN ? 0x03000000u
            : o.version ? o.version : 3);
    u64(&b, bad == BAD_TENSOR_COUNT ? (uint64_t)1 << 60 : n);
    size_t kv_count_at = b.n;
    u64(&b, 0);
    uint64_t n_kv = 0;

    kv_str(&b, "general.architecture", "audiocpp"), n_kv++;
    if (bad == BAD_DUP_KEY) kv_str(&b, "general.architecture", "again"), n_kv++;
    if (o.alignment || bad == BAD_ALIGN_POW2 || bad == BAD_ALIGN_TYPE) {
        if (bad == BAD_ALIGN_TYPE) kv_scalar(&b, "general.alignment", T_U64, 32, 8);
        else kv_scalar(&b, "general.alignment", T_U32, bad == BAD_ALIGN_POW2 ? 48 : align, 4);
        n_kv++;
    }
    kv_scalar(&b, "test.u8", T_U8, 200, 1), n_kv++;
    kv_scalar(&b, "test.i8", T_I8, 0xfe, 1), n_kv++;
    kv_scalar(&b, "test.u16", T_U16, 65535, 2), n_kv++;
    kv_scalar(&b, "test.i16", T_I16, 0x8000, 2), n_kv++;
    kv_scalar(&b, "test.u32", T_U32, 4000000000u, 4), n_kv++;
    kv_scalar(&b, "test.i32", T_I32, 0xffffffffu, 4), n_kv++;
    uint32_t f32bits;
    memcpy(&f32bits, &(float){0.5f}, 4);
    kv_scalar(&b, "test.f32", T_F32, f32bits, 4), n_kv++;
    kv_scalar(&b, "test.bool", T_BOOL, 1, 1), n_kv++;
    kv_scalar(&b, "test.u64", T_U64, UINT64_MAX, 8), n_kv++;
    kv_scalar(&b, "test.i64", T_I64, (uint64_t)INT64_MIN, 8), n_kv++;
    uint64_t f64bits;
    memcpy(&f64bits, &(double){-2.25}, 8);
    kv_scalar(&b, "test.f64", T_F64, f64bits, 8), n_kv++;
    kv_arr(&b, "test.skipped_strings", T_STRING, 2), gstr(&b, "x"), gstr(&b, "yy"), n_kv++;
    kv_arr(&b, "test.skipped_i16", T_I16, 3), put(&b, "\1\0\2\0\3\0", 6), n_kv++;
    kv_str(&b, "test.empty", ""), n_kv++;
    kv_str(&b, "test.\xc3\xa6\xc3\xb8\xc3\xa5.\xe2\x82\xac.\xf0\x9f\x98\x80", "utf-8"), n_kv++;
    switch (bad) {
    case BAD_STR_PAST_END: gstr(&b, "test.long"), u32(&b, T_STRING), u64(&b, 100000), n_kv++; break;
    case BAD_STR_HUGE: u64(&b, (uint64_t)1 << 40), n_kv++; break;
    case BAD_ARRAY_COUNT: kv_arr(&b, "test.many", T_I64, (uint64_t)1 << 61), n_kv++; break;
    case BAD_VALUE_TYPE: gstr(&b, "test.odd"), u32(&b, 13), u32(&b, 0), n_kv++; break;
    case BAD_ELEM_TYPE: kv_arr(&b, "test.odd", 13, 1), u32(&b, 0), n_kv++; break;
    case BAD_NESTED: kv_arr(&b, "test.nested", T_ARRAY, 1), u32(&b, T_U8), u64(&b, 0), n_kv++; break;
    case BAD_EMPTY_KEY: kv_str(&b, "", "v"), n_kv++; break;
    case BAD_UTF8_KEY: kv_str(&b, "test.\xc3\x28", "v"), n_kv++; break;
    }

    if (o.audiocpp) {
        if (bad == BAD_NAMES_TYPE) {
            kv_arr(&b, "audiocpp.tensor_names", T_I32, n), n_kv++;
            for (size_t i = 0; i < n; i++) u32(&b, 0);
        } else if (bad == BAD_NAMES_SCALAR) {
            kv_str(&b, "audiocpp.tensor_names", "a"), n_kv++;
        } else {
            size_t m = bad == BAD_NAMES_COUNT ? n - 1 : n;
            kv_arr(&b, "audiocpp.tensor_names", T_STRING, m), n_kv++;
            for (size_t i = 0; i < m; i++) gstr(&b, bad == BAD_DUP_NAMES && i == 2 ? "a" : ts[i].name);
        }
        int ranks_i64 = bad == BAD_RANKS_TYPE;
        size_t n_ranks = bad == BAD_RANKS_COUNT ? n + 1 : n;
        kv_arr(&b, "audiocpp.tensor_ranks", ranks_i64 ? T_I64 : T_I32, n_ranks), n_kv++;
        if (bad == BAD_RANKS_COUNT) u32(&b, 1);
        uint64_t dims = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t r = (uint32_t)ts[i].rank;
            if (i == 0 && bad == BAD_RANK_NEGATIVE) r = 0xffffffffu;
            if (i == 0 && bad == BAD_RANK_9) r = 9;
            if (ranks_i64) u64(&b, r);
            else u32(&b, r);
            dims += (uint64_t)ts[i].rank;
        }
        if (bad != BAD_RANKS_ALONE) {
            uint64_t m = dims + (bad == BAD_SHAPES_TRAILING) - (bad == BAD_SHAPES_SHORT);
            kv_arr(&b, "audiocpp.tensor_shapes", T_I64, m), n_kv++;
            uint64_t w = 0;
            for (size_t i = 0; i < n; i++)
                for (int k = 0; k < ts[i].rank; k++, w++) {
                    int64_t d = ts[i].shape[k];
                    if (i == 0 && bad == BAD_SHAPE_DISAGREE) d = ts[0].shape[1 - k];
                    if (i == 2 && bad == BAD_SHAPE_NEGATIVE) d = -4;
                    if (w < m) u64(&b, (uint64_t)d);
                }
            if (bad == BAD_SHAPES_TRAILING) u64(&b, 7);
        }

        /* embedded files: config.json, tokenizer.model (binary), an empty one */
        const char *names[3] = {"config.json", "tokenizer.model", bad == BAD_FILE_DUP ? "config.json" : "empty.txt"};
        uint64_t l1 = strlen(CONFIG), l2 = sizeof TOKENIZER;
        uint64_t offs[4] = {0, l1, l1 + l2, l1 + l2};
        if (bad == BAD_FILE_START) offs[0] = 1;
        if (bad == BAD_FILE_DECREASING) offs[2] = l1 - 1;
        if (bad == BAD_FILE_END) offs[2] = offs[3] = l1 + l2 - 1;
        kv_arr(&b, "audiocpp.embedded_files.names", T_STRING, 3), n_kv++;
        for (int i = 0; i < 3; i++) gstr(&b, names[i]);
        int n_offs = bad == BAD_FILE_OFFSETS_COUNT ? 3 : 4;
        kv_arr(&b, "audiocpp.embedded_files.offsets", bad == BAD_FILE_OFFSETS_TYPE ? T_U32 : T_U64,
               (uint64_t)n_offs), n_kv++;
        for (int i = 0; i < n_offs; i++)
            if (bad == BAD_FILE_OFFSETS_TYPE) u32(&b, (uint32_t)offs[i]);
            else u64(&b, offs[i]);
        if (bad != BAD_FILES_PARTIAL) {
            kv_arr(&b, "audiocpp.embedded_files.data", T_U8, l1 + l2), n_kv++;
            put(&b, CONFIG, l1);
            put(&b, TOKENIZER, l2);
        }
    }
    if (bad == BAD_KV_COUNT) n_kv = (uint64_t)1 << 62;
    for (int i = 0; i < 8; i++) b.p[kv_count_at + i] = (unsigned char)(n_kv >> 8 * i);

    /* tensor infos: offsets as ggml lays them out (each padded) */
    uint64_t layout[N_GOOD], offsets[N_GOOD], at = 0;
    for (size_t i = 0; i < n; i++) {
        layout[i] = offsets[i] = at;
        at += (tensor_bytes(ts[i].ggml, numel_of(&ts[i])) + align - 1) / align * align;
    }
    if (bad == BAD_OFFSET_PAST_END) offsets[2] = (uint64_t)1 << 20;
    if (bad == BAD_MISALIGNED) offsets[2] += 4;
    if (bad == BAD_OVERLAP) offsets[2] = offsets[0];
    for (size_t i = 0; i < n; i++) {
        char phys[32];
        const char *name = ts[i].name;
        if (strlen(name) >= 64) snprintf(phys, sizeof phys, "_audiocpp.%zu", i), name = phys;
        if (bad == BAD_DUP_PHYSICAL && i == 2) name = "a";
        if (bad == BAD_UTF8_NAME && i == 2) name = "bad\xe2\x82";
        if (bad == BAD_SURROGATE_NAME && i == 2) name = "bad\xed\xa0\x80";
        gstr(&b, name);
        if (bad == BAD_NDIMS && i == 0) {
            u32(&b, 9);
            for (int k = 0; k < 9; k++) u64(&b, 1);
        } else if (ts[i].n_dims >= 0) {
            u32(&b, (uint32_t)ts[i].n_dims);
            for (int k = 0; k < ts[i].n_dims; k++) u64(&b, ts[i].dims[k]);
        } else {
            u32(&b, (uint32_t)ts[i].rank);
            for (int k = ts[i].rank - 1; k >= 0; k--) u64(&b, (uint64_t)ts[i].shape[k]);
        }
        u32(&b, ts[i].ggml);
        u64(&b, offsets[i]);
    }
    while (b.n % align) put(&b, "", 1);
    size_t data_start = b.n;
    for (size_t i = 0; i < n; i++) {
        size_t nb = tensor_bytes(ts[i].ggml, numel_of(&ts[i]));
        if (nb > 4096) continue; /* the overflow case */
        while (b.n < data_start + layout[i]) put(&b, "", 1);
        for (size_t k = 0; k < nb; k++) put(&b, &(unsigned char){data_byte(i, k)}, 1);
    }
    if (valid_from) *valid_from = b.n;
    while ((b.n - data_start) % align) put(&b, "", 1);
    return b;
}

static int shape_is(const ac_tensor *t, int ndim, const int64_t *shape)
{
    if (!t || t->ndim != ndim) return 0;
    for (int i = 0; i < ndim; i++)
        if (t->shape[i] != shape[i]) return 0;
    return 1;
}

static int data_ok(const ac_tensor *t, size_t index)
{
    const unsigned char *p = t->data;
    for (size_t k = 0; k < t->nbytes; k++)
        if (p[k] != data_byte(index, k)) return 0;
    return 1;
}

/* ---- good files ---------------------------------------------------------- */

static void check_good(const ac_tensor_file *f, const unsigned char *base, opts o)
{
    uint32_t align = o.alignment ? o.alignment : 32;
    CHECK(f->n_tensors == N_GOOD, "%zu tensors", f->n_tensors);
    for (size_t i = 0; i < f->n_tensors && i < N_GOOD; i++) {
        const ac_tensor *t = &f->tensors[i];
        const tspec *g = &GOOD[i];
        char want_name[32];
        const char *want = g->name;
        if (!o.audiocpp && strlen(want) >= 64) snprintf(want_name, sizeof want_name, "_audiocpp.%zu", i), want = want_name;
        CHECK(strcmp(t->name, want) == 0, "tensor %zu is '%s', expected '%s'", i, t->name, want);
        CHECK(data_ok(t, i), "tensor '%s' bytes", t->name);
        CHECK(((const unsigned char *)t->data - base) % align == 0 || t->nbytes == 0, "tensor '%s' at %td",
              t->name, (const unsigned char *)t->data - base);
        CHECK(t->numel == (int64_t)numel_of(g), "tensor '%s' numel %lld", t->name, (long long)t->numel);
    }
    const ac_dtype dt[N_GOOD] = {AC_DTYPE_F32, AC_DTYPE_Q8_0, AC_DTYPE_F16, AC_DTYPE_BF16, AC_DTYPE_I64,
                                 AC_DTYPE_F32, AC_DTYPE_F32};
    for (size_t i = 0; i < f->n_tensors && i < N_GOOD; i++)
        CHECK(f->tensors[i].dtype == dt[i], "tensor %zu dtype %s", i, ac_dtype_name(f->tensors[i].dtype));
    if (f->n_tensors != N_GOOD) return;
    const ac_tensor *q = &f->tensors[1], *sc = &f->tensors[4], *p = &f->tensors[6];
    CHECK(q->nbytes == 4 * 34, "Q8_0 bytes %zu", q->nbytes);
    if (o.audiocpp) {
        for (size_t i = 0; i < N_GOOD; i++)
            CHECK(shape_is(&f->tensors[i], GOOD[i].rank, GOOD[i].shape), "tensor '%s' exact shape", GOOD[i].name);
        CHECK(ac_tensor_file_find(f, LONG_NAME) == q, "long logical name");
        CHECK(sc->ndim == 0 && sc->numel == 1 && sc->nbytes == 8, "rank-0 I64");
    } else {
        CHECK(shape_is(q, 2, (int64_t[]){2, 64}) && shape_is(sc, 1, (int64_t[]){1}) && shape_is(p, 1, (int64_t[]){4}),
              "reversed ggml dims");
        CHECK(ac_tensor_file_find(f, "_audiocpp.1") == q, "physical name");
    }
    const char *arch = ac_tensor_file_meta(f, "general.architecture");
    CHECK(arch && strcmp(arch, "audiocpp") == 0, "string metadata");
    static const char *const scalars[][2] = {
        {"test.u8", "200"}, {"test.i8", "-2"}, {"test.u16", "65535"}, {"test.i16", "-32768"},
        {"test.u32", "4000000000"}, {"test.i32", "-1"}, {"test.f32", "0.5"}, {"test.bool", "true"},
        {"test.u64", "18446744073709551615"}, {"test.i64", "-9223372036854775808"}, {"test.f64", "-2.25"},
        {"test.empty", ""}, {"test.\xc3\xa6\xc3\xb8\xc3\xa5.\xe2\x82\xac.\xf0\x9f\x98\x80", "utf-8"},
    };
    for (size_t i = 0; i < sizeof scalars / sizeof *scalars; i++) {
        const char *v = ac_tensor_file_meta(f, scalars[i][0]);
        CHECK(v && strcmp(v, scalars[i][1]) == 0, "%s = '%s'", scalars[i][0], v ? v : "(missing)");
    }
    CHECK(!ac_tensor_file_meta(f, "test.skipped_strings") && !ac_tensor_file_meta(f, "audiocpp.tensor_names"),
          "arrays are not metadata");
    if (o.alignment) {
        const char *a = ac_tensor_file_meta(f, "general.alignment");
        CHECK(a && (uint32_t)atoi(a) == o.alignment, "alignment metadata");
    }
    if (o.audiocpp) {
        const ac_embedded_file *c = ac_tensor_file_embedded(f, "config.json"),
                               *t = ac_tensor_file_embedded(f, "tokenizer.model"),
                               *e = ac_tensor_file_embedded(f, "empty.txt");
        CHECK(f->n_files == 3, "%zu embedded files", f->n_files);
        CHECK(c && c->size == strlen(CONFIG) && memcmp(c->data, CONFIG, c->size) == 0, "embedded config.json");
        CHECK(t && t->size == sizeof TOKENIZER && memcmp(t->data, TOKENIZER, t->size) == 0, "embedded binary");
        CHECK(e && e->size == 0, "empty embedded file");
        CHECK(!ac_tensor_file_embedded(f, "nope"), "missing embedded file");
    } else {
        CHECK(f->n_files == 0, "no embedded files");
    }
}

static void check_good_variant(const char *what, opts o)
{
    size_t valid_from;
    buf b = build(GOOD_FILE, o, &valid_from);
    ac_tensor_file *f = NULL;
    ac_status s = ac_gguf_parse(b.p, b.n, "model.gguf", &f);
    CHECK(s == AC_OK && f, "%s: %s", what, ac_last_error());
    if (f) check_good(f, b.p, o);
    ac_tensor_file_close(f);

    /* through the file API (dispatch on the magic, mmap) */
    char name[64];
    snprintf(name, sizeof name, "good_%s.gguf", what);
    const char *path = work_path(name);
    CHECK(write_file(path, b.p, b.n) == 0, "write %s", path);
    f = NULL;
    s = ac_tensor_file_open(path, &f);
    CHECK(s == AC_OK && f && f->n_tensors == N_GOOD, "%s: open: %s", what, ac_last_error());
    if (f) check_good(f, f->map, o);
    ac_tensor_file_close(f);

    /* every cut before the last tensor's end fails cleanly; the final
     * padding is optional */
    int cut_ok = 1;
    for (size_t len = 0; len < b.n; len++) {
        f = NULL;
        ac_error_clear();
        unsigned char *copy = malloc(len ? len : 1); /* exact size: ASan sees over-reads */
        memcpy(copy, b.p, len);
        s = ac_gguf_parse(copy, len, "cut.gguf", &f);
        int want_ok = len >= valid_from;
        if ((s == AC_OK) != want_ok || (s && (!error_has("cut.gguf: ") || f))) {
            CHECK(0, "%s cut at %zu of %zu: status %d, '%s'", what, len, b.n, s, ac_last_error());
            cut_ok = 0;
        }
        if (s == AC_OK) ac_tensor_file_close(f);
        free(copy);
        if (!cut_ok) break;
    }
    CHECK(cut_ok, "%s: truncations", what);
    free(b.p);
}

static void test_good_files(void)
{
    check_good_variant("audiocpp", (opts){1, 0, 3});
    check_good_variant("align64", (opts){1, 64, 3});
    check_good_variant("align8_v2", (opts){1, 8, 2});
    check_good_variant("plain", (opts){0, 0, 3});
    check_good_variant("plain_align128", (opts){0, 128, 3});
}

/* A file with no tensors and no KVs, and one whose data section would
 * start past its end because no tensor has bytes. */
static void test_minimal(void)
{
    buf b = {0};
    put(&b, "GGUF", 4), u32(&b, 3), u64(&b, 0), u64(&b, 0);
    ac_tensor_file *f = NULL;
    ac_status s = ac_gguf_parse(b.p, b.n, "empty.gguf", &f);
    CHECK(s == AC_OK && f && f->n_tensors == 0 && f->n_meta == 0 && f->n_files == 0, "empty: %s", ac_last_error());
    ac_tensor_file_close(f);
    free(b.p);

    b = (buf){0};
    put(&b, "GGUF", 4), u32(&b, 3), u64(&b, 1), u64(&b, 0);
    gstr(&b, "e"), u32(&b, 2), u64(&b, 0), u64(&b, 3), u32(&b, 0), u64(&b, 0);
    f = NULL;
    s = ac_gguf_parse(b.p, b.n, "zero.gguf", &f);
    CHECK(s == AC_OK && f && f->n_tensors == 1 && f->tensors[0].nbytes == 0 &&
              shape_is(&f->tensors[0], 2, (int64_t[]){3, 0}),
          "empty tensor, no data section: %s", ac_last_error());
    ac_tensor_file_close(f);
    free(b.p);
}

/* ---- bad files ----------------------------------------------------------- */

static void expect_bad(int bad, int audiocpp, ac_status status, const char *needle)
{
    buf b = build(bad, (opts){audiocpp, 0, 3}, NULL);
    unsigned char *copy = malloc(b.n);
    memcpy(copy, b.p, b.n);
    ac_tensor_file *f = (ac_tensor_file *)1;
    ac_error_clear();
    ac_status s = ac_gguf_parse(copy, b.n, "model.gguf", &f);
    CHECK(s != AC_OK && (!status || s == status) && f == NULL, "case %d: status %d", bad, s);
    CHECK(error_has("model.gguf: ") && error_has(needle), "case %d: message '%s' lacks '%s'", bad, ac_last_error(),
          needle);
    if (getenv("TEST_GGUF_VERBOSE")) fprintf(stderr, "  case %d: %s\n", bad, ac_last_error());
    if (s == AC_OK) ac_tensor_file_close(f);
    free(copy);
    free(b.p);
}

static void test_bad_files(void)
{
    const ac_status F = AC_ERR_FORMAT, U = AC_ERR_UNSUPPORTED;
    expect_bad(BAD_MAGIC, 1, F, "not a GGUF file");
    expect_bad(BAD_VERSION1, 1, U, "GGUF version 1 is not supported");
    expect_bad(BAD_VERSION9, 1, U, "GGUF version 9 is not supported");
    expect_bad(BAD_BIG_ENDIAN, 1, U, "looks big-endian");
    expect_bad(BAD_KV_COUNT, 1, F, "KV count 4611686018427387904 cannot fit");
    expect_bad(BAD_TENSOR_COUNT, 1, F, "tensor count 1152921504606846976 cannot fit");
    expect_bad(BAD_STR_PAST_END, 1, F, "value of 'test.long' at byte");
    expect_bad(BAD_STR_HUGE, 1, F, "is 1099511627776 bytes long");
    expect_bad(BAD_ARRAY_COUNT, 1, F, "KV 'test.many': 2305843009213693952 elements cannot fit");
    expect_bad(BAD_VALUE_TYPE, 1, F, "KV 'test.odd': unknown value type 13");
    expect_bad(BAD_ELEM_TYPE, 1, F, "KV 'test.odd': unknown array element type 13");
    expect_bad(BAD_NESTED, 1, F, "nested arrays are not supported");
    expect_bad(BAD_EMPTY_KEY, 1, F, "is empty");
    expect_bad(BAD_UTF8_KEY, 1, F, "not valid UTF-8");
    expect_bad(BAD_DUP_KEY, 1, F, "key 'general.architecture' appears twice");
    expect_bad(BAD_ALIGN_POW2, 1, F, "general.alignment 48 is not a power of two");
    expect_bad(BAD_ALIGN_TYPE, 1, F, "general.alignment must be a UINT32, not a UINT64");
    expect_bad(BAD_GGML_TYPE, 1, U, "tensor 'a': ggml type 11 (Q3_K) is not supported; convert the package with --type q4_k, q6_k or q8_0");
    expect_bad(BAD_NDIMS, 1, F, "tensor 'a': 9 dimensions (at most 8)");
    expect_bad(BAD_DIMS_OVERFLOW, 1, F, "tensor 'a': dims are too large");
    expect_bad(BAD_EMPTY_HUGE, 1, F, "tensor 'z': dims are too large");
    expect_bad(BAD_OFFSET_PAST_END, 1, F, "tensor 'h': 8 bytes at offset 1048576 run past the end");
    expect_bad(BAD_MISALIGNED, 1, F, "tensor 'h': offset 196 is not aligned to 32");
    expect_bad(BAD_OVERLAP, 1, F, "overlap");
    expect_bad(BAD_DUP_NAMES, 1, F, "duplicate tensor 'a'");
    expect_bad(BAD_DUP_PHYSICAL, 0, F, "duplicate tensor 'a'");
    expect_bad(BAD_Q8_ROW, 1, F, "tensor '" LONG_NAME "': Q8_0 rows of 48 values are not a multiple of 32");
    expect_bad(BAD_UTF8_NAME, 0, F, "name of tensor 2 is not valid UTF-8");
    expect_bad(BAD_SURROGATE_NAME, 0, F, "name of tensor 2 is not valid UTF-8");
    expect_bad(BAD_RANKS_COUNT, 1, F, "audiocpp.tensor_ranks has 8 entries for 7 tensors");
    expect_bad(BAD_NAMES_COUNT, 1, F, "audiocpp.tensor_names has 6 entries for 7 tensors");
    expect_bad(BAD_NAMES_TYPE, 1, F, "audiocpp.tensor_names must be an array of STRING, not of INT32");
    expect_bad(BAD_NAMES_SCALAR, 1, F, "audiocpp.tensor_names must be an array of STRING, not a STRING");
    expect_bad(BAD_RANKS_TYPE, 1, F, "audiocpp.tensor_ranks must be an array of INT32, not of INT64");
    expect_bad(BAD_RANK_NEGATIVE, 1, F, "tensor 'a': audiocpp.tensor_ranks gives rank -1");
    expect_bad(BAD_RANK_9, 1, F, "tensor 'a': audiocpp.tensor_ranks gives rank 9");
    expect_bad(BAD_SHAPE_DISAGREE, 1, F, "tensor 'a': audiocpp.tensor_shapes gives [3, 2] but its GGUF dims "
                                         "(reversed) are [2, 3]");
    expect_bad(BAD_SHAPE_NEGATIVE, 1, F, "tensor 'h': audiocpp.tensor_shapes gives dim -4");
    expect_bad(BAD_SHAPES_TRAILING, 1, F, "audiocpp.tensor_shapes has 11 dims but the ranks add up to 10");
    expect_bad(BAD_SHAPES_SHORT, 1, F, "fewer than audiocpp.tensor_ranks needs");
    expect_bad(BAD_RANKS_ALONE, 1, F, "must appear together");
    expect_bad(BAD_FILES_PARTIAL, 1, F, "needs names, offsets and data together");
    expect_bad(BAD_FILE_OFFSETS_COUNT, 1, F, "offsets has 3 entries for 3 files");
    expect_bad(BAD_FILE_OFFSETS_TYPE, 1, F, "audiocpp.embedded_files.offsets must be an array of UINT64, not of UINT32");
    expect_bad(BAD_FILE_START, 1, F, "offsets must start at 0");
    expect_bad(BAD_FILE_DECREASING, 1, F, "embedded file 'tokenizer.model': bytes [23, 22) are not inside");
    expect_bad(BAD_FILE_END, 1, F, "offsets ends at 29 but the data has 30 bytes");
    expect_bad(BAD_FILE_DUP, 1, F, "embedded file 'config.json' appears twice");

    /* too short for the magic */
    ac_tensor_file *f = (ac_tensor_file *)1;
    CHECK(ac_gguf_parse("GGU", 3, "short.gguf", &f) == AC_ERR_FORMAT && !f && error_has("short.gguf: not a GGUF"),
          "3 bytes: %s", ac_last_error());
    unsigned char head[8] = {'G', 'G', 'U', 'F', 3, 0, 0, 0};
    CHECK(ac_gguf_parse(head, 8, "head.gguf", &f) == AC_ERR_FORMAT && error_has("tensor count at byte 8 runs past "
                                                                             "the end of the 8-byte file"),
          "8 bytes: %s", ac_last_error());
}

/* ---- src/io/gguf_write.c, read back by src/io/gguf.c ------------------- */

/* Tensor I's bytes: a pattern of its index, each block's f16 scales set to 1
 * (the reader refuses none, but a NaN scale would be refused by a loader). */
static ac_status fill_pattern(void *user, size_t i, void *dst, size_t bytes)
{
    unsigned char *d = dst;
    for (size_t k = 0; k < bytes; k++) d[k] = (unsigned char)(i * 31 + k * 7);
    return AC_OK;
}

static ac_status fill_fail(void *user, size_t i, void *dst, size_t bytes)
{
    return i == 2 ? ac_error(AC_ERR_CANCELLED, "stopped at tensor %zu", i) : fill_pattern(user, i, dst, bytes);
}

static const struct {
    const char *name;
    ac_dtype dtype;
    int ndim;
    int64_t shape[3];
} WRITTEN[] = {
    {"enc.weight", AC_DTYPE_F32, 2, {2, 3}},
    {"scalar", AC_DTYPE_F32, 0, {0}},
    {"q8/enc.proj.weight", AC_DTYPE_Q8_0, 2, {3, 64}},
    {"q4.weight", AC_DTYPE_Q4_K, 2, {2, 256}},
    {"q6.weight", AC_DTYPE_Q6_K, 3, {1, 2, 256}},
    {"half", AC_DTYPE_F16, 1, {5}},
    {"brain", AC_DTYPE_BF16, 1, {7}},
    {"steps", AC_DTYPE_I64, 1, {1}},
    {LONG_NAME, AC_DTYPE_F32, 2, {2, 64}},
    {"empty", AC_DTYPE_F32, 2, {0, 4}},
};
#define N_WRITTEN (sizeof WRITTEN / sizeof *WRITTEN)

static ac_gguf_out *writer(void)
{
    ac_gguf_out *g = ac_gguf_out_new();
    static const char *const srcs[] = {"", "part"};
    CHECK(ac_gguf_out_str(g, "general.architecture", "audiocpp") == AC_OK &&
              ac_gguf_out_u32(g, "audiocpp.model_spec.version", 7) == AC_OK &&
              ac_gguf_out_strs(g, "audiocpp.tensor_sources.names", srcs, 2) == AC_OK,
          "KVs: %s", ac_last_error());
    CHECK(ac_gguf_out_file(g, "config.json", "{\"a\": 1}", 8) == AC_OK &&
              ac_gguf_out_file(g, "sub/empty.txt", "", 0) == AC_OK,
          "files: %s", ac_last_error());
    CHECK(ac_gguf_out_file(g, "config.json", "x", 1) == AC_ERR_ARG && error_has("config.json"), "a file twice: %s",
          ac_last_error());
    for (size_t i = 0; i < N_WRITTEN; i++)
        CHECK(ac_gguf_out_tensor(g, WRITTEN[i].name, WRITTEN[i].dtype, WRITTEN[i].ndim, WRITTEN[i].shape) == AC_OK,
              "tensor %s: %s", WRITTEN[i].name, ac_last_error());
    CHECK(ac_gguf_out_tensor(g, "conv.weight", AC_DTYPE_Q8_0, 3, (const int64_t[]){4, 32, 3}) == AC_ERR_ARG &&
              error_has("conv.weight") && error_has("not whole blocks"),
          "Q8_0 rows of 3: %s", ac_last_error());
    return g;
}

static void test_writer(void)
{
    const char *path = work_path("written.gguf");
    ac_gguf_out *g = writer();
    FILE *f = fopen(path, "wb");
    CHECK(f && ac_gguf_out_write(g, f, path, fill_pattern, NULL) == AC_OK, "write: %s", ac_last_error());
    if (f) fclose(f);
    ac_gguf_out_free(g);
    ac_tensor_file *t = NULL;
    CHECK(ac_tensor_file_open(path, &t) == AC_OK, "read back: %s", ac_last_error());
    if (!t) return;
    CHECK(t->n_tensors == N_WRITTEN, "%zu tensors", t->n_tensors);
    for (size_t i = 0; i < N_WRITTEN && i < t->n_tensors; i++) {
        const ac_tensor *x = &t->tensors[i];
        CHECK(strcmp(x->name, WRITTEN[i].name) == 0 && x->dtype == WRITTEN[i].dtype &&
                  shape_is(x, WRITTEN[i].ndim, WRITTEN[i].shape),
              "tensor %zu: '%s' %s", i, x->name, ac_dtype_name(x->dtype));
        int same = (size_t)((const char *)x->data - (const char *)t->map) % 32 == 0;
        for (size_t k = 0; k < x->nbytes && same; k++) same = ((const unsigned char *)x->data)[k] == (unsigned char)(i * 31 + k * 7);
        CHECK(same, "tensor '%s': bytes or alignment", x->name);
    }
    const char *arch = ac_tensor_file_meta(t, "general.architecture"), *v = ac_tensor_file_meta(t, "audiocpp.model_spec.version");
    CHECK(arch && strcmp(arch, "audiocpp") == 0 && v && strcmp(v, "7") == 0, "metadata");
    const ac_embedded_file *c = ac_tensor_file_embedded(t, "config.json"), *e = ac_tensor_file_embedded(t, "sub/empty.txt");
    CHECK(t->n_files == 2 && c && c->size == 8 && memcmp(c->data, "{\"a\": 1}", 8) == 0 && e && e->size == 0,
          "embedded files");
    ac_tensor_file_close(t);

    /* a fill that fails stops the write with its error */
    g = writer();
    f = fopen(path, "wb");
    CHECK(f && ac_gguf_out_write(g, f, path, fill_fail, NULL) == AC_ERR_CANCELLED && error_has("tensor 2"),
          "a failing fill: %s", ac_last_error());
    if (f) fclose(f);
    ac_gguf_out_free(g);
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    RUN(test_good_files);
    RUN(test_minimal);
    RUN(test_bad_files);
    RUN(test_writer);
    return test_finish();
}
