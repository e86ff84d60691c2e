/* torch.save archives: a stored zip holding <name>/data.pkl, the pickle of
 * the saved object, and one <name>/data/<key> entry of raw little-endian
 * bytes per storage. The pickle's tensors become the tensor table (in place
 * when contiguous, else copied); its plain values become a config. */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"
#include "io/config.h"
#include "io/tensor_file.h"
#include "io/torch_pickle.h"
#include "io/zip.h"

#define MAX_DEPTH 32
#define MAX_NAME 1024

typedef struct {
    ac_tensor_file *f;
    const ac_zip *zip;
    const char *prefix; /* "<name>/" */
    size_t visits_left; /* values may be shared: the walk is bounded */
    size_t copy_budget; /* bytes of copies a hostile view may make us write */
    size_t cap_tensors, cap_owned;
    const char *path[MAX_DEPTH]; /* dict keys / list indices down to the current value */
} walker;

/* The data entry of STORAGE, checked against the element count the pickle
 * declares for it. */
static ac_status storage_bytes(const walker *w, const ac_pv *st, const char *tname, const ac_zip_entry **out)
{
    char entry[MAX_NAME + 64];
    int k = snprintf(entry, sizeof entry, "%sdata/%s", w->prefix, st->s);
    if (k < 0 || (size_t)k >= sizeof entry) return ac_error(AC_ERR_FORMAT, "tensor '%s': storage key is too long", tname);
    const ac_zip_entry *e = ac_zip_find(w->zip, entry);
    if (!e) return ac_error(AC_ERR_FORMAT, "tensor '%s': storage entry '%s' is missing", tname, entry);
    size_t es = ac_storage_elem_size(st->st_type);
    if ((uint64_t)st->i > SIZE_MAX / es || (size_t)st->i * es != e->size)
        return ac_error(AC_ERR_FORMAT, "tensor '%s': storage '%s' declares %" PRId64 " %s elements but holds %zu bytes",
                        tname, st->s, st->i, ac_storage_type_name(st->st_type), e->size);
    *out = e;
    return AC_OK;
}

static ac_dtype table_dtype(ac_storage_type t)
{
    switch (t) {
    case AC_ST_HALF: return AC_DTYPE_F16;
    case AC_ST_BFLOAT16: return AC_DTYPE_BF16;
    case AC_ST_FLOAT: case AC_ST_DOUBLE: return AC_DTYPE_F32; /* doubles are narrowed */
    default: return AC_DTYPE_I64; /* integer and bool types are widened */
    }
}

/* One element of type T at P into DST, in the table's type. */
static void convert_elem(ac_storage_type t, const unsigned char *p, unsigned char *dst)
{
    double d;
    float f;
    int64_t i = 0;
    switch (t) {
    case AC_ST_HALF: case AC_ST_BFLOAT16: memcpy(dst, p, 2); return;
    case AC_ST_FLOAT: memcpy(dst, p, 4); return;
    case AC_ST_LONG: memcpy(dst, p, 8); return;
    case AC_ST_DOUBLE: memcpy(&d, p, 8); f = (float)d; memcpy(dst, &f, 4); return;
    case AC_ST_INT: { int32_t v; memcpy(&v, p, 4); i = v; break; }
    case AC_ST_SHORT: { int16_t v; memcpy(&v, p, 2); i = v; break; }
    case AC_ST_CHAR: i = (int8_t)p[0]; break;
    default: i = p[0]; break; /* Byte, Bool */
    }
    memcpy(dst, &i, 8);
}

static ac_status own(walker *w, size_t bytes, void **out)
{
    ac_tensor_file *f = w->f;
    if (bytes > w->copy_budget)
        return ac_error(AC_ERR_FORMAT, "tensor copies would take more than %zu bytes", w->copy_budget);
    w->copy_budget -= bytes;
    if (f->n_owned == w->cap_owned) {
        size_t cap = w->cap_owned ? 2 * w->cap_owned : 16;
        void **v = realloc(f->owned, cap * sizeof *v);
        if (!v) return AC_ERR_NOMEM;
        f->owned = v;
        w->cap_owned = cap;
    }
    if (!(*out = ac_alloc_aligned(bytes ? bytes : 1))) return AC_ERR_NOMEM;
    f->owned[f->n_owned++] = *out;
    return AC_OK;
}

/* Fills T (name set) from the view V: bounds against the storage, then the
 * data in place when it is contiguous and of a table type, else a copy. */
static ac_status make_tensor(walker *w, const ac_pv *v, ac_tensor *t)
{
    const ac_pv *st = v->storage;
    const ac_zip_entry *e = NULL;
    AC_TRY(storage_bytes(w, st, t->name, &e));
    uint64_t numel = 1, last = (uint64_t)v->offset, limit = (uint64_t)st->i, expect = 1;
    int contiguous = 1, empty = 0;
    for (int d = v->ndim - 1; d >= 0; d--) {
        uint64_t n = (uint64_t)v->shape[d], s = (uint64_t)v->stride[d];
        if (n != 1 && s != expect) contiguous = 0;
        expect = n && expect <= UINT64_MAX / n ? expect * n : expect;
        if (n == 0) {
            empty = 1;
            continue;
        }
        /* saturate past the storage: the checks below refuse it */
        numel = n > limit || numel > limit / n ? limit + 1 : numel * n;
        uint64_t room = last < limit ? limit - last : 0;
        last = s && n - 1 > room / s ? UINT64_MAX : last + (n - 1) * s;
    }
    if (empty) numel = 0;
    char sh[128], sd[128];
    if (numel > limit)
        return ac_error(AC_ERR_FORMAT, "tensor '%s': shape %s has more elements than its storage '%s' of %" PRIu64
                        " (an expanded view?)", t->name, ac_shape_str(v->shape, v->ndim, sh, sizeof sh), st->s, limit);
    if (numel && last >= limit)
        return ac_error(AC_ERR_FORMAT,
                        "tensor '%s': offset %" PRId64 ", shape %s and stride %s reach past its storage '%s' of %"
                        PRIu64 " elements", t->name, v->offset, ac_shape_str(v->shape, v->ndim, sh, sizeof sh),
                        ac_shape_str(v->stride, v->ndim, sd, sizeof sd), st->s, limit);
    if (!numel && (uint64_t)v->offset > limit)
        return ac_error(AC_ERR_FORMAT, "tensor '%s': offset %" PRId64 " lies past its storage '%s' of %" PRIu64
                        " elements", t->name, v->offset, st->s, limit);
    t->dtype = table_dtype(st->st_type);
    t->ndim = v->ndim;
    memcpy(t->shape, v->shape, sizeof t->shape);
    t->numel = (int64_t)numel;
    t->nbytes = (size_t)ac_dtype_bytes(t->dtype, numel);
    size_t es = ac_storage_elem_size(st->st_type);
    const unsigned char *base = e->data + (size_t)v->offset * es;
    int same_type = es == ac_dtype_bytes(t->dtype, 1);
    if (contiguous && same_type) {
        t->data = base;
        return AC_OK;
    }
    void *copy = NULL;
    AC_TRY(own(w, t->nbytes, &copy));
    unsigned char *dst = copy;
    int64_t idx[AC_MAX_DIMS] = {0};
    size_t ds = (size_t)ac_dtype_bytes(t->dtype, 1);
    for (uint64_t k = 0; k < numel; k++, dst += ds) {
        size_t src = 0;
        for (int d = 0; d < v->ndim; d++) src += (size_t)(idx[d] * v->stride[d]);
        convert_elem(st->st_type, base + src * es, dst);
        for (int d = v->ndim - 1; d >= 0 && ++idx[d] == v->shape[d]; d--) idx[d] = 0;
    }
    t->data = copy;
    return AC_OK;
}

/* The table name of the tensor at depth DEPTH: its key at the top level,
 * else its path below the top-level entry. */
static ac_status tensor_name(const walker *w, int depth, char **out)
{
    char buf[MAX_NAME];
    size_t n = 0;
    for (int i = depth == 1 ? 0 : 1; i < depth; i++) {
        int k = snprintf(buf + n, sizeof buf - n, "%s%s", n ? "." : "", w->path[i]);
        if (k < 0 || (size_t)k >= sizeof buf - n) return ac_error(AC_ERR_FORMAT, "a tensor name is too long");
        n += (size_t)k;
    }
    if (!n) return ac_error(AC_ERR_FORMAT, "the top level is a tensor, not a dict of tensors");
    return (*out = ac_strdup(buf)) ? AC_OK : AC_ERR_NOMEM;
}

static ac_status add_tensor(walker *w, const ac_pv *v, int depth, cJSON **out)
{
    ac_tensor_file *f = w->f;
    if (f->n_tensors == w->cap_tensors) {
        size_t cap = w->cap_tensors ? 2 * w->cap_tensors : 64;
        ac_tensor *t = realloc(f->tensors, cap * sizeof *t);
        if (!t) return AC_ERR_NOMEM;
        f->tensors = t;
        w->cap_tensors = cap;
    }
    ac_tensor *t = &f->tensors[f->n_tensors];
    memset(t, 0, sizeof *t);
    AC_TRY(tensor_name(w, depth, &t->name));
    f->n_tensors++; /* from here the table frees the name */
    AC_TRY(make_tensor(w, v, t));
    cJSON *ref = cJSON_CreateObject();
    if (!ref || !cJSON_AddStringToObject(ref, "tensor", t->name)) {
        cJSON_Delete(ref);
        return AC_ERR_NOMEM;
    }
    *out = ref;
    return AC_OK;
}

static int by_key(const void *a, const void *b)
{
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* Python keeps the last of repeated keys; a checkpoint never repeats one,
 * so a repeat is refused rather than guessed at. */
static ac_status check_keys(const cJSON *obj, size_t n)
{
    const cJSON **v = ac_calloc(n ? n : 1, sizeof *v);
    if (!v) return AC_ERR_NOMEM;
    size_t k = 0;
    for (const cJSON *it = obj->child; it; it = it->next) v[k++] = it;
    qsort(v, k, sizeof *v, by_key);
    ac_status s = AC_OK;
    for (size_t i = 1; i < k && !s; i++)
        if (strcmp(v[i - 1]->string, v[i]->string) == 0)
            s = ac_error(AC_ERR_FORMAT, "dict key '%s' appears twice", v[i]->string);
    free(v);
    return s;
}

static ac_status walk(walker *w, const ac_pv *v, int depth, cJSON **out);

/* Containers: dict items become object members, list and tuple items array
 * elements; PATH[DEPTH] names each child while it is walked. */
static ac_status walk_items(walker *w, const ac_pv *v, int depth, cJSON *c)
{
    int dict = v->kind == AC_PV_DICT;
    char index[32];
    for (size_t i = 0; i < v->n; i += dict ? 2 : 1) {
        const ac_pv *key = dict ? v->items[i] : NULL, *item = v->items[i + (dict ? 1 : 0)];
        if (dict && key->kind == AC_PV_INT) snprintf(index, sizeof index, "%" PRId64, key->i);
        else if (dict && key->kind != AC_PV_STR) return ac_error(AC_ERR_FORMAT, "a dict key is not a string or an integer");
        else if (!dict) snprintf(index, sizeof index, "%zu", i);
        w->path[depth] = dict && key->kind == AC_PV_STR ? key->s : index;
        cJSON *child;
        AC_TRY(walk(w, item, depth + 1, &child));
        cJSON_bool ok = dict ? cJSON_AddItemToObject(c, w->path[depth], child) : cJSON_AddItemToArray(c, child);
        if (!ok) {
            cJSON_Delete(child);
            return AC_ERR_NOMEM;
        }
    }
    return dict ? check_keys(c, v->n / 2) : AC_OK;
}

static ac_status walk(walker *w, const ac_pv *v, int depth, cJSON **out)
{
    *out = NULL;
    if (!w->visits_left--) return ac_error(AC_ERR_FORMAT, "the pickle shares values too often");
    if (depth >= MAX_DEPTH) return ac_error(AC_ERR_FORMAT, "values nest deeper than %d levels", MAX_DEPTH);
    cJSON *c = NULL;
    switch (v->kind) {
    case AC_PV_NONE: c = cJSON_CreateNull(); break;
    case AC_PV_BOOL: c = cJSON_CreateBool(v->i != 0); break;
    case AC_PV_INT: c = cJSON_CreateNumber((double)v->i); break;
    case AC_PV_FLOAT: c = cJSON_CreateNumber(v->f); break;
    case AC_PV_STR: c = cJSON_CreateString(v->s); break;
    case AC_PV_TENSOR: return add_tensor(w, v, depth, out);
    case AC_PV_DICT: case AC_PV_LIST: case AC_PV_TUPLE: {
        c = v->kind == AC_PV_DICT ? cJSON_CreateObject() : cJSON_CreateArray();
        if (!c) return AC_ERR_NOMEM;
        ac_status s = walk_items(w, v, depth, c);
        if (s) {
            cJSON_Delete(c);
            return s;
        }
        break;
    }
    default:
        return ac_error(AC_ERR_FORMAT, "a %s is stored as a value", v->kind == AC_PV_STORAGE ? "bare storage" : "global");
    }
    if (!c) return AC_ERR_NOMEM;
    *out = c;
    return AC_OK;
}

/* The one "<name>/data.pkl" at the top of the archive; its prefix. */
static ac_status find_pickle(const ac_zip *z, const ac_zip_entry **pkl, char *prefix, size_t cap)
{
    *pkl = NULL;
    for (size_t i = 0; i < z->n_entries; i++) {
        const char *n = z->entries[i].name, *slash = strchr(n, '/');
        if (!slash || slash == n || strcmp(slash, "/data.pkl") != 0) continue;
        if (*pkl) return ac_error(AC_ERR_FORMAT, "the archive holds two pickles ('%s' and '%s')", (*pkl)->name, n);
        if ((size_t)(slash - n) + 2 > cap) return ac_error(AC_ERR_FORMAT, "archive folder name is too long");
        *pkl = &z->entries[i];
        memcpy(prefix, n, (size_t)(slash - n) + 1);
        prefix[slash - n + 1] = 0;
    }
    if (!*pkl) return ac_error(AC_ERR_FORMAT, "no <name>/data.pkl in the archive (not a torch.save file?)");
    if (!ac_zip_crc_ok(*pkl)) return ac_error(AC_ERR_FORMAT, "'%s' fails its CRC check (damaged?)", (*pkl)->name);
    return AC_OK;
}

static ac_status check_byteorder(const ac_zip *z, const char *prefix)
{
    char name[MAX_NAME + 16];
    snprintf(name, sizeof name, "%sbyteorder", prefix);
    const ac_zip_entry *e = ac_zip_find(z, name);
    if (!e || (e->size == 6 && memcmp(e->data, "little", 6) == 0)) return AC_OK;
    if (e->size == 3 && memcmp(e->data, "big", 3) == 0)
        return ac_error(AC_ERR_UNSUPPORTED, "the checkpoint was saved big-endian; only little-endian is supported");
    return ac_error(AC_ERR_FORMAT, "'%s' is neither 'little' nor 'big'", name);
}

static ac_status parse_archive(ac_tensor_file *f, const unsigned char *buf, size_t size)
{
    if (size >= 2 && buf[0] == 0x80)
        return ac_error(AC_ERR_UNSUPPORTED, "the torch.save format before torch 1.6 is not supported "
                                            "(load and save it again with a newer torch)");
    ac_zip z;
    AC_TRY(ac_zip_open(buf, size, &z));
    const ac_zip_entry *pkl;
    char prefix[MAX_NAME];
    ac_pickle *p = NULL;
    ac_status s = find_pickle(&z, &pkl, prefix, sizeof prefix);
    if (!s) s = check_byteorder(&z, prefix);
    if (!s) s = ac_pickle_load(pkl->data, pkl->size, &p);
    cJSON *root = NULL;
    if (!s) {
        walker w = {.f = f, .zip = &z, .prefix = prefix, .visits_left = 4 * ac_pickle_count(p) + 1024,
                    .copy_budget = size < SIZE_MAX / 8 ? 8 * size + (1u << 20) : SIZE_MAX};
        s = walk(&w, ac_pickle_root(p), 0, &root);
    }
    if (!s && !cJSON_IsObject(root)) s = ac_error(AC_ERR_FORMAT, "the saved object is not a dict");
    if (!s) s = ac_tensor_file_check_names(f);
    if (!s) {
        s = ac_config_from_json(root, f->path, &f->values);
        root = NULL;
    }
    cJSON_Delete(root);
    ac_pickle_free(p);
    ac_zip_close(&z);
    return s;
}

ac_status ac_torch_parse(const void *buf, size_t size, const char *name, ac_tensor_file **out)
{
    *out = NULL;
    ac_tensor_file *f = ac_tensor_file_new(name);
    if (!f) return AC_ERR_NOMEM;
    ac_status s = parse_archive(f, buf, size);
    if (s) {
        ac_tensor_file_free_table(f);
        return ac_error_prefix(s, "%s", name);
    }
    *out = f;
    return AC_OK;
}
