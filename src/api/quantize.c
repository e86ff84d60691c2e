/* ac_model_quantize: a model written as one GGUF file. The model is loaded
 * with the asked weight type while a recorder watches its weight tables
 * (io/weights.h): what its loader handed out as matrices, and the type
 * the family's rule held each in, is the plan; every other tensor keeps
 * its stored type. The file is written by io/gguf_write.c. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/family.h"
#include "api/input.h"
#include "base/error.h"
#include "base/file.h"
#include "base/mem.h"
#include "base/progress.h"
#include "base/threadpool.h"
#include "io/gguf_write.h"
#include "io/weights.h"
#include "tensor/quant.h"

#define PATH_LEN 4200
#define MAX_EMBEDDED (64u << 20) /* larger files of a folder are not embedded, as the runtime's converter does */

/* ---- what a family adds (family.h) ---------------------------------------- */

typedef struct {
    char *file, *ns, *key;
} pack_part;

typedef struct {
    char *name, *data;
    size_t size;
} pack_blob;

struct ac_pack {
    pack_part *parts;
    size_t n_parts, cap_parts;
    pack_blob *files;
    size_t n_files, cap_files;
    char *family, *json;
};

static int grow(void **p, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap) return 1;
    size_t c = *cap ? 2 * *cap : 8;
    void *q = realloc(*p, c * elem);
    if (!q) return 0;
    *p = q;
    *cap = c;
    return 1;
}

static char *dup_or_null(const char *s, int *failed)
{
    if (!s) return NULL;
    char *d = ac_strdup(s);
    if (!d) *failed = 1;
    return d;
}

ac_status ac_pack_part(ac_pack *p, const char *file, const char *ns, const char *key)
{
    if (!grow((void **)&p->parts, p->n_parts, &p->cap_parts, sizeof *p->parts))
        return ac_error(AC_ERR_NOMEM, "out of memory");
    int failed = 0;
    pack_part q = {dup_or_null(file, &failed), dup_or_null(ns, &failed), dup_or_null(key, &failed)};
    p->parts[p->n_parts++] = q;
    return failed ? ac_error(AC_ERR_NOMEM, "out of memory") : AC_OK;
}

static ac_status add_blob(ac_pack *p, const char *name, char *data, size_t size)
{
    for (size_t i = 0; i < p->n_files; i++)
        if (strcmp(p->files[i].name, name) == 0) {
            free(data);
            return AC_OK;
        }
    char *n = ac_strdup(name);
    if (!n || !grow((void **)&p->files, p->n_files, &p->cap_files, sizeof *p->files)) {
        free(n);
        free(data);
        return ac_error(AC_ERR_NOMEM, "out of memory");
    }
    p->files[p->n_files++] = (pack_blob){n, data, size};
    return AC_OK;
}

ac_status ac_pack_file(ac_pack *p, const char *name, const char *path)
{
    char *data;
    size_t size;
    AC_TRY(ac_read_file(path, MAX_EMBEDDED, &data, &size));
    return add_blob(p, name, data, size);
}

ac_status ac_pack_spec(ac_pack *p, const char *family, const char *json)
{
    free(p->family);
    free(p->json);
    int failed = 0;
    p->family = dup_or_null(family, &failed);
    p->json = dup_or_null(json, &failed);
    return failed ? ac_error(AC_ERR_NOMEM, "out of memory") : AC_OK;
}

static void pack_free(ac_pack *p)
{
    for (size_t i = 0; i < p->n_parts; i++) free(p->parts[i].file), free(p->parts[i].ns), free(p->parts[i].key);
    free(p->parts);
    for (size_t i = 0; i < p->n_files; i++) free(p->files[i].name), free(p->files[i].data);
    free(p->files);
    free(p->family);
    free(p->json);
}

/* ---- the type asked --------------------------------------------------------- */

typedef struct {
    const char *name;
    ac_weight_type rule; /* the load type whose rule picks the matrices */
    ac_dtype to;         /* what a matrix the rule quantizes to Q8_0 becomes */
} quant_type;

static const quant_type types[] = {
    {"f16", AC_WEIGHTS_F16, AC_DTYPE_F16},      {"bf16", AC_WEIGHTS_BF16, AC_DTYPE_BF16},
    {"q8_0", AC_WEIGHTS_Q8_0, AC_DTYPE_Q8_0},   {"q4_k", AC_WEIGHTS_Q8_0, AC_DTYPE_Q4_K},
    {"q6_k", AC_WEIGHTS_Q8_0, AC_DTYPE_Q6_K},
};

static int is_quantized(ac_dtype t) { return t == AC_DTYPE_Q8_0 || t == AC_DTYPE_Q4_K || t == AC_DTYPE_Q6_K; }

/* The type a tensor of STORED type whose last dimension is ROW, that the
 * load held as HELD, is written in. A GGUF tensor's rows are its last
 * dimension: a matrix the load quantizes whose rows are whole blocks only
 * with its trailing dimensions taken together (a convolution's [out, in,
 * 1] or [out, in, 3]) keeps its stored type, as the runtime's converter
 * keeps every tensor of rank 3 (a load of the file with --weights
 * converts it as a load of the input does). */
static ac_dtype out_type(const quant_type *q, ac_dtype stored, ac_dtype held, int64_t row)
{
    ac_dtype t = held == AC_DTYPE_Q8_0 && row % (int64_t)ac_dtype_block(q->to) == 0 ? q->to : held;
    return row % (int64_t)ac_dtype_block(t) ? stored : t;
}

/* ---- the plan --------------------------------------------------------------- */

typedef struct {
    const ac_tensor *src;
    char *name;
    ac_dtype to;
} plan_tensor;

typedef struct {
    ac_weights_recorder rec;
    ac_pack pack;   /* what the family added */
    ac_pack folder; /* the input folder's files */
    plan_tensor *t;
    size_t n_t, cap_t;
    const char *in;          /* the input as given, for messages */
    char resolved[PATH_LEN]; /* the path the loader took */
    int input_is_dir;
    const ac_tensor_file *input_file; /* the input as one file (a GGUF: its metadata and embedded files) */
    const char *source_names[64], *source_paths[64];
    char source_store[64][PATH_LEN];
    size_t n_sources;
    ac_progress bar;
    const ac_quantize_options *o;
} quantize_job;

static void job_free(quantize_job *j)
{
    for (size_t i = 0; i < j->n_t; i++) free(j->t[i].name);
    free(j->t);
    pack_free(&j->pack);
    pack_free(&j->folder);
    ac_weights_recorder_free(&j->rec);
}

/* The part of the file PATH's tensor NAME, and in *STRIP the bytes of NAME
 * its namespace takes; -1 when the family declares no parts, or for a
 * tensor of a GGUF under none of its parts' namespaces (kept under its
 * name); -2 for a file of no part. */
static int part_of(const quantize_job *j, const char *path, const char *name, size_t *strip)
{
    *strip = 0;
    int namespaced = 0;
    if (!j->pack.n_parts) return -1;
    for (size_t i = 0; i < j->pack.n_parts; i++) {
        const pack_part *p = &j->pack.parts[i];
        size_t n = strlen(p->file);
        if (p->ns && strcmp(p->file, path) == 0) {
            namespaced = 1;
            if (strncmp(name, p->ns, strlen(p->ns)) == 0) {
                *strip = strlen(p->ns);
                return (int)i;
            }
        } else if (!p->ns && strncmp(path, p->file, n) == 0 && (path[n] == 0 || path[n] == '/')) {
            return (int)i;
        }
    }
    return namespaced ? -1 : -2;
}

/* The type the load held tensor NAME of file PATH in, or -1 if it handed
 * it out as no matrix. */
static int held_as(const quantize_job *j, const char *path, const char *name)
{
    for (size_t i = 0; i < j->rec.n; i++) {
        const ac_weights *w = j->rec.tables[i];
        if (strcmp(w->st->path, path) != 0) continue;
        size_t n;
        const ac_weight_held *h = ac_weights_held(w, &n);
        for (size_t k = 0; k < n; k++)
            if (strcmp(h[k].name, name) == 0) return (int)h[k].held;
    }
    return -1;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Part index PART among the sources (audiocpp.tensor_sources): its key
 * and its file relative to the package, once. */
static ac_status add_source(quantize_job *j, int part, const char *path)
{
    const char *key = part >= 0 ? j->pack.parts[part].key : "";
    for (size_t i = 0; i < j->n_sources; i++)
        if (strcmp(j->source_names[i], key) == 0) return AC_OK;
    if (j->n_sources == 64) return ac_error(AC_ERR_UNSUPPORTED, "%s: more than 64 weight files", j->in);
    size_t n = strlen(j->resolved);
    const char *rel = j->input_is_dir && strncmp(path, j->resolved, n) == 0 && path[n] == '/' ? path + n + 1
                                                                                              : base_name(path);
    snprintf(j->source_store[j->n_sources], PATH_LEN, "%s", rel);
    j->source_names[j->n_sources] = key;
    j->source_paths[j->n_sources] = j->source_store[j->n_sources];
    j->n_sources++;
    return AC_OK;
}

static ac_status plan_file(quantize_job *j, const quant_type *q, const ac_tensor_file *st)
{
    for (size_t i = 0; i < st->n_tensors; i++) {
        const ac_tensor *t = &st->tensors[i];
        if (is_quantized(t->dtype))
            return ac_error(AC_ERR_UNSUPPORTED, "%s: tensor '%s' is already %s: quantizing it again would round it "
                            "twice; quantize the package it was made from (F32, F16 or BF16)", st->path, t->name,
                            ac_dtype_name(t->dtype));
        size_t strip;
        int part = part_of(j, st->path, t->name, &strip);
        if (part == -2)
            return ac_error(AC_ERR_MODEL, "%s: the weights file %s is of no part of the package", j->in, st->path);
        if (part >= 0 && !j->pack.parts[part].key) continue; /* left out */
        AC_TRY(add_source(j, part, st->path));
        const char *key = part >= 0 ? j->pack.parts[part].key : "";
        size_t len = strlen(key) + 1 + strlen(t->name + strip) + 1;
        char *name = ac_malloc(len);
        if (!name || !grow((void **)&j->t, j->n_t, &j->cap_t, sizeof *j->t)) {
            free(name);
            return ac_error(AC_ERR_NOMEM, "out of memory");
        }
        snprintf(name, len, "%s%s%s", key, key[0] ? "/" : "", t->name + strip);
        int held = held_as(j, st->path, t->name);
        int64_t row = t->ndim ? t->shape[t->ndim - 1] : 1;
        ac_dtype to = held < 0 ? t->dtype : out_type(q, t->dtype, (ac_dtype)held, row);
        j->t[j->n_t++] = (plan_tensor){t, name, to};
    }
    return AC_OK;
}

/* Every tensor of every file the load opened, once per file. */
static ac_status plan(quantize_job *j, const quant_type *q)
{
    for (size_t i = 0; i < j->rec.n; i++) {
        const ac_tensor_file *st = j->rec.tables[i]->st;
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++) seen = strcmp(j->rec.tables[k]->st->path, st->path) == 0;
        if (seen) continue;
        if (strcmp(st->path, j->resolved) == 0) j->input_file = st;
        AC_TRY(plan_file(j, q, st));
    }
    for (size_t i = 0; i < j->n_t; i++)
        for (size_t k = 0; k < i; k++)
            if (strcmp(j->t[i].name, j->t[k].name) == 0)
                return ac_error(AC_ERR_MODEL, "%s: two weight files hold a tensor '%s'", j->in, j->t[i].name);
    if (!j->n_t) return ac_error(AC_ERR_MODEL, "%s: the model loaded no weights to write", j->in);
    return AC_OK;
}

/* ---- the folder's other files ----------------------------------------------- */

static int is_weights(const char *name)
{
    static const char *const ext[] = {".safetensors", ".gguf", ".bin", ".pt", ".pth"};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
        size_t e = strlen(ext[i]);
        if (n >= e && strcasecmp(name + n - e, ext[i]) == 0) return 1;
    }
    return 0;
}

/* Path order with '/' before every other byte: a folder's files before
 * its subfolders' files that sort after it. */
static int by_path(const void *a, const void *b)
{
    const unsigned char *x = *(const unsigned char *const *)a, *y = *(const unsigned char *const *)b;
    for (; *x && *x == *y; x++, y++) {}
    int cx = *x == '/' ? 1 : *x ? *x + 1 : 0, cy = *y == '/' ? 1 : *y ? *y + 1 : 0;
    return cx - cy;
}

typedef struct {
    char **v;
    size_t n, cap;
} path_list;

/* The regular files below DIR/REL (REL "" for DIR itself), relative to DIR. */
static ac_status walk(const char *dir, const char *rel, path_list *out, int depth)
{
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s%s%s", dir, rel[0] ? "/" : "", rel);
    if (depth > 16) return AC_OK;
    DIR *d = opendir(path);
    if (!d) return ac_error(AC_ERR_IO, "%s: cannot read the folder (%s)", path, strerror(errno));
    ac_status s = AC_OK;
    for (struct dirent *e; !s && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, ".git") ||
            !strcmp(e->d_name, ".cache"))
            continue;
        char sub[PATH_LEN], full[PATH_LEN];
        snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        snprintf(full, sizeof full, "%s/%s", dir, sub);
        struct stat sb;
        if (stat(full, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode)) {
            s = walk(dir, sub, out, depth + 1);
            continue;
        }
        if (!S_ISREG(sb.st_mode) || is_weights(e->d_name) || (uint64_t)sb.st_size > MAX_EMBEDDED) continue;
        char *copy = ac_strdup(sub);
        if (!copy || !grow((void **)&out->v, out->n, &out->cap, sizeof *out->v)) {
            free(copy);
            s = ac_error(AC_ERR_NOMEM, "out of memory");
            break;
        }
        out->v[out->n++] = copy;
    }
    closedir(d);
    return s;
}

/* The embedded files: the input GGUF's; the family's (what its loader
 * reads, which wins over a folder's file of the same name); every other
 * file of the input folder but the weights. */
static ac_status embed(quantize_job *j, ac_gguf_out *g)
{
    if (j->input_is_dir) {
        path_list l = {0};
        ac_status s = walk(j->resolved, "", &l, 0);
        if (!s && l.n) qsort(l.v, l.n, sizeof *l.v, by_path);
        for (size_t i = 0; !s && i < l.n; i++) {
            char full[PATH_LEN];
            snprintf(full, sizeof full, "%s/%s", j->resolved, l.v[i]);
            s = ac_pack_file(&j->folder, l.v[i], full);
        }
        for (size_t i = 0; i < l.n; i++) free(l.v[i]);
        free(l.v);
        AC_TRY(s);
    }
    for (size_t i = 0; i < j->pack.n_files; i++)
        AC_TRY(ac_gguf_out_file(g, j->pack.files[i].name, j->pack.files[i].data, j->pack.files[i].size));
    for (size_t i = 0; j->input_file && i < j->input_file->n_files; i++) {
        const ac_embedded_file *e = &j->input_file->files[i];
        if (!ac_gguf_out_has_file(g, e->name)) AC_TRY(ac_gguf_out_file(g, e->name, e->data, e->size));
    }
    for (size_t i = 0; i < j->folder.n_files; i++) {
        const pack_blob *b = &j->folder.files[i];
        if (!ac_gguf_out_has_file(g, b->name)) AC_TRY(ac_gguf_out_file(g, b->name, b->data, b->size));
    }
    return AC_OK;
}

/* ---- writing ---------------------------------------------------------------- */

static const char *meta(const quantize_job *j, const char *key)
{
    return j->input_file ? ac_tensor_file_meta(j->input_file, key) : NULL;
}

static ac_status header(quantize_job *j, const quant_type *q, ac_gguf_out *g)
{
    char name[256];
    const char *given = meta(j, "general.name");
    if (given) snprintf(name, sizeof name, "%s", given);
    else {
        size_t n = strlen(j->resolved);
        while (n > 1 && j->resolved[n - 1] == '/') n--;
        const char *b = j->resolved + n;
        while (b > j->resolved && b[-1] != '/') b--;
        int len = (int)(j->resolved + n - b);
        const char *dot = j->input_is_dir ? NULL : memchr(b, '.', (size_t)len);
        snprintf(name, sizeof name, "%.*s", dot ? (int)(dot - b) : len, b);
    }
    const char *format = meta(j, "audiocpp.source_format");
    const char *ext = strrchr(j->source_paths[0], '.');
    AC_TRY(ac_gguf_out_str(g, "general.architecture", "audiocpp"));
    AC_TRY(ac_gguf_out_str(g, "general.name", name));
    AC_TRY(ac_gguf_out_str(g, "audiocpp.tensor_name_format", "native"));
    AC_TRY(ac_gguf_out_str(g, "audiocpp.source_format", format ? format : ext ? ext : ".safetensors"));
    AC_TRY(ac_gguf_out_str(g, "audiocpp.weight_type", q->name));
    const char *family = j->pack.family ? j->pack.family : meta(j, "audiocpp.model_spec.family");
    const char *json = j->pack.json ? j->pack.json : meta(j, "audiocpp.model_spec.json");
    if (family && json) {
        AC_TRY(ac_gguf_out_u32(g, "audiocpp.model_spec.version", 1));
        AC_TRY(ac_gguf_out_str(g, "audiocpp.model_spec.family", family));
        AC_TRY(ac_gguf_out_str(g, "audiocpp.model_spec.json", json));
    }
    AC_TRY(ac_gguf_out_strs(g, "audiocpp.tensor_sources.names", j->source_names, j->n_sources));
    AC_TRY(ac_gguf_out_strs(g, "audiocpp.tensor_sources.paths", j->source_paths, j->n_sources));
    AC_TRY(embed(j, g));
    for (size_t i = 0; i < j->n_t; i++)
        AC_TRY(ac_gguf_out_tensor(g, j->t[i].name, j->t[i].to, j->t[i].src->ndim, j->t[i].src->shape));
    return AC_OK;
}

typedef struct {
    const plan_tensor *t;
    unsigned char *dst;
    size_t n;
} convert_job;

enum { PIECE = 1 << 16 }; /* values per task: a multiple of every block */

static void convert_pieces(void *ctx, size_t begin, size_t end)
{
    const convert_job *c = ctx;
    const ac_tensor *s = c->t->src;
    for (size_t p = begin; p < end; p++) {
        size_t at = p * PIECE, k = c->n - at < PIECE ? c->n - at : PIECE;
        ac_convert_row(s->dtype, (const unsigned char *)s->data + ac_dtype_bytes(s->dtype, at), c->t->to,
                       c->dst + ac_dtype_bytes(c->t->to, at), k);
    }
}

static ac_status fill(void *user, size_t i, void *dst, size_t bytes)
{
    quantize_job *j = user;
    const plan_tensor *t = &j->t[i];
    if (t->to == t->src->dtype) memcpy(dst, t->src->data, bytes);
    else {
        convert_job c = {t, dst, (size_t)t->src->numel};
        ac_parallel_for((c.n + PIECE - 1) / PIECE, 1, convert_pieces, &c);
    }
    ac_progress_update(&j->bar, (double)(i + 1));
    if (j->o->on_progress && j->o->on_progress((int)(i + 1), (int)j->n_t, j->o->user))
        return ac_error(AC_ERR_CANCELLED, "quantizing %s: stopped by the caller", j->in);
    return AC_OK;
}

/* The file under a temporary name in OUT's folder, renamed to OUT once
 * complete; removed on any error. */
static ac_status write_out(quantize_job *j, const quant_type *q, const char *out)
{
    ac_gguf_out *g = ac_gguf_out_new();
    if (!g) return ac_error(AC_ERR_NOMEM, "out of memory");
    ac_status s = header(j, q, g);
    char tmp[PATH_LEN];
    const char *slash = strrchr(out, '/');
    snprintf(tmp, sizeof tmp, "%.*s%s.%s.XXXXXX", slash ? (int)(slash - out) : 0, out, slash ? "/" : "",
             slash ? slash + 1 : out);
    int fd = s ? -1 : mkstemp(tmp);
    if (!s && fd < 0) s = ac_error(AC_ERR_IO, "%s: cannot create a file beside it (%s)", out, strerror(errno));
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (fd >= 0 && !f) {
        s = ac_error(AC_ERR_IO, "%s: %s", tmp, strerror(errno));
        close(fd);
    }
    if (f) {
        ac_progress_begin(&j->bar, "quantizing (tensors)", (double)j->n_t);
        s = ac_gguf_out_write(g, f, out, fill, j);
        ac_progress_end(&j->bar);
        if (!s && (fflush(f) != 0 || fsync(fileno(f)) != 0))
            s = ac_error(AC_ERR_IO, "%s: cannot write (%s)", out, strerror(errno));
        mode_t mask = umask(0);
        umask(mask);
        if (!s) fchmod(fileno(f), 0666 & ~mask);
        if (fclose(f) != 0 && !s) s = ac_error(AC_ERR_IO, "%s: cannot write (%s)", out, strerror(errno));
        if (!s && rename(tmp, out) != 0) s = ac_error(AC_ERR_IO, "%s: cannot rename %s to it (%s)", out, tmp, strerror(errno));
        if (s) unlink(tmp);
    }
    ac_gguf_out_free(g);
    return s;
}

/* ---- the call --------------------------------------------------------------- */

void ac_quantize_options_init(ac_quantize_options *o, size_t size)
{
    ac_quantize_options d = {.struct_size = size};
    memcpy(o, &d, size < sizeof d ? size : sizeof d);
}

/* Refuses OUT when it cannot be made: no name, a folder, or a folder that
 * does not exist or cannot be written. */
static ac_status check_out(const char *out)
{
    if (!out || !out[0]) return ac_error(AC_ERR_ARG, "no output file given");
    struct stat sb;
    if (stat(out, &sb) == 0 && S_ISDIR(sb.st_mode)) return ac_error(AC_ERR_ARG, "%s: is a folder; give a file name", out);
    char dir[PATH_LEN];
    const char *slash = strrchr(out, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (slash == out ? 1 : (int)(slash - out)) : 1, slash ? out : ".");
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return ac_error(AC_ERR_IO, "%s: the folder %s does not exist", out, dir);
    if (access(dir, W_OK) != 0) return ac_error(AC_ERR_IO, "%s: cannot write in %s (%s)", out, dir, strerror(errno));
    return AC_OK;
}

/* Loads the model at the resolved path with the rule of Q recorded, then
 * frees it: its tables stay with the recorder. */
static ac_status record_load(quantize_job *j, const ac_family *f, const quant_type *q, const char *whisper)
{
    ac_load_options lo;
    ac_load_options_default(&lo);
    lo.weights = q->rule;
    lo.whisper = whisper;
    void *impl = NULL;
    ac_weights_record(&j->rec);
    ac_status s = f->load(j->resolved, &lo, &impl);
    if (!s && f->pack) s = f->pack(impl, &j->pack);
    if (impl) f->free(impl);
    ac_weights_record(NULL);
    if (!s && j->rec.failed) s = ac_error(AC_ERR_NOMEM, "out of memory");
    return s;
}

ac_status ac_model_quantize(const char *in, const char *out, const char *type, const ac_quantize_options *opt)
{
    ac_error_clear();
    ac_quantize_options o;
    ac_quantize_options_default(&o);
    if (opt) AC_TRY(ac_struct_take(&o, sizeof o, opt, "ac_quantize_options"));
    if (!in) return ac_error(AC_ERR_ARG, "no model path given");
    const quant_type *q = NULL;
    for (size_t i = 0; type && i < sizeof types / sizeof *types; i++)
        if (strcasecmp(type, types[i].name) == 0) q = &types[i];
    if (!q) return ac_error(AC_ERR_ARG, "unknown type '%s' (f16, bf16, q8_0, q4_k or q6_k)", type ? type : "");
    AC_TRY(check_out(out));
    char *local = NULL, *companion = NULL;
    if (strncmp(in, "hf:", 3) == 0) AC_TRY(ac_hub_model(in, &local, &companion));
    quantize_job *j = ac_calloc(1, sizeof *j);
    if (!j) {
        free(local), free(companion);
        return ac_error(AC_ERR_NOMEM, "out of memory");
    }
    j->in = in;
    j->o = &o;
    const ac_family *f;
    ac_status s = ac_family_probe(local ? local : in, &f, j->resolved, sizeof j->resolved);
    struct stat sb;
    j->input_is_dir = !s && stat(j->resolved, &sb) == 0 && S_ISDIR(sb.st_mode);
    if (!s) s = record_load(j, f, q, o.whisper ? o.whisper : companion);
    if (!s) s = plan(j, q);
    if (!s) s = write_out(j, q, out);
    job_free(j);
    free(j);
    free(local);
    free(companion);
    return s;
}
