#include "io/weights.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/error.h"
#include "base/f16.h"
#include "base/mem.h"
#include "base/threadpool.h"
#include "tensor/kernels.h"
#include "tensor/quant.h"

#define HUGE_PAGE (2u << 20)
#define HOT_PIECE ((size_t)8 << 20)   /* bytes copied or converted before the file pages behind them are released */

ac_status ac_weights_open(const char *path, ac_weights **out)
{
    *out = NULL;
    ac_weights *w = ac_calloc(1, sizeof *w);
    if (!w) return AC_ERR_NOMEM;
    ac_status s = ac_tensor_file_open(path, &w->st);
    if (s) {
        free(w);
        return s;
    }
    const char *slash = strrchr(w->st->path, '/');
    w->file = slash ? slash + 1 : w->st->path;
    *out = w;
    return AC_OK;
}

static _Thread_local ac_weights_recorder *recorder;

void ac_weights_record(ac_weights_recorder *r) { recorder = r; }

static void free_table(ac_weights *w);

/* Buffers of this size and more are pages of their own (ac_pages_alloc):
 * one that malloc served from the heap (it does, up to its mmap threshold,
 * which a freed mapped block as large as the tokenizer's file raises) stays
 * resident after free while anything lives above it, so a converted matrix
 * that ac_weights_make_hot moves would be held twice. */
#define PAGES_FROM ((size_t)1 << 20)

static void free_owned(const struct ac_weights_owned *o)
{
    if (o->size >= PAGES_FROM) ac_pages_free(o->p, o->size);
    else ac_free_aligned(o->p);
}

void ac_weights_recorder_free(ac_weights_recorder *r)
{
    for (size_t i = 0; i < r->n; i++) free_table(r->tables[i]);
    free(r->tables);
    *r = (ac_weights_recorder){0};
}

void ac_weights_free(ac_weights *w)
{
    if (!w) return;
    if (recorder) {
        if (recorder->n == recorder->cap) {
            size_t cap = recorder->cap ? 2 * recorder->cap : 16;
            ac_weights **v = realloc(recorder->tables, cap * sizeof *v);
            if (!v) {
                recorder->failed = 1;
                free_table(w);
                return;
            }
            recorder->tables = v;
            recorder->cap = cap;
        }
        recorder->tables[recorder->n++] = w;
        return;
    }
    free_table(w);
}

static void free_table(ac_weights *w)
{
    if (w->hot) munmap(w->hot, w->hot_size);
    for (size_t i = 0; i < w->n_owned; i++) free_owned(&w->owned[i]);
    free(w->owned);
    for (size_t i = 0; i < w->n_held; i++) free(w->held[i].name);
    free(w->held);
    ac_tensor_file_close(w->st);
    free(w);
}

/* ---- names ----------------------------------------------------------- */

#define NAME_LEN 256

/* The conversion at P ('%' ... letter), its length; 0 at the end. */
static size_t next_conversion(const char **p)
{
    const char *s = *p;
    for (;;) {
        s = strchr(s, '%');
        if (!s) return 0;
        if (s[1] == '%') {
            s += 2;
            continue;
        }
        size_t n = 1 + strcspn(s + 1, "diouxXeEfFgGaAcspn");
        *p = s + n + (s[n] != 0);
        return n + (s[n] != 0);
    }
}

static int same_conversions(const char *a, const char *b)
{
    for (;;) {
        const char *pa = a, *pb = b;
        size_t na = next_conversion(&pa), nb = next_conversion(&pb);
        if (na != nb || memcmp(pa - na, pb - nb, na)) return 0;
        if (!na) return 1;
        a = pa, b = pb;
    }
}

ac_status ac_weights_set_namespace(ac_weights *w, const char *ns)
{
    size_t n = strlen(ns);
    if (n >= sizeof w->ns) return ac_error(AC_ERR_ARG, "%s: namespace '%s' is too long", w->file, ns);
    memcpy(w->ns, ns, n + 1);
    return AC_OK;
}

ac_status ac_weights_set_names(ac_weights *w, const ac_weight_name *table, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!same_conversions(table[i].ours, table[i].theirs))
            return ac_error(AC_ERR_ARG, "%s: name table maps '%s' to '%s', whose conversions differ", w->file,
                            table[i].ours, table[i].theirs);
    w->names = table;
    w->n_names = n;
    return AC_OK;
}

/* The file's name for FMT and AP in BUF[NAME_LEN]. */
static ac_status resolve(const ac_weights *w, char *buf, const char *fmt, va_list ap)
{
    for (size_t i = 0; i < w->n_names; i++)
        if (!strcmp(w->names[i].ours, fmt)) {
            fmt = w->names[i].theirs;
            break;
        }
    size_t ns = strlen(w->ns);
    memcpy(buf, w->ns, ns);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral" /* FMT is the caller's literal or its pair in the table */
    int n = vsnprintf(buf + ns, NAME_LEN - ns, fmt, ap);
#pragma GCC diagnostic pop
    if (n < 0 || (size_t)n >= NAME_LEN - ns)
        return ac_error(AC_ERR_ARG, "%s: a tensor name of format '%s' is too long", w->file, fmt);
    return AC_OK;
}

const ac_tensor *ac_weights_find(const ac_weights *w, const char *fmt, ...)
{
    char name[NAME_LEN];
    va_list ap;
    va_start(ap, fmt);
    ac_status s = resolve(w, name, fmt, ap);
    va_end(ap);
    return s ? NULL : ac_tensor_file_find(w->st, name);
}

const struct ac_config *ac_weights_values(const ac_weights *w) { return ac_tensor_file_values(w->st); }

const ac_embedded_file *ac_weights_embedded(const ac_weights *w, const char *name)
{
    return ac_tensor_file_embedded(w->st, name);
}

static void *own(ac_weights *w, size_t bytes)
{
    if (w->n_owned == w->cap_owned) {
        size_t cap = w->cap_owned ? 2 * w->cap_owned : 16;
        struct ac_weights_owned *v = realloc(w->owned, cap * sizeof *v);
        if (!v) {
            ac_error(AC_ERR_NOMEM, "out of memory");
            return NULL;
        }
        w->owned = v;
        w->cap_owned = cap;
    }
    void *p = bytes >= PAGES_FROM ? ac_pages_alloc(bytes) : ac_alloc_aligned(bytes);
    if (p) w->owned[w->n_owned++] = (struct ac_weights_owned){p, bytes};
    return p;
}

/* Frees P, a buffer the table owns (a converted matrix moved elsewhere). */
static void disown(ac_weights *w, const void *p)
{
    for (size_t i = 0; i < w->n_owned; i++)
        if (w->owned[i].p == p) {
            free_owned(&w->owned[i]);
            w->owned[i] = w->owned[--w->n_owned];
            return;
        }
}

/* Drops the file mapping's whole pages within [P, P + BYTES) (no-op for
 * memory outside the mapping); a later read of them maps them again. */
static void release_pages(const ac_weights *w, const void *p, size_t bytes)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t map_lo = (uintptr_t)w->st->map, map_hi = map_lo + w->st->map_size;
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + bytes) & ~(page - 1);
    if (w->st->map && hi > lo && lo >= map_lo && hi <= map_hi) madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

float *ac_weights_scratch(ac_weights *w, size_t n)
{
    if (n > SIZE_MAX / sizeof(float)) {
        ac_error(AC_ERR_NOMEM, "%zu floats overflow", n);
        return NULL;
    }
    return own(w, n * sizeof(float));
}

/* The tensor of shape SHAPE[NDIM] named by FMT and AP (NAME receives the
 * file's name for it). */
static ac_status lookup(ac_weights *w, int ndim, const int64_t *shape, const ac_tensor **out, char *name,
                        const char *fmt, va_list ap)
{
    AC_TRY(resolve(w, name, fmt, ap));
    const ac_tensor *t = ac_tensor_file_find(w->st, name);
    if (!t) return ac_error(AC_ERR_MODEL, "%s: missing tensor '%s'", w->file, name);
    int same = t->ndim == ndim;
    for (int i = 0; same && i < ndim; i++) same = t->shape[i] == shape[i];
    if (!same) {
        char got[128], want[128];
        return ac_error(AC_ERR_MODEL, "%s: tensor '%s' has shape %s, expected %s", w->file, name,
                        ac_shape_str(t->shape, t->ndim, got, sizeof got),
                        ac_shape_str(shape, ndim, want, sizeof want));
    }
    if (t->dtype == AC_DTYPE_I64)
        return ac_error(AC_ERR_MODEL, "%s: tensor '%s' has dtype I64, expected F32, F16, BF16 or Q8_0",
                        w->file, name);
    int64_t bad = ac_quant_bad_scale(t->dtype, t->data, (size_t)t->numel);
    if (bad >= 0)
        return ac_error(AC_ERR_MODEL, "%s: tensor '%s' (%s): block %lld has a scale that is NaN or infinite", w->file,
                        name, ac_dtype_name(t->dtype), (long long)bad);
    *out = t;
    return AC_OK;
}

static void convert(const ac_tensor *t, float *dst)
{
    size_t n = (size_t)t->numel;
    if (t->dtype == AC_DTYPE_F32) {
        memcpy(dst, t->data, n * sizeof(float));
        return;
    }
    if (ac_dtype_block(t->dtype) > 1) { /* quantized blocks */
        ac_dequantize_row(t->dtype, t->data, dst, n);
        return;
    }
    /* the mapping may be unaligned for 2-byte reads: copy through a buffer */
    uint16_t buf[1024];
    const unsigned char *src = t->data;
    for (size_t i = 0; i < n; i += 1024) {
        size_t k = n - i < 1024 ? n - i : 1024;
        memcpy(buf, src + 2 * i, 2 * k);
        if (t->dtype == AC_DTYPE_F16) ac_f16_to_f32_n(buf, dst + i, k);
        else ac_bf16_to_f32_n(buf, dst + i, k);
    }
}

static ac_status vf32(ac_weights *w, int ndim, const int64_t *shape, const float **out, int copy, const char *fmt,
                      va_list ap)
{
    const ac_tensor *t;
    char name[NAME_LEN];
    AC_TRY(lookup(w, ndim, shape, &t, name, fmt, ap));
    if (!copy && t->dtype == AC_DTYPE_F32 && ((uintptr_t)t->data & 3) == 0) {
        *out = t->data;
        return AC_OK;
    }
    float *dst = ac_weights_scratch(w, (size_t)t->numel);
    if (!dst) return AC_ERR_NOMEM;
    convert(t, dst);
    *out = dst;
    return AC_OK;
}

ac_status ac_weights_f32(ac_weights *w, int ndim, const int64_t *shape, const float **out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ac_status s = vf32(w, ndim, shape, out, 0, fmt, ap);
    va_end(ap);
    return s;
}

void ac_weights_done(ac_weights *w, const float *p, size_t n)
{
    release_pages(w, p, n * sizeof *p); /* no-op off the mapping */
    disown(w, p);                       /* no-op for what the table does not own */
}

ac_status ac_weights_vec(ac_weights *w, int n, const float **out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ac_status s = vf32(w, AC_SHAPE(n), out, 0, fmt, ap);
    va_end(ap);
    return s;
}

ac_status ac_weights_f32_copy(ac_weights *w, int ndim, const int64_t *shape, float **out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const float *p = NULL;
    ac_status s = vf32(w, ndim, shape, &p, 1, fmt, ap);
    va_end(ap);
    *out = (float *)p; /* a buffer the table owns */
    return s;
}

/* ---- precision ------------------------------------------------------- */

ac_status ac_weights_set_type(ac_weights *w, ac_weight_type type)
{
    if ((int)type < AC_WEIGHTS_STORED || (int)type > AC_WEIGHTS_Q8_0)
        return ac_error(AC_ERR_ARG, "%s: weight type %d is no ac_weight_type", w->file, (int)type);
    w->type = type;
    return AC_OK;
}

ac_status ac_weights_open_as(const char *path, ac_weight_type type, ac_weights **out)
{
    AC_TRY(ac_weights_open(path, out));
    ac_status s = ac_weights_set_type(*out, type);
    if (s) {
        ac_weights_free(*out);
        *out = NULL;
    }
    return s;
}

int ac_weights_keep(ac_weights *w, int bits)
{
    int was = w->keep;
    w->keep = bits;
    return was;
}

const ac_weight_held *ac_weights_held(const ac_weights *w, size_t *n)
{
    *n = w->n_held;
    return w->held;
}

static ac_status record(ac_weights *w, const char *name, ac_dtype stored, ac_dtype held)
{
    if (w->n_held == w->cap_held) {
        size_t cap = w->cap_held ? 2 * w->cap_held : 64;
        ac_weight_held *v = realloc(w->held, cap * sizeof *v);
        if (!v) return ac_error(AC_ERR_NOMEM, "out of memory");
        w->held = v;
        w->cap_held = cap;
    }
    char *copy = strdup(name);
    if (!copy) return ac_error(AC_ERR_NOMEM, "out of memory");
    w->held[w->n_held++] = (ac_weight_held){.name = copy, .stored = stored, .held = held};
    return AC_OK;
}

/* The type a matrix stored as STORED with rows of COLS values is held in. */
static ac_dtype held_type(const ac_weights *w, ac_dtype stored, size_t cols)
{
    static const ac_dtype of[] = {[AC_WEIGHTS_F32] = AC_DTYPE_F32, [AC_WEIGHTS_F16] = AC_DTYPE_F16,
                                  [AC_WEIGHTS_BF16] = AC_DTYPE_BF16, [AC_WEIGHTS_Q8_0] = AC_DTYPE_Q8_0};
    if (w->type == AC_WEIGHTS_STORED) return stored;
    /* an exemption keeps precision: f32 (the references' arithmetic) loses none */
    if (w->type == AC_WEIGHTS_F32) return AC_DTYPE_F32;
    if (w->keep >= AC_KEEP_STORED) return stored;
    ac_dtype t = of[w->type];
    /* F32 and F16 in bf16 (F16 too: bf16's dot products), any other 16-bit or quantized type as stored */
    if (w->keep >= AC_KEEP_16 && t == AC_DTYPE_Q8_0)
        t = stored == AC_DTYPE_F32 || stored == AC_DTYPE_F16 ? AC_DTYPE_BF16 : stored;
    return cols % ac_dtype_block(t) ? stored : t;
}

/* Rows [first + begin, first + end) of a matrix converted from FROM at SRC
 * to TO at DST. */
typedef struct {
    const unsigned char *src;
    unsigned char *dst;
    ac_dtype from, to;
    size_t cols, in_row, out_row, first;
} convert_job;

static void convert_rows(void *ctx, size_t begin, size_t end)
{
    const convert_job *j = ctx;
    for (size_t r = j->first + begin; r < j->first + end; r++)
        ac_convert_row(j->from, j->src + r * j->in_row, j->to, j->dst + r * j->out_row, j->cols);
}

/* T's ROWS x COLS values, converted into a buffer the table owns, of type
 * TO, on the thread pool; the file's pages behind the rows converted are
 * released every HOT_PIECE bytes, so a large matrix is never held twice. */
static ac_status convert_mat(ac_weights *w, const ac_tensor *t, size_t rows, size_t cols, ac_dtype to,
                             const void **out)
{
    size_t in_row = (size_t)ac_dtype_bytes(t->dtype, cols), out_row = (size_t)ac_dtype_bytes(to, cols);
    if (rows && out_row > SIZE_MAX / rows) return ac_error(AC_ERR_NOMEM, "%s: a matrix of %zu rows overflows", w->file, rows);
    size_t bytes = rows * out_row;
    unsigned char *dst = own(w, bytes ? bytes : 1);
    if (!dst) return ac_error(AC_ERR_NOMEM, "out of memory");
    convert_job j = {.src = t->data, .dst = dst, .from = t->dtype, .to = to, .cols = cols, .in_row = in_row,
                     .out_row = out_row};
    size_t per = in_row && in_row < HOT_PIECE ? HOT_PIECE / in_row : 1;
    for (j.first = 0; j.first < rows; j.first += per) {
        size_t n = rows - j.first < per ? rows - j.first : per;
        ac_parallel_for(n, 1, convert_rows, &j);
        release_pages(w, j.src + j.first * in_row, n * in_row);
    }
    *out = dst;
    return AC_OK;
}

static ac_status vmat(ac_weights *w, int ndim, const int64_t *shape, ac_mat *out, const char *fmt, va_list ap)
{
    const ac_tensor *t;
    char name[NAME_LEN];
    AC_TRY(lookup(w, ndim, shape, &t, name, fmt, ap));
    size_t rows = ndim > 0 ? (size_t)shape[0] : 1, cols = rows ? (size_t)t->numel / rows : 0;
    if (cols % ac_dtype_block(t->dtype))
        return ac_error(AC_ERR_MODEL, "%s: tensor '%s' is %s with rows of %zu values (not a multiple of %u)", w->file,
                        name, ac_dtype_name(t->dtype), cols, (unsigned)ac_dtype_block(t->dtype));
    *out = (ac_mat){t->data, t->dtype, rows, cols};
    ac_dtype held = held_type(w, t->dtype, cols);
    AC_TRY(record(w, name, t->dtype, held));
    if (held != t->dtype && !recorder) {
        out->dtype = held;
        return convert_mat(w, t, rows, cols, held, &out->data);
    }
    if (t->dtype == AC_DTYPE_F32 && ((uintptr_t)t->data & 3) != 0) {
        float *copy = ac_weights_scratch(w, (size_t)t->numel);
        if (!copy) return AC_ERR_NOMEM;
        convert(t, copy);
        out->data = copy;
    }
    return AC_OK;
}

ac_status ac_weights_mat(ac_weights *w, int ndim, const int64_t *shape, ac_mat *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ac_status s = vmat(w, ndim, shape, out, fmt, ap);
    va_end(ap);
    return s;
}

/* FMT followed by SUFFIX, as the format of one whole name (name tables
 * map whole names). */
static ac_status with_suffix(const ac_weights *w, char *out, const char *fmt, const char *suffix)
{
    if ((size_t)snprintf(out, NAME_LEN, "%s%s", fmt, suffix) >= NAME_LEN)
        return ac_error(AC_ERR_ARG, "%s: a tensor name of format '%s' is too long", w->file, fmt);
    return AC_OK;
}

ac_status ac_weights_linear(ac_weights *w, int rows, int cols, ac_mat *weight, const float **bias, const char *fmt,
                            ...)
{
    char f[NAME_LEN];
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    ac_status s = with_suffix(w, f, fmt, ".weight");
    if (!s) s = vmat(w, AC_SHAPE(rows, cols), weight, f, ap);
    if (!s && bias) s = with_suffix(w, f, fmt, ".bias");
    if (!s && bias) s = vf32(w, AC_SHAPE(rows), bias, 0, f, ap2);
    va_end(ap2);
    va_end(ap);
    return s;
}

ac_status ac_weights_norm(ac_weights *w, int n, const float **weight, const float **bias, const char *fmt, ...)
{
    char f[NAME_LEN];
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    ac_status s = with_suffix(w, f, fmt, ".weight");
    if (!s) s = vf32(w, AC_SHAPE(n), weight, 0, f, ap);
    if (!s) s = with_suffix(w, f, fmt, ".bias");
    if (!s) s = vf32(w, AC_SHAPE(n), bias, 0, f, ap2);
    va_end(ap2);
    va_end(ap);
    return s;
}

ac_status ac_weights_batchnorm(ac_weights *w, int n, float eps, float **scale, float **shift, const char *fmt, ...)
{
    static const char *const parts[4] = {".weight", ".bias", ".running_mean", ".running_var"};
    const float *v[4];
    char f[NAME_LEN];
    ac_status s = AC_OK;
    for (int i = 0; !s && i < 4; i++) {
        va_list ap;
        va_start(ap, fmt);
        s = with_suffix(w, f, fmt, parts[i]);
        if (!s) s = vf32(w, AC_SHAPE(n), &v[i], 0, f, ap);
        va_end(ap);
    }
    if (s) return s;
    for (int c = 0; c < n; c++)
        if (!(v[3][c] + eps > 0)) {
            char name[NAME_LEN];
            va_list ap;
            va_start(ap, fmt);
            s = resolve(w, name, f, ap);
            va_end(ap);
            return s ? s : ac_error(AC_ERR_MODEL, "%s: %s has a negative value", w->file, name);
        }
    *scale = ac_weights_scratch(w, (size_t)n);
    *shift = ac_weights_scratch(w, (size_t)n);
    if (!*scale || !*shift) return AC_ERR_NOMEM;
    ac_batchnorm_fold(v[0], v[1], v[2], v[3], eps, (size_t)n, *scale, *shift);
    return AC_OK;
}


ac_status ac_weights_make_hot(ac_weights *w, ac_mat *const *mats, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += ((size_t)ac_dtype_bytes(mats[i]->dtype, mats[i]->cols) * mats[i]->rows + 63) & ~(size_t)63;
    total = (total + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    if (w->hot || total == 0) return AC_OK;
    /* huge pages need a 2 MB aligned range: map one more and trim */
    unsigned char *raw = mmap(NULL, total + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return ac_error(AC_ERR_NOMEM, "%s: cannot map %zu bytes for the decoder weights", w->file, total);
    unsigned char *region = (unsigned char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (region > raw) munmap(raw, (size_t)(region - raw));
    if (region + total < raw + total + HUGE_PAGE) munmap(region + total, (size_t)(raw + total + HUGE_PAGE - (region + total)));
    madvise(region, total, MADV_HUGEPAGE); /* a hint: without it, plain pages */
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t map_lo = (uintptr_t)w->st->map, map_hi = map_lo + w->st->map_size;
    unsigned char *dst = region;
    for (size_t i = 0; i < n; i++) {
        size_t bytes = (size_t)ac_dtype_bytes(mats[i]->dtype, mats[i]->cols) * mats[i]->rows;
        const unsigned char *src = mats[i]->data;
        /* copy a piece at a time and release the pages behind it (whole pages
         * only): the file's, or those of a converted copy of its own pages, so a
         * large matrix (a tied head: 300 MB, 160 MB in Q8_0) is never held twice */
        int in_file = w->st->map && (uintptr_t)src >= map_lo && (uintptr_t)src + bytes <= map_hi;
        int own_pages = 0;
        for (size_t k = 0; k < w->n_owned && !in_file; k++)
            if (w->owned[k].p == src) own_pages = w->owned[k].size >= PAGES_FROM;
        uintptr_t released = ((uintptr_t)src + page - 1) & ~(page - 1);
        for (size_t off = 0; off < bytes; off += HOT_PIECE) {
            size_t len = bytes - off < HOT_PIECE ? bytes - off : HOT_PIECE;
            memcpy(dst + off, src + off, len);
            uintptr_t hi = ((uintptr_t)src + off + len) & ~(page - 1);
            if ((in_file || own_pages) && hi > released) {
                madvise((void *)released, hi - released, MADV_DONTNEED);
                released = hi;
            }
        }
        disown(w, mats[i]->data); /* a converted matrix: its only copy is now here */
        mats[i]->data = dst;
        dst += (bytes + 63) & ~(size_t)63;
    }
    mprotect(region, total, PROT_READ);
    w->hot = region;
    w->hot_size = total;
    return AC_OK;
}

ac_status ac_weights_weight_norm(ac_weights *w, int ndim, const int64_t *shape, float **out, const char *fmt, ...)
{
    char vfmt[NAME_LEN], gfmt[NAME_LEN], vname[NAME_LEN];
    int64_t gshape[8];
    if (ndim < 1 || ndim > 8) return ac_error(AC_ERR_ARG, "%s: weight norm of %d dimensions", w->file, ndim);
    for (int i = 0; i < ndim; i++) gshape[i] = i ? 1 : shape[0];
    const float *g, *vc;
    va_list ap, ap2, ap3;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    va_copy(ap3, ap);
    ac_status s = with_suffix(w, gfmt, fmt, ".weight_g");
    if (!s) s = with_suffix(w, vfmt, fmt, ".weight_v");
    if (!s) s = vf32(w, ndim, gshape, &g, 0, gfmt, ap);
    if (!s) s = vf32(w, ndim, shape, &vc, 1, vfmt, ap2);
    if (!s) s = resolve(w, vname, vfmt, ap3);
    va_end(ap3);
    va_end(ap2);
    va_end(ap);
    if (s) return s;
    float *v = (float *)vc; /* a copy the table owns */
    size_t rows = (size_t)shape[0], cols = 1;
    for (int i = 1; i < ndim; i++) cols *= (size_t)shape[i];
    for (size_t o = 0; o < rows; o++) {
        float *r = v + o * cols;
        double ss = 0;
        for (size_t i = 0; i < cols; i++) ss += (double)r[i] * r[i];
        if (!(ss > 0))
            return ac_error(AC_ERR_MODEL, "%s: row %zu of tensor '%s' has zero norm (weight norm divides by it)",
                            w->file, o, vname);
        float scale = (float)(g[o] / sqrt(ss));
        for (size_t i = 0; i < cols; i++) r[i] *= scale;
    }
    *out = v;
    return AC_OK;
}
