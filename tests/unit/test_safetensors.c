/* src/io/safetensors and src/io/weights on small files built here, every
 * malformed header we can think of, and the real Silero VAD file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audioc.h"
#include "base/error.h"
#include "base/f16.h"
#include "io/tensor_file.h"
#include "io/weights.h"
#include "tensor/mat.h"
#include "tensor/quant.h"
#include "test_util.h"

/* A file image: 8-byte little-endian header length, JSON padded with PAD
 * spaces, then DATA. */
typedef struct {
    unsigned char *buf;
    size_t size;
} image;

static image make_image(const char *json, size_t pad, const void *data, size_t n)
{
    size_t hlen = strlen(json) + pad;
    image im = {malloc(8 + hlen + n + 1), 8 + hlen + n};
    for (int i = 0; i < 8; i++) im.buf[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
    memcpy(im.buf + 8, json, strlen(json));
    memset(im.buf + 8 + strlen(json), ' ', pad);
    if (n) memcpy(im.buf + 8 + hlen, data, n);
    return im;
}

static const char *save(const char *name, image im)
{
    const char *path = work_path(name);
    CHECK(write_file(path, im.buf, im.size) == 0, "cannot write %s", path);
    free(im.buf);
    return path;
}

/* ---- good files -------------------------------------------------------- */

/* F32 a[2,3], F16 h[4], BF16 b[2], I64 i[3], scalar s, empty z[0,5]. */
static const char GOOD_JSON[] =
    "{\"__metadata__\":{\"format\":\"pt\",\"note\":\"hi\"},"
    "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
    "\"h\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[24,32]},"
    "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[32,36]},"
    "\"i\":{\"dtype\":\"I64\",\"shape\":[3],\"data_offsets\":[36,60]},"
    "\"s\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[60,64]},"
    "\"z\":{\"dtype\":\"F32\",\"shape\":[0,5],\"data_offsets\":[64,64]}}";
static const float H_VALUES[4] = {1.0f, -2.0f, 0.5f, 65504.0f};
static const float B_VALUES[2] = {1.0f, -0.5f};
static const int64_t I_VALUES[3] = {1, -1, (int64_t)1 << 40};

static void good_data(unsigned char *d)
{
    for (int k = 0; k < 6; k++) memcpy(d + 4 * k, &(float){(float)k + 0.25f}, 4);
    for (int k = 0; k < 4; k++) memcpy(d + 24 + 2 * k, &(uint16_t){ac_f32_to_f16(H_VALUES[k])}, 2);
    for (int k = 0; k < 2; k++) memcpy(d + 32 + 2 * k, &(uint16_t){ac_f32_to_bf16(B_VALUES[k])}, 2);
    memcpy(d + 36, I_VALUES, 24);
    memcpy(d + 60, &(float){3.25f}, 4);
}

/* Header padding that makes the data start at offset 8 + hlen. */
static const char *good_file(const char *name, size_t pad)
{
    unsigned char data[64];
    good_data(data);
    return save(name, make_image(GOOD_JSON, pad, data, sizeof data));
}

static int shape_is(const ac_tensor *t, int ndim, const int64_t *shape)
{
    if (!t || t->ndim != ndim) return 0;
    for (int i = 0; i < ndim; i++)
        if (t->shape[i] != shape[i]) return 0;
    return 1;
}

static void test_good_file(void)
{
    /* pad so that 8 + hlen is a multiple of 8: the data is aligned */
    size_t pad = (8 - (strlen(GOOD_JSON) % 8)) % 8 + 16;
    const char *path = good_file("good.safetensors", pad);
    ac_tensor_file *st = NULL;
    ac_status s = ac_tensor_file_open(path, &st);
    CHECK(s == AC_OK && st, "open: %s", ac_last_error());
    if (!st) return;
    CHECK(st->n_tensors == 6, "%zu tensors", st->n_tensors);
    const char *order = "ahbisz";
    for (size_t i = 0; i < 6 && i < st->n_tensors; i++)
        CHECK(st->tensors[i].name[0] == order[i] && st->tensors[i].name[1] == 0, "header order %zu: %s", i,
              st->tensors[i].name);
    const ac_tensor *a = ac_tensor_file_find(st, "a");
    CHECK(shape_is(a, 2, (int64_t[]){2, 3}) && a->dtype == AC_DTYPE_F32 && a->numel == 6 && a->nbytes == 24,
          "tensor a");
    if (a) {
        float v[6];
        memcpy(v, a->data, sizeof v);
        CHECK(v[0] == 0.25f && v[5] == 5.25f, "a values %g %g", v[0], v[5]);
    }
    const ac_tensor *h = ac_tensor_file_find(st, "h"), *b = ac_tensor_file_find(st, "b"), *i = ac_tensor_file_find(st, "i");
    CHECK(shape_is(h, 1, (int64_t[]){4}) && h->dtype == AC_DTYPE_F16 && h->nbytes == 8, "tensor h");
    CHECK(shape_is(b, 1, (int64_t[]){2}) && b->dtype == AC_DTYPE_BF16 && b->nbytes == 4, "tensor b");
    CHECK(shape_is(i, 1, (int64_t[]){3}) && i->dtype == AC_DTYPE_I64 && i->nbytes == 24, "tensor i");
    if (i) {
        int64_t v[3];
        memcpy(v, i->data, sizeof v);
        CHECK(v[0] == 1 && v[1] == -1 && v[2] == (int64_t)1 << 40, "I64 values");
    }
    const ac_tensor *sc = ac_tensor_file_find(st, "s"), *z = ac_tensor_file_find(st, "z");
    CHECK(sc && sc->ndim == 0 && sc->numel == 1 && sc->nbytes == 4 && *(const float *)sc->data == 3.25f,
          "scalar");
    CHECK(shape_is(z, 2, (int64_t[]){0, 5}) && z->numel == 0 && z->nbytes == 0, "zero-size tensor");
    CHECK(ac_tensor_file_find(st, "nope") == NULL, "find of a missing name");
    const char *fmt = ac_tensor_file_meta(st, "format"), *note = ac_tensor_file_meta(st, "note");
    CHECK(st->n_meta == 2 && fmt && strcmp(fmt, "pt") == 0 && note && strcmp(note, "hi") == 0, "metadata");
    CHECK(ac_tensor_file_meta(st, "absent") == NULL, "missing metadata key");
    CHECK(strcmp(ac_dtype_name(AC_DTYPE_BF16), "BF16") == 0 && ac_dtype_bytes(AC_DTYPE_I64, 1) == 8, "dtype table");
    char sh[32];
    CHECK(strcmp(ac_shape_str((int64_t[]){2, 3}, 2, sh, sizeof sh), "[2, 3]") == 0, "shape string %s", sh);
    CHECK(strcmp(ac_shape_str(NULL, 0, sh, sizeof sh), "[]") == 0, "empty shape string %s", sh);
    ac_tensor_file_close(st);
    ac_tensor_file_close(NULL);
}

/* The weight table on the good file, with aligned and unaligned data. */
static void check_weights(const char *path, int aligned)
{
    ac_weights *w = NULL;
    ac_status s = ac_weights_open(path, &w);
    CHECK(s == AC_OK && w, "weights open %s: %s", path, ac_last_error());
    if (!w) return;
    const float *p = NULL;
    s = ac_weights_f32(w, AC_SHAPE(2, 3), &p, "a");
    CHECK(s == AC_OK && p && p[0] == 0.25f && p[1] == 1.25f && p[5] == 5.25f, "a as f32 (aligned %d)", aligned);
    if (p) CHECK(((uintptr_t)p & 3) == 0, "f32 pointer is aligned");
    if (aligned && p) CHECK((const void *)p == ac_tensor_file_find(w->st, "a")->data, "aligned F32 used in place");
    s = ac_weights_f32(w, AC_SHAPE(4), &p, "h");
    CHECK(s == AC_OK && p && p[0] == 1 && p[1] == -2 && p[2] == 0.5f && p[3] == 65504, "F16 converted");
    s = ac_weights_f32(w, AC_SHAPE(2), &p, "b");
    CHECK(s == AC_OK && p && p[0] == 1 && p[1] == -0.5f, "BF16 converted");
    s = ac_weights_f32(w, 0, (const int64_t[]){0}, &p, "s");
    CHECK(s == AC_OK && p && p[0] == 3.25f, "scalar");
    float *copy = NULL;
    s = ac_weights_f32_copy(w, AC_SHAPE(2, 3), &copy, "a");
    CHECK(s == AC_OK && copy && (const void *)copy != ac_tensor_file_find(w->st, "a")->data && copy[4] == 4.25f, "copy");
    if (copy) copy[0] = 9; /* the copy is ours to change */
    CHECK(ac_weights_find(w, "i") && !ac_weights_find(w, "x"), "has");

    ac_error_clear();
    s = ac_weights_f32(w, AC_SHAPE(1), &p, "x");
    CHECK(s == AC_ERR_MODEL && error_has("missing tensor 'x'") && error_has(".safetensors"), "missing: %s",
          ac_last_error());
    s = ac_weights_f32(w, AC_SHAPE(3, 2), &p, "a");
    CHECK(s == AC_ERR_MODEL && error_has("tensor 'a' has shape [2, 3], expected [3, 2]"), "shape: %s",
          ac_last_error());
    s = ac_weights_f32(w, AC_SHAPE(6), &p, "a");
    CHECK(s == AC_ERR_MODEL && error_has("expected [6]"), "rank: %s", ac_last_error());
    s = ac_weights_f32_copy(w, AC_SHAPE(3), &copy, "i");
    CHECK(s == AC_ERR_MODEL && error_has("'i'") && error_has("I64"), "I64 as float: %s", ac_last_error());
    float *scratch = ac_weights_scratch(w, 100);
    CHECK(scratch && scratch[99] == 0, "scratch is zeroed");
    ac_weights_free(w);
}

static void test_weights(void)
{
    size_t base = strlen(GOOD_JSON) % 8;
    size_t pad_aligned = (8 - base) % 8;
    check_weights(good_file("aligned.safetensors", pad_aligned), 1);
    /* a header length that is not a multiple of 4 leaves the data unaligned */
    size_t pad_odd = pad_aligned + 1;
    check_weights(good_file("unaligned.safetensors", pad_odd), 0);
    ac_weights *w = (ac_weights *)1;
    ac_error_clear();
    CHECK(ac_weights_open(work_path("does-not-exist.safetensors"), &w) == AC_ERR_IO && w == NULL &&
              error_has("does-not-exist.safetensors: cannot open"),
          "missing file: %s", ac_last_error());
}

/* Hot matrices keep their values when moved out of the file mapping, a
 * 20 MB one (several pieces of the copy) at an offset off page boundaries
 * and a small one sharing its pages. */
static void test_make_hot(void)
{
    enum { ROWS = 2560, COLS = 4096, SMALL = 3 };
    const size_t big = (size_t)ROWS * COLS * 2, small = (size_t)SMALL * COLS * 2;
    char json[512];
    snprintf(json, sizeof json,
             "{\"s\":{\"dtype\":\"F16\",\"shape\":[%d,%d],\"data_offsets\":[0,%zu]},"
             "\"b\":{\"dtype\":\"F16\",\"shape\":[%d,%d],\"data_offsets\":[%zu,%zu]}}",
             SMALL, COLS, small, ROWS, COLS, small, small + big);
    uint16_t *data = malloc(small + big);
    for (size_t i = 0; i < (small + big) / 2; i++) data[i] = ac_f32_to_f16((float)(i % 2039) - 1000.0f);
    const char *path = save("hot.safetensors", make_image(json, (8 - strlen(json) % 8) % 8, data, small + big));
    ac_weights *w;
    CHECK(ac_weights_open(path, &w) == AC_OK, "open: %s", ac_last_error());
    if (!w) {
        free(data);
        return;
    }
    ac_mat ms, mb;
    CHECK(ac_weights_mat(w, AC_SHAPE(SMALL, COLS), &ms, "s") == AC_OK &&
              ac_weights_mat(w, AC_SHAPE(ROWS, COLS), &mb, "b") == AC_OK,
          "matrices: %s", ac_last_error());
    ac_mat *hot[] = {&mb, &ms};
    CHECK(ac_weights_make_hot(w, hot, 2) == AC_OK, "make hot: %s", ac_last_error());
    CHECK(memcmp(ms.data, data, small) == 0 && memcmp(mb.data, data + small / 2, big) == 0,
          "hot matrices hold the file's values");
    ac_weights_free(w);
    free(data);
}

/* Weight types (ac_weights_set_type): matrices converted at load through
 * tensor/quant's rows, rows of Q8_0 only in multiples of 32, the keep
 * scopes, a 16-bit file asked for f32 only dequantized, the record of
 * each matrix's type, and a converted matrix made hot. */
static void test_weight_types(void)
{
    enum { R = 4, C = 64 };
    static const char json[] =
        "{\"m\":{\"dtype\":\"F32\",\"shape\":[4,64],\"data_offsets\":[0,1024]},"
        "\"odd\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[1024,1048]},"
        "\"h\":{\"dtype\":\"F16\",\"shape\":[2,64],\"data_offsets\":[1048,1304]}}";
    unsigned char data[1304];
    float m[R * C], odd[6], h[2 * C];
    uint32_t seed = 7;
    fill_random(m, R * C, -2, 2, &seed);
    fill_random(odd, 6, -1, 1, &seed);
    memcpy(data, m, sizeof m);
    memcpy(data + 1024, odd, sizeof odd);
    for (int i = 0; i < 2 * C; i++) {
        uint16_t v = ac_f32_to_f16((float)i / 8 - 3);
        h[i] = ac_f16_to_f32(v);
        memcpy(data + 1048 + 2 * i, &v, 2);
    }
    const char *path = save("types.safetensors", make_image(json, (8 - strlen(json) % 8) % 8, data, sizeof data));
    ac_weights *w;
    CHECK(ac_weights_open(path, &w) == AC_OK, "open: %s", ac_last_error());
    if (!w) return;
    CHECK(ac_weights_set_type(w, (ac_weight_type)9) == AC_ERR_ARG && error_has("types.safetensors"),
          "a type out of range: %s", ac_last_error());
    CHECK(ac_weights_set_type(w, AC_WEIGHTS_Q8_0) == AC_OK, "q8_0: %s", ac_last_error());
    ac_mat q, o, k16, k32, hq;
    CHECK(ac_weights_mat(w, AC_SHAPE(R, C), &q, "m") == AC_OK && ac_weights_mat(w, AC_SHAPE(2, 3), &o, "odd") == AC_OK,
          "matrices: %s", ac_last_error());
    ac_block_q8_0 want[R * C / AC_QK8_0];
    ac_quantize_row(AC_DTYPE_Q8_0, m, want, R * C);
    CHECK(q.dtype == AC_DTYPE_Q8_0 && memcmp(q.data, want, sizeof want) == 0, "F32 -> Q8_0 as ac_quantize_row");
    CHECK(o.dtype == AC_DTYPE_F32 && memcmp(o.data, odd, sizeof odd) == 0, "rows of 3 stay F32");
    int was = ac_weights_keep(w, AC_KEEP_16);
    CHECK(was == 0 && ac_weights_mat(w, AC_SHAPE(R, C), &k16, "m") == AC_OK && k16.dtype == AC_DTYPE_BF16,
          "kept to 16 bits: BF16 (%s)", ac_dtype_name(k16.dtype));
    CHECK(ac_weights_mat(w, AC_SHAPE(2, C), &hq, "h") == AC_OK && hq.dtype == AC_DTYPE_BF16, "an F16 one in BF16 too");
    ac_weights_keep(w, AC_KEEP_STORED);
    CHECK(ac_weights_mat(w, AC_SHAPE(R, C), &k32, "m") == AC_OK && k32.dtype == AC_DTYPE_F32, "kept as stored");
    ac_weights_keep(w, was);
    float back[R * C];
    ac_mat_rows(&k16, 0, R, back);
    double err = 0;
    for (int i = 0; i < R * C; i++) err = fmax(err, fabs(back[i] - m[i]) / fmax(1e-3, fabs(m[i])));
    CHECK(err < 1.0 / 128, "BF16 within its rounding (%g)", err);
    ac_mat *hot[] = {&q};
    CHECK(ac_weights_make_hot(w, hot, 1) == AC_OK && memcmp(q.data, want, sizeof want) == 0,
          "a converted matrix made hot keeps its values");
    size_t n;
    const ac_weight_held *held = ac_weights_held(w, &n);
    static const struct { const char *name; ac_dtype stored, held; } rec[] = {
        {"m", AC_DTYPE_F32, AC_DTYPE_Q8_0}, {"odd", AC_DTYPE_F32, AC_DTYPE_F32}, {"m", AC_DTYPE_F32, AC_DTYPE_BF16},
        {"h", AC_DTYPE_F16, AC_DTYPE_BF16}, {"m", AC_DTYPE_F32, AC_DTYPE_F32}};
    CHECK(n == 5, "five matrices recorded (%zu)", n);
    for (size_t i = 0; i < n && i < 5; i++)
        CHECK(!strcmp(held[i].name, rec[i].name) && held[i].stored == rec[i].stored && held[i].held == rec[i].held,
              "record %zu: %s %s -> %s", i, held[i].name, ac_dtype_name(held[i].stored), ac_dtype_name(held[i].held));
    /* a 16-bit file asked for f32: dequantized, the same values */
    ac_mat hf;
    CHECK(ac_weights_set_type(w, AC_WEIGHTS_F32) == AC_OK && ac_weights_mat(w, AC_SHAPE(2, C), &hf, "h") == AC_OK &&
              hf.dtype == AC_DTYPE_F32 && memcmp(hf.data, h, sizeof h) == 0,
          "F16 -> F32 exact");
    /* stored: as the file has it */
    ac_mat st;
    CHECK(ac_weights_set_type(w, AC_WEIGHTS_STORED) == AC_OK && ac_weights_mat(w, AC_SHAPE(2, C), &st, "h") == AC_OK &&
              st.dtype == AC_DTYPE_F16,
          "stored keeps F16");
    ac_weights_free(w);
}

/* The resident set of this process in kB: now (VmRSS) or at its peak (VmHWM). */
static long rss_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, strlen(field))) kb = atol(line + strlen(field) + 1);
    if (f) fclose(f);
    return kb;
}

/* A 32 MB F32 matrix asked for as Q8_0 (8.5 MB) adds about 8.5 MB to the
 * resident set, and at the peak one 8 MB piece of the file more (measured:
 * +10.6 MB and +20.6 MB; without the release +42 MB): the file's pages
 * behind the rows converted are released as it goes. The peak is reset
 * first (clear_refs 5); where that is refused only the end is checked. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED_BUILD 1
#endif
#endif
#ifndef SANITIZED_BUILD
#define SANITIZED_BUILD 0
#endif

static void test_convert_memory(void)
{
    enum { ROWS = 2048, COLS = 4096 };
    const size_t bytes = (size_t)ROWS * COLS * 4;
    char json[256];
    snprintf(json, sizeof json, "{\"m\":{\"dtype\":\"F32\",\"shape\":[%d,%d],\"data_offsets\":[0,%zu]}}", ROWS, COLS,
             bytes);
    float *data = malloc(bytes);
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++) data[i] = (float)(i % 4093) - 2000.0f;
    const char *path = save("convert_memory.safetensors", make_image(json, (8 - strlen(json) % 8) % 8, data, bytes));
    free(data);
    FILE *f = fopen("/proc/self/clear_refs", "w");
    int peak_reset = f && fputs("5", f) >= 0;
    if (f && fclose(f)) peak_reset = 0;
    ac_weights *w;
    long before = rss_kb("VmRSS:");
    CHECK(ac_weights_open(path, &w) == AC_OK && ac_weights_set_type(w, AC_WEIGHTS_Q8_0) == AC_OK, "open: %s",
          ac_last_error());
    if (!w) return;
    ac_mat m;
    CHECK(ac_weights_mat(w, AC_SHAPE(ROWS, COLS), &m, "m") == AC_OK && m.dtype == AC_DTYPE_Q8_0, "q8_0: %s",
          ac_last_error());
    long now = rss_kb("VmRSS:") - before, peak = rss_kb("VmHWM:") - before;
    fprintf(stderr, "converted 32 MB of F32 to Q8_0: resident +%ld kB, peak +%ld kB%s\n", now, peak,
            peak_reset ? "" : " (peak not reset: not checked)");
    if (SANITIZED_BUILD) {
        /* AddressSanitizer's shadow and quarantine are resident too: the bounds are the Release build's */
        fprintf(stderr, "  (sanitizer build: the resident bounds are checked in the Release build)\n");
    } else {
        CHECK(now < 14 * 1024, "resident after: +%ld kB", now);
        CHECK(!peak_reset || peak < 26 * 1024, "resident at the peak: +%ld kB", peak);
    }
    ac_weights_free(w);
}

/* Matrices converted to Q8_0 and then made hot are held once: the hot
 * region's copy (17 MB here), not it and the converted buffers it was
 * copied from. Those buffers are pages of their own, given back when
 * freed; from malloc's heap they stayed resident (measured: +25.0 MB
 * against +18.0 MB; Hviske v6's decoder under --weights q8_0 kept 436 MiB
 * twice). Malloc serves them from the heap once its mmap threshold is above
 * their size, which freeing a larger mapped block does (a real load frees
 * the tokenizer's file): done here first. */
static void test_hot_convert_memory(void)
{
    enum { N = 8, ROWS = 256, COLS = 8192 };
    const size_t bytes = (size_t)ROWS * COLS * 4;
    char json[1024];
    size_t len = 0;
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(json + len, sizeof json - len,
                                "%s\"m%d\":{\"dtype\":\"F32\",\"shape\":[%d,%d],\"data_offsets\":[%zu,%zu]}%s",
                                i ? "," : "{", i, ROWS, COLS, i * bytes, (i + 1) * bytes, i == N - 1 ? "}" : "");
    float *data = malloc(N * bytes);
    for (size_t i = 0; i < N * bytes / 4; i++) data[i] = (float)(i % 4093) - 2000.0f;
    const char *path = save("hot_convert.safetensors", make_image(json, (8 - len % 8) % 8, data, N * bytes));
    free(data);
    void *volatile raise = malloc((size_t)12 << 20);
    free(raise);
    long before = rss_kb("VmRSS:");
    ac_weights *w;
    CHECK(ac_weights_open(path, &w) == AC_OK && ac_weights_set_type(w, AC_WEIGHTS_Q8_0) == AC_OK, "open: %s",
          ac_last_error());
    if (!w) return;
    ac_mat m[N], *hot[N];
    for (int i = 0; i < N; i++) {
        CHECK(ac_weights_mat(w, AC_SHAPE(ROWS, COLS), &m[i], "m%d", i) == AC_OK && m[i].dtype == AC_DTYPE_Q8_0,
              "m%d: %s", i, ac_last_error());
        hot[i] = &m[i];
    }
    CHECK(ac_weights_make_hot(w, hot, N) == AC_OK, "make hot: %s", ac_last_error());
    long now = rss_kb("VmRSS:") - before, held = (long)(N * (size_t)ac_dtype_bytes(AC_DTYPE_Q8_0, COLS) * ROWS / 1024);
    fprintf(stderr, "%d matrices to Q8_0, made hot: resident +%ld kB (held %ld kB)\n", N, now, held);
    if (!SANITIZED_BUILD) CHECK(now < held + 4 * 1024, "resident after: +%ld kB for %ld kB held", now, held);
    ac_weights_free(w);
}

/* ac_weights_done after a loader's own layout of a tensor: an F16
 * tensor's f32 copy is freed (the table owns one buffer fewer), an F32
 * tensor read in place gives its file pages back (16 MB here; measured
 * +14.0 MB read, -2.0 MB after). */
static void test_weights_done(void)
{
    enum { ROWS = 1024, COLS = 4096 };
    const size_t f32 = (size_t)ROWS * COLS * 4, f16 = 64 * 2;
    char json[256];
    snprintf(json, sizeof json,
             "{\"a\":{\"dtype\":\"F32\",\"shape\":[%d,%d],\"data_offsets\":[0,%zu]},"
             "\"h\":{\"dtype\":\"F16\",\"shape\":[64],\"data_offsets\":[%zu,%zu]}}",
             ROWS, COLS, f32, f32, f32 + f16);
    unsigned char *data = calloc(1, f32 + f16);
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++) ((float *)data)[i] = (float)(i % 1021);
    const char *path = save("weights_done.safetensors", make_image(json, (8 - strlen(json) % 8) % 8, data, f32 + f16));
    free(data);
    ac_weights *w;
    CHECK(ac_weights_open(path, &w) == AC_OK, "open: %s", ac_last_error());
    if (!w) return;
    const float *h;
    CHECK(ac_weights_f32(w, AC_SHAPE(64), &h, "h") == AC_OK, "h: %s", ac_last_error());
    size_t owned = w->n_owned;
    ac_weights_done(w, h, 64);
    CHECK(w->n_owned == owned - 1, "the F16 tensor's f32 copy is freed (%zu -> %zu buffers)", owned, w->n_owned);
    long before = rss_kb("VmRSS:");
    const float *a;
    double sum = 0;
    CHECK(ac_weights_f32(w, AC_SHAPE(ROWS, COLS), &a, "a") == AC_OK && w->n_owned == owned - 1,
          "a read in place: %s", ac_last_error());
    for (size_t i = 0; i < (size_t)ROWS * COLS; i += 1024) sum += a[i];
    long read = rss_kb("VmRSS:") - before;
    ac_weights_done(w, a, (size_t)ROWS * COLS);
    long after = rss_kb("VmRSS:") - before;
    fprintf(stderr, "16 MB of F32 read in place: resident +%ld kB, after done +%ld kB (sum %g)\n", read, after, sum);
    CHECK(SANITIZED_BUILD || (read > 12 * 1024 && after < 2 * 1024),
          "the file's pages given back: +%ld kB read, +%ld kB after", read, after);
    ac_weights_free(w);
}

/* Names: formats, a namespace, a name table; linear, norm and BatchNorm
 * lookups, and the errors they give. */
static void test_weight_names(void)
{
    /* part.l.1.fc.weight [2][3], part.l.1.fc.bias [2], part.bn.{weight,bias,running_mean,running_var} [2] */
    static const char json[] =
        "{\"part.l.1.fc.weight\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
        "\"part.l.1.fc.bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[24,32]},"
        "\"part.bn.weight\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[32,40]},"
        "\"part.bn.bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[40,48]},"
        "\"part.bn.running_mean\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[48,56]},"
        "\"part.bn.running_var\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[56,64]},"
        "\"part.bad.weight\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[64,72]},"
        "\"part.bad.bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[72,80]},"
        "\"part.bad.running_mean\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[80,88]},"
        "\"part.bad.running_var\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[88,96]}}";
    const float v[24] = {1, 2, 3, 4, 5, 6, 0.5f, -0.5f, 2, 4, 1, -1, 0, 1, 3, 15, 1, 1, 0, 0, 0, 0, 3, -7};
    const char *path = save("names.safetensors", make_image(json, (8 - strlen(json) % 8) % 8, v, sizeof v));
    ac_weights *w = NULL;
    CHECK(ac_weights_open(path, &w) == AC_OK && w, "open: %s", ac_last_error());
    if (!w) return;
    ac_mat m;
    const float *b, *g;
    CHECK(ac_weights_linear(w, 2, 3, &m, &b, "l.%d.fc", 1) == AC_ERR_MODEL && error_has("missing tensor 'l.1.fc.weight'"),
          "no namespace: %s", ac_last_error());
    CHECK(ac_weights_set_namespace(w, "part.") == AC_OK, "namespace");
    CHECK(ac_weights_linear(w, 2, 3, &m, &b, "l.%d.fc", 1) == AC_OK && m.rows == 2 && m.cols == 3 &&
              ((const float *)m.data)[5] == 6 && b[1] == -0.5f,
          "linear in a namespace: %s", ac_last_error());
    CHECK(ac_weights_linear(w, 2, 3, &m, NULL, "l.%d.fc", 1) == AC_OK, "linear without its bias");
    CHECK(ac_weights_linear(w, 3, 2, &m, &b, "l.%d.fc", 1) == AC_ERR_MODEL &&
              error_has("tensor 'part.l.1.fc.weight' has shape [2, 3], expected [3, 2]"),
          "linear shape: %s", ac_last_error());
    CHECK(ac_weights_norm(w, 2, &g, &b, "bn") == AC_OK && g[0] == 2 && b[1] == -1, "norm");
    CHECK(ac_weights_find(w, "bn.running_%s", "var") && ac_weights_find(w, "l.%d.fc.bias", 1) &&
              !ac_weights_find(w, "l.%d.fc.bias", 2),
          "has and find with formats");
    float *scale, *shift;
    CHECK(ac_weights_batchnorm(w, 2, 0, &scale, &shift, "b%s", "n") == AC_OK, "batchnorm: %s", ac_last_error());
    /* scale = gamma / sqrt(var), shift = beta - mean * scale: gamma 2,4; beta 1,-1; mean 0,1; var 3,15 */
    CHECK(fabsf(scale[0] - 2 / sqrtf(3)) < 1e-6f && fabsf(shift[1] - (-1 - 4 / sqrtf(15))) < 1e-6f, "batchnorm folded");
    CHECK(ac_weights_batchnorm(w, 2, 1e-5f, &scale, &shift, "bad") == AC_ERR_MODEL &&
              error_has("part.bad.running_var has a negative value"),
          "negative variance: %s", ac_last_error());
    /* a name table: the loader's names to the file's */
    static const ac_weight_name table[] = {{"blocks.%d.mlp.weight", "l.%d.fc.weight"},
                                           {"blocks.%d.mlp.bias", "l.%d.fc.bias"}};
    CHECK(ac_weights_set_names(w, table, 2) == AC_OK, "set names");
    CHECK(ac_weights_linear(w, 2, 3, &m, &b, "blocks.%d.mlp", 1) == AC_OK && b[0] == 0.5f, "mapped linear: %s",
          ac_last_error());
    CHECK(ac_weights_vec(w, 2, &b, "bn.bias") == AC_OK && b[0] == 1, "names outside the table pass unchanged");
    CHECK(ac_weights_vec(w, 2, &b, "blocks.%d.mlp.bias", 7) == AC_ERR_MODEL && error_has("'part.l.7.fc.bias'"),
          "a mapped name's error names the file's tensor: %s", ac_last_error());
    static const ac_weight_name bad[] = {{"blocks.%d.x", "layers.%s.x"}};
    CHECK(ac_weights_set_names(w, bad, 1) == AC_ERR_ARG && error_has("conversions differ"), "table with mismatched formats");
    static const ac_weight_name same[] = {{"a.%d.%%.b", "c.%d.%%.d"}};
    CHECK(ac_weights_set_names(w, same, 1) == AC_OK, "%% is no conversion");
    char long_name[300];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    CHECK(ac_weights_vec(w, 2, &b, "%s", long_name) == AC_ERR_ARG && error_has("too long"), "a name too long");
    CHECK(ac_weights_set_namespace(w, long_name) == AC_ERR_ARG, "a namespace too long");
    ac_weights_free(w);
}

/* ---- bad files --------------------------------------------------------- */

/* Both ac_tensor_file_open and ac_safetensors_parse must refuse IM with STATUS (0: any) and a
 * message that names the file and contains NEEDLE. */
static void expect_bad_image(const char *what, image im, ac_status status, const char *needle)
{
    char name[64];
    snprintf(name, sizeof name, "bad_%s.safetensors", what);
    ac_tensor_file *st = (ac_tensor_file *)1;
    ac_error_clear();
    ac_status s = ac_safetensors_parse(im.buf, im.size, name, &st);
    CHECK(s != AC_OK && (!status || s == status) && st == NULL, "%s: parse gave %d", what, s);
    CHECK(error_has(needle) && error_has(name), "%s: message '%s' lacks '%s'", what, ac_last_error(), needle);
    if (s == AC_OK) ac_tensor_file_close(st);
    const char *path = save(name, im);
    ac_error_clear();
    s = ac_tensor_file_open(path, &st);
    CHECK(s != AC_OK && (!status || s == status) && st == NULL, "%s: open gave %d", what, s);
    CHECK(error_has(needle) && error_has(path), "%s: open message '%s'", what, ac_last_error());
    if (s == AC_OK) ac_tensor_file_close(st);
}

static void expect_bad(const char *what, const char *json, size_t data_len, ac_status status, const char *needle)
{
    unsigned char *data = calloc(data_len + 1, 1);
    expect_bad_image(what, make_image(json, 0, data, data_len), status, needle);
    free(data);
}

static image raw(const void *bytes, size_t n)
{
    image im = {malloc(n + 1), n};
    if (n) memcpy(im.buf, bytes, n);
    return im;
}

#define T(name, dtype, shape, b, e) \
    "\"" name "\":{\"dtype\":\"" dtype "\",\"shape\":" shape ",\"data_offsets\":[" #b "," #e "]}"

static void test_bad_files(void)
{
    const ac_status F = AC_ERR_FORMAT;
    expect_bad_image("empty", raw("", 0), F, "too short");
    expect_bad_image("seven", raw("\x10\0\0\0\0\0\0", 7), F, "7 bytes, too short");
    /* header length 100 in a 20-byte file */
    expect_bad_image("truncated_header", raw("\x64\0\0\0\0\0\0\0{\"a\":1}    ", 20), F, "truncated");
    expect_bad_image("huge_header", raw("\0\0\0\x10\0\0\0\0{}", 10), F, "100 MB");
    expect_bad_image("huge_header64", raw("\xff\xff\xff\xff\xff\xff\xff\xff{}", 10), F, "100 MB");
    expect_bad("not_json", "{\"a\": dtype}", 0, F, "not valid JSON");
    expect_bad("array", "[1, 2, 3]", 0, F, "not a JSON object");
    expect_bad("string", "\"abc\"", 0, F, "not a JSON object");
    expect_bad("dtype", "{" T("w", "F64", "[2]", 0, 16) "}", 16, AC_ERR_UNSUPPORTED, "dtype 'F64' is not supported");
    expect_bad("dtype2", "{" T("w", "Q9", "[2]", 0, 16) "}", 16, AC_ERR_UNSUPPORTED, "'Q9'");
    expect_bad("negative", "{" T("w", "F32", "[2,-1]", 0, 8) "}", 8, F, "shape entry 1 is not a non-negative");
    expect_bad("fraction", "{" T("w", "F32", "[1.5]", 0, 8) "}", 8, F, "shape entry 0");
    expect_bad("shape_str", "{" T("w", "F32", "[\"2\"]", 0, 8) "}", 8, F, "shape entry 0");
    expect_bad("ninedims", "{" T("w", "F32", "[1,1,1,1,1,1,1,1,1]", 0, 4) "}", 4, F, "9 dimensions");
    expect_bad("overflow", "{" T("w", "F32", "[4294967296,4294967296,16]", 0, 4) "}", 4, F, "too large");
    expect_bad("past_end", "{" T("w", "F32", "[2]", 0, 8) "}", 4, F, "data_offsets [0, 8] lie outside the 4-byte");
    expect_bad("begin_gt_end", "{" T("w", "F32", "[1]", 8, 4) "}", 8, F, "data_offsets [8, 4]");
    expect_bad("neg_offset", "{" T("w", "F32", "[1]", -4, 0) "}", 8, F, "data_offsets must be two");
    expect_bad("three_offsets", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 8, F,
               "data_offsets must be two");
    expect_bad("size", "{" T("w", "F32", "[2,3]", 0, 20) "}", 24, F, "F32 [2, 3] needs 24 bytes but data_offsets span 20");
    expect_bad("no_dtype", "{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, F, "needs dtype, shape and data_offsets");
    expect_bad("not_object", "{\"w\":[1,2]}", 0, F, "tensor 'w': entry is not an object");
    expect_bad("overlap", "{" T("a", "F32", "[4]", 0, 16) "," T("b", "F32", "[2]", 8, 16) "}", 16, F,
               "tensors 'a' and 'b' overlap");
    expect_bad("same_start", "{" T("a", "F32", "[2]", 0, 8) "," T("b", "F16", "[4]", 0, 8) "}", 8, F, "overlap");
    expect_bad("duplicate", "{" T("a", "F32", "[1]", 0, 4) "," T("a", "F32", "[1]", 4, 8) "}", 8, F,
               "duplicate tensor 'a'");
    expect_bad("duplicate_same", "{" T("a", "F32", "[1]", 0, 4) "," T("a", "F32", "[1]", 0, 4) "}", 4, F,
               "duplicate tensor 'a'");
    expect_bad("meta_value", "{\"__metadata__\":{\"k\":1}}", 0, F, "__metadata__ value 'k' is not a string");
    expect_bad("meta_type", "{\"__metadata__\":[]}", 0, F, "__metadata__ is not an object");
    expect_bad("meta_twice", "{\"__metadata__\":{},\"__metadata__\":{}}", 0, F, "__metadata__ appears twice");
    expect_bad("trailing", "{" T("a", "F32", "[1]", 0, 4) "}xyz", 4, F, "trailing bytes after the JSON");
    expect_bad("two_objects", "{}{}", 0, F, "trailing bytes");
    /* a good file cut inside its data */
    unsigned char data[64];
    good_data(data);
    expect_bad_image("truncated_data", make_image(GOOD_JSON, 0, data, 50), F, "lie outside the 50-byte data section");
    /* a directory is not a file */
    ac_tensor_file *st = NULL;
    ac_error_clear();
    CHECK(ac_tensor_file_open(test_work_dir, &st) == AC_ERR_IO && st == NULL && error_has("not a regular file"),
          "directory: %s", ac_last_error());
}

/* A zero-size tensor sorted between two overlapping tensors must not hide
 * the overlap (a [0,16) and c [8,16) share bytes; z sits at 4). */
static void test_overlap_around_empty(void)
{
    expect_bad("overlap_empty",
               "{" T("a", "F32", "[4]", 0, 16) "," T("z", "F32", "[0]", 4, 4) "," T("c", "F32", "[2]", 8, 16) "}", 16,
               AC_ERR_FORMAT, "overlap");
}

/* Good variations: padding, empty header, data not covered by tensors. */
static void test_lenient(void)
{
    ac_tensor_file *st = NULL;
    image im = make_image("{}", 6, NULL, 0);
    CHECK(ac_safetensors_parse(im.buf, im.size, "empty", &st) == AC_OK && st && st->n_tensors == 0, "empty header: %s",
          ac_last_error());
    ac_tensor_file_close(st);
    free(im.buf);
    /* whitespace (incl. newlines) around the JSON is padding */
    im = make_image("\n {" T("a", "F32", "[1]", 0, 4) "}\n", 3, "\0\0\x80\x3f", 4);
    CHECK(ac_safetensors_parse(im.buf, im.size, "ws", &st) == AC_OK && st && *(const float *)st->tensors[0].data == 1.0f,
          "whitespace padding: %s", ac_last_error());
    ac_tensor_file_close(st);
    free(im.buf);
    /* adjacent, zero-size at the same offset as a real tensor is no overlap */
    im = make_image("{" T("a", "F32", "[1]", 0, 4) "," T("z", "F32", "[0]", 0, 0) "," T("b", "F32", "[1]", 4, 8) "}", 0,
                    "\0\0\x80\x3f\0\0\0\x40", 8);
    CHECK(ac_safetensors_parse(im.buf, im.size, "adjacent", &st) == AC_OK && st && st->n_tensors == 3, "adjacent: %s",
          ac_last_error());
    ac_tensor_file_close(st);
    free(im.buf);
}

static void test_silero(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/framework/models/silero_vad/silero_vad_16k.safetensors", test_data_dir);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "skip test_silero: %s not found\n", path);
        return;
    }
    fclose(f);
    ac_weights *w = NULL;
    CHECK(ac_weights_open(path, &w) == AC_OK && w, "open silero: %s", ac_last_error());
    if (!w) return;
    CHECK(w->st->n_tensors == 15, "%zu tensors", w->st->n_tensors);
    CHECK(strcmp(w->file, "silero_vad_16k.safetensors") == 0, "short name %s", w->file);
    const float *p = NULL;
    CHECK(ac_weights_f32(w, AC_SHAPE(128, 129, 3), &p, "conv1.weight") == AC_OK && p, "conv1.weight");
    if (p) {
        double sum = 0;
        for (int i = 0; i < 128 * 129 * 3; i++) sum += p[i];
        CHECK(fabsf(p[0] - 0.05523581f) < 1e-7f && fabs(sum - -884.19214) < 1e-2, "conv1.weight[0] %g sum %g", p[0],
              sum);
    }
    CHECK(ac_weights_f32(w, AC_SHAPE(1), &p, "final_conv.bias") == AC_OK && p && fabsf(p[0] - -0.5740389f) < 1e-6f,
          "final_conv.bias %g", p ? p[0] : 0);
    CHECK(ac_weights_f32(w, AC_SHAPE(258, 1, 256), &p, "stft_conv.weight") == AC_OK, "stft_conv.weight");
    ac_weights_free(w);
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    RUN(test_good_file);
    RUN(test_weights);
    RUN(test_make_hot);
    RUN(test_weight_types);
    RUN(test_convert_memory);
    RUN(test_hot_convert_memory);
    RUN(test_weights_done);
    RUN(test_weight_names);
    RUN(test_bad_files);
    RUN(test_overlap_around_empty);
    RUN(test_lenient);
    RUN(test_silero);
    return test_finish();
}
