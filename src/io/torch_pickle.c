#include "io/torch_pickle.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"

enum { G_ORDERED_DICT = AC_ST_COUNT, G_REBUILD_TENSOR, G_REBUILD_PARAMETER };

static const char *const storage_names[AC_ST_COUNT] = {
    "Half", "Float", "BFloat16", "Double", "Long", "Int", "Short", "Char", "Byte", "Bool",
};
static const unsigned char storage_sizes[AC_ST_COUNT] = {2, 4, 2, 8, 8, 4, 2, 1, 1, 1};

size_t ac_storage_elem_size(ac_storage_type t) { return storage_sizes[t]; }
const char *ac_storage_type_name(ac_storage_type t) { return storage_names[t]; }

struct ac_pickle {
    ac_pv **all; /* every value made, freed together: values are shared */
    size_t n_all, cap_all;
    ac_pv *root;
};

typedef struct {
    ac_pickle *p;
    const unsigned char *b;
    size_t size, pos;
    ac_pv **stack;
    size_t n_stack, cap_stack;
    size_t *marks;
    size_t n_marks, cap_marks;
    ac_pv **memo;
    size_t n_memo;
} vm;

/* Room for NEED elements of ELEM bytes in *V. */
static int grow(void *v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 1;
    size_t n = *cap ? *cap : 8;
    while (n < need) n *= 2;
    void *q = realloc(*(void **)v, n * elem);
    if (!q) return 0;
    *(void **)v = q;
    *cap = n;
    return 1;
}

static ac_pv *make(vm *m, ac_pv_kind kind)
{
    ac_pickle *p = m->p;
    if (!grow(&p->all, &p->cap_all, p->n_all + 1, sizeof *p->all)) return NULL;
    ac_pv *v = ac_calloc(1, sizeof *v);
    if (v) {
        v->kind = kind;
        p->all[p->n_all++] = v;
    }
    return v;
}

static ac_status push(vm *m, ac_pv *v)
{
    if (!v || !grow(&m->stack, &m->cap_stack, m->n_stack + 1, sizeof *m->stack)) return AC_ERR_NOMEM;
    m->stack[m->n_stack++] = v;
    return AC_OK;
}

static size_t floor_of_stack(const vm *m) { return m->n_marks ? m->marks[m->n_marks - 1] : 0; }

static ac_status pop(vm *m, ac_pv **out)
{
    if (m->n_stack <= floor_of_stack(m))
        return ac_error(AC_ERR_FORMAT, "pickle stack underflow at byte %zu", m->pos);
    *out = m->stack[--m->n_stack];
    return AC_OK;
}

/* The container of KIND just below the stack position AT (a MARK). */
static ac_status below(vm *m, size_t at, ac_pv_kind kind, const char *what, ac_pv **out)
{
    if (at <= floor_of_stack(m) || m->stack[at - 1]->kind != kind)
        return ac_error(AC_ERR_FORMAT, "pickle %s at byte %zu has no %s to work on", what, m->pos,
                        kind == AC_PV_DICT ? "dict" : "list");
    *out = m->stack[at - 1];
    return AC_OK;
}

/* Where the last MARK left the stack; the mark is consumed. */
static ac_status pop_mark(vm *m, size_t *at)
{
    if (!m->n_marks) return ac_error(AC_ERR_FORMAT, "pickle opcode at byte %zu needs a MARK", m->pos);
    *at = m->marks[--m->n_marks];
    return AC_OK;
}

static ac_status add_items(ac_pv *c, ac_pv *const *v, size_t n)
{
    if (!n) return AC_OK;
    if (!grow(&c->items, &c->cap, c->n + n, sizeof *c->items)) return AC_ERR_NOMEM;
    memcpy(c->items + c->n, v, n * sizeof *v);
    c->n += n;
    return AC_OK;
}

/* The stack items from AT up, into a new container of KIND. */
static ac_status collect(vm *m, ac_pv_kind kind, size_t at)
{
    ac_pv *c = make(m, kind);
    if (!c) return AC_ERR_NOMEM;
    if (m->n_stack > at) AC_TRY(add_items(c, m->stack + at, m->n_stack - at));
    m->n_stack = at;
    return push(m, c);
}

static ac_status need(vm *m, size_t n, const unsigned char **out)
{
    if (n > m->size - m->pos)
        return ac_error(AC_ERR_FORMAT, "pickle ends inside an opcode at byte %zu (truncated?)", m->pos);
    *out = m->b + m->pos;
    m->pos += n;
    return AC_OK;
}

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static ac_status push_int(vm *m, int64_t i)
{
    ac_pv *v = make(m, AC_PV_INT);
    if (v) v->i = i;
    return push(m, v);
}

static ac_status push_str(vm *m, const unsigned char *s, size_t n)
{
    if (memchr(s, 0, n)) return ac_error(AC_ERR_FORMAT, "pickle string at byte %zu holds a NUL byte", m->pos);
    ac_pv *v = make(m, AC_PV_STR);
    if (!v || !(v->s = ac_malloc(n + 1))) return AC_ERR_NOMEM;
    memcpy(v->s, s, n);
    v->s[n] = 0;
    v->len = n;
    return push(m, v);
}

static ac_status push_global(vm *m, const char *module, const char *name)
{
    int which = -1;
    if (strcmp(module, "collections") == 0 && strcmp(name, "OrderedDict") == 0) which = G_ORDERED_DICT;
    if (strcmp(module, "torch._utils") == 0 && strcmp(name, "_rebuild_tensor_v2") == 0) which = G_REBUILD_TENSOR;
    if (strcmp(module, "torch._utils") == 0 && strcmp(name, "_rebuild_parameter") == 0) which = G_REBUILD_PARAMETER;
    size_t n = strlen(name);
    if (strcmp(module, "torch") == 0 && n > 7 && strcmp(name + n - 7, "Storage") == 0)
        for (int t = 0; t < AC_ST_COUNT; t++)
            if (n - 7 == strlen(storage_names[t]) && strncmp(name, storage_names[t], n - 7) == 0) which = t;
    if (which < 0) return ac_error(AC_ERR_UNSUPPORTED, "pickle global '%s.%s' is not allowed", module, name);
    ac_pv *v = make(m, AC_PV_GLOBAL);
    if (v) v->i = which;
    return push(m, v);
}

/* GLOBAL's argument: "module\nname\n". */
static ac_status read_line(vm *m, char *dst, size_t cap)
{
    const unsigned char *s = m->b + m->pos, *nl = memchr(s, '\n', m->size - m->pos);
    if (!nl) return ac_error(AC_ERR_FORMAT, "pickle GLOBAL at byte %zu is not terminated", m->pos);
    size_t n = (size_t)(nl - s);
    if (n >= cap || memchr(s, 0, n)) return ac_error(AC_ERR_FORMAT, "pickle GLOBAL at byte %zu is malformed", m->pos);
    memcpy(dst, s, n);
    dst[n] = 0;
    m->pos += n + 1;
    return AC_OK;
}

static int is_ints(const ac_pv *t, int max)
{
    if (t->kind != AC_PV_TUPLE || t->n > (size_t)max) return 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->items[i]->kind != AC_PV_INT || t->items[i]->i < 0) return 0;
    return 1;
}

/* _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]) */
static ac_status rebuild_tensor(vm *m, const ac_pv *a)
{
    ac_pv *const *x = a->items;
    if ((a->n != 6 && a->n != 7) || x[0]->kind != AC_PV_STORAGE || x[1]->kind != AC_PV_INT || x[1]->i < 0 ||
        !is_ints(x[2], AC_MAX_DIMS) || !is_ints(x[3], AC_MAX_DIMS) || x[2]->n != x[3]->n ||
        x[4]->kind != AC_PV_BOOL || x[5]->kind != AC_PV_DICT ||
        (a->n == 7 && x[6]->kind != AC_PV_NONE && x[6]->kind != AC_PV_DICT))
        return ac_error(AC_ERR_FORMAT,
                        "pickle at byte %zu: _rebuild_tensor_v2 needs (storage, offset, size, stride, "
                        "requires_grad, hooks) with at most %d non-negative dimensions", m->pos, AC_MAX_DIMS);
    ac_pv *t = make(m, AC_PV_TENSOR);
    if (!t) return AC_ERR_NOMEM;
    t->storage = x[0];
    t->offset = x[1]->i;
    t->ndim = (int)x[2]->n;
    for (int i = 0; i < t->ndim; i++) {
        t->shape[i] = x[2]->items[i]->i;
        t->stride[i] = x[3]->items[i]->i;
    }
    return push(m, t);
}

static ac_status reduce(vm *m)
{
    ac_pv *args = NULL, *fn = NULL;
    AC_TRY(pop(m, &args));
    AC_TRY(pop(m, &fn));
    if (fn->kind != AC_PV_GLOBAL || args->kind != AC_PV_TUPLE)
        return ac_error(AC_ERR_FORMAT, "pickle REDUCE at byte %zu does not call a global with a tuple", m->pos);
    switch (fn->i) {
    case G_ORDERED_DICT:
        if (args->n) break;
        return push(m, make(m, AC_PV_DICT));
    case G_REBUILD_TENSOR:
        return rebuild_tensor(m, args);
    case G_REBUILD_PARAMETER:
        if (args->n != 3 || args->items[0]->kind != AC_PV_TENSOR) break;
        return push(m, args->items[0]);
    default:
        break;
    }
    return ac_error(AC_ERR_FORMAT, "pickle REDUCE at byte %zu: unexpected arguments for an allowed global", m->pos);
}

/* BINPERSID: ("storage", torch.XStorage, key, location, numel). */
static ac_status persistent(vm *m)
{
    ac_pv *pid = NULL;
    AC_TRY(pop(m, &pid));
    ac_pv *const *x = pid->items;
    if (pid->kind != AC_PV_TUPLE || pid->n != 5 || x[0]->kind != AC_PV_STR || strcmp(x[0]->s, "storage") != 0 ||
        x[1]->kind != AC_PV_GLOBAL || x[1]->i >= AC_ST_COUNT || x[2]->kind != AC_PV_STR ||
        x[3]->kind != AC_PV_STR || x[4]->kind != AC_PV_INT || x[4]->i < 0)
        return ac_error(AC_ERR_FORMAT,
                        "pickle persistent id at byte %zu is not (\"storage\", type, key, location, numel)", m->pos);
    ac_pv *s = make(m, AC_PV_STORAGE);
    if (!s) return AC_ERR_NOMEM;
    s->st_type = (ac_storage_type)x[1]->i;
    s->s = x[2]->s; /* owned by the key string, which lives as long */
    s->i = x[4]->i;
    return push(m, s);
}

static ac_status memo_put(vm *m, uint64_t idx)
{
    if (m->n_stack <= floor_of_stack(m)) return ac_error(AC_ERR_FORMAT, "pickle memo put at byte %zu with an empty stack", m->pos);
    if (idx >= m->size) return ac_error(AC_ERR_FORMAT, "pickle memo index %llu at byte %zu is out of range", (unsigned long long)idx, m->pos);
    if (idx >= m->n_memo) {
        size_t cap = m->n_memo;
        if (!grow(&m->memo, &cap, (size_t)idx + 1, sizeof *m->memo)) return AC_ERR_NOMEM;
        memset(m->memo + m->n_memo, 0, (cap - m->n_memo) * sizeof *m->memo);
        m->n_memo = cap;
    }
    m->memo[idx] = m->stack[m->n_stack - 1];
    return AC_OK;
}

static ac_status memo_get(vm *m, uint64_t idx)
{
    if (idx >= m->n_memo || !m->memo[idx])
        return ac_error(AC_ERR_FORMAT, "pickle memo slot %llu at byte %zu is empty", (unsigned long long)idx, m->pos);
    return push(m, m->memo[idx]);
}

static ac_status run(vm *m)
{
    size_t memo_next = 0; /* MEMOIZE's index: the count of puts, as Python's len(memo) */
    for (;;) {
        const unsigned char *a = NULL;
        size_t at = m->pos;
        AC_TRY(need(m, 1, &a));
        unsigned op = a[0];
        ac_pv *v = NULL, *k = NULL, *c = NULL;
        size_t mark = 0;
        switch (op) {
        case 0x80: /* PROTO */
            AC_TRY(need(m, 1, &a));
            if (a[0] > 5) return ac_error(AC_ERR_UNSUPPORTED, "pickle protocol %u is not supported", a[0]);
            break;
        case 0x95: /* FRAME: a length hint */
            AC_TRY(need(m, 8, &a));
            break;
        case '}': AC_TRY(push(m, make(m, AC_PV_DICT))); break;
        case ']': AC_TRY(push(m, make(m, AC_PV_LIST))); break;
        case ')': AC_TRY(push(m, make(m, AC_PV_TUPLE))); break;
        case 'N': AC_TRY(push(m, make(m, AC_PV_NONE))); break;
        case 0x88: case 0x89: /* NEWTRUE, NEWFALSE */
            v = make(m, AC_PV_BOOL);
            if (v) v->i = op == 0x88;
            AC_TRY(push(m, v));
            break;
        case '(': /* MARK */
            if (!grow(&m->marks, &m->cap_marks, m->n_marks + 1, sizeof *m->marks)) return AC_ERR_NOMEM;
            m->marks[m->n_marks++] = m->n_stack;
            break;
        case 't': AC_TRY(pop_mark(m, &mark)); AC_TRY(collect(m, AC_PV_TUPLE, mark)); break;
        case 0x85: case 0x86: case 0x87: /* TUPLE1..3 */
            if (m->n_stack < floor_of_stack(m) + (op - 0x84))
                return ac_error(AC_ERR_FORMAT, "pickle stack underflow at byte %zu", at);
            AC_TRY(collect(m, AC_PV_TUPLE, m->n_stack - (op - 0x84)));
            break;
        case 'a': /* APPEND */
            AC_TRY(pop(m, &v));
            AC_TRY(below(m, m->n_stack, AC_PV_LIST, "APPEND", &c));
            AC_TRY(add_items(c, &v, 1));
            break;
        case 'e': /* APPENDS */
            AC_TRY(pop_mark(m, &mark));
            AC_TRY(below(m, mark, AC_PV_LIST, "APPENDS", &c));
            AC_TRY(add_items(c, m->stack + mark, m->n_stack - mark));
            m->n_stack = mark;
            break;
        case 's': /* SETITEM */
            AC_TRY(pop(m, &v));
            AC_TRY(pop(m, &k));
            AC_TRY(below(m, m->n_stack, AC_PV_DICT, "SETITEM", &c));
            AC_TRY(add_items(c, (ac_pv *[]){k, v}, 2));
            break;
        case 'u': /* SETITEMS */
            AC_TRY(pop_mark(m, &mark));
            if ((m->n_stack - mark) % 2)
                return ac_error(AC_ERR_FORMAT, "pickle SETITEMS at byte %zu has a key without a value", at);
            AC_TRY(below(m, mark, AC_PV_DICT, "SETITEMS", &c));
            AC_TRY(add_items(c, m->stack + mark, m->n_stack - mark));
            m->n_stack = mark;
            break;
        case 'J': AC_TRY(need(m, 4, &a)); AC_TRY(push_int(m, (int32_t)(uint32_t)le(a, 4))); break;
        case 'K': AC_TRY(need(m, 1, &a)); AC_TRY(push_int(m, a[0])); break;
        case 'M': AC_TRY(need(m, 2, &a)); AC_TRY(push_int(m, (int64_t)le(a, 2))); break;
        case 0x8a: { /* LONG1: little-endian two's complement */
            AC_TRY(need(m, 1, &a));
            size_t n = a[0];
            if (n > 8) return ac_error(AC_ERR_UNSUPPORTED, "pickle integer at byte %zu is wider than 64 bits", at);
            AC_TRY(need(m, n, &a));
            uint64_t u = n ? le(a, (int)n) : 0;
            if (n && n < 8 && (a[n - 1] & 0x80)) u |= ~0ull << (8 * n);
            AC_TRY(push_int(m, (int64_t)u));
            break;
        }
        case 'G': { /* BINFLOAT, big-endian */
            AC_TRY(need(m, 8, &a));
            uint64_t u = 0;
            for (int i = 0; i < 8; i++) u = u << 8 | a[i];
            v = make(m, AC_PV_FLOAT);
            if (v) memcpy(&v->f, &u, 8);
            AC_TRY(push(m, v));
            break;
        }
        case 'X': case 0x8c: { /* BINUNICODE, SHORT_BINUNICODE */
            AC_TRY(need(m, op == 'X' ? 4 : 1, &a));
            size_t n = (size_t)le(a, op == 'X' ? 4 : 1);
            AC_TRY(need(m, n, &a));
            AC_TRY(push_str(m, a, n));
            break;
        }
        case 'q': AC_TRY(need(m, 1, &a)); AC_TRY(memo_put(m, a[0])); memo_next++; break;
        case 'r': AC_TRY(need(m, 4, &a)); AC_TRY(memo_put(m, le(a, 4))); memo_next++; break;
        case 0x94: AC_TRY(memo_put(m, memo_next++)); break; /* MEMOIZE */
        case 'h': AC_TRY(need(m, 1, &a)); AC_TRY(memo_get(m, a[0])); break;
        case 'j': AC_TRY(need(m, 4, &a)); AC_TRY(memo_get(m, le(a, 4))); break;
        case 'c': { /* GLOBAL */
            char module[256], name[256];
            AC_TRY(read_line(m, module, sizeof module));
            AC_TRY(read_line(m, name, sizeof name));
            AC_TRY(push_global(m, module, name));
            break;
        }
        case 0x93: /* STACK_GLOBAL */
            AC_TRY(pop(m, &v));
            AC_TRY(pop(m, &k));
            if (k->kind != AC_PV_STR || v->kind != AC_PV_STR)
                return ac_error(AC_ERR_FORMAT, "pickle STACK_GLOBAL at byte %zu needs two strings", at);
            AC_TRY(push_global(m, k->s, v->s));
            break;
        case 'R': AC_TRY(reduce(m)); break;
        case 'Q': AC_TRY(persistent(m)); break;
        case 'b': /* BUILD: only the attributes of an OrderedDict (torch's _metadata), dropped */
            AC_TRY(pop(m, &v));
            AC_TRY(below(m, m->n_stack, AC_PV_DICT, "BUILD", &c));
            if (v->kind != AC_PV_DICT && v->kind != AC_PV_NONE)
                return ac_error(AC_ERR_FORMAT, "pickle BUILD at byte %zu: the state of a dict must be a dict", at);
            break;
        case '.': /* STOP */
            if (m->n_marks || m->n_stack != 1)
                return ac_error(AC_ERR_FORMAT, "pickle STOP at byte %zu leaves %zu values and %zu marks", at,
                                m->n_stack, m->n_marks);
            if (m->pos != m->size)
                return ac_error(AC_ERR_FORMAT, "pickle has %zu bytes after STOP", m->size - m->pos);
            m->p->root = m->stack[0];
            return AC_OK;
        default:
            if (op >= 0x20 && op < 0x7f)
                return ac_error(AC_ERR_UNSUPPORTED, "pickle opcode '%c' (0x%02x) at byte %zu is not supported", op, op, at);
            return ac_error(AC_ERR_UNSUPPORTED, "pickle opcode 0x%02x at byte %zu is not supported", op, at);
        }
    }
}

ac_status ac_pickle_load(const void *buf, size_t size, ac_pickle **out)
{
    *out = NULL;
    ac_pickle *p = ac_calloc(1, sizeof *p);
    if (!p) return AC_ERR_NOMEM;
    vm m = {.p = p, .b = buf, .size = size};
    ac_status s = run(&m);
    free(m.stack);
    free(m.marks);
    free(m.memo);
    if (s) {
        ac_pickle_free(p);
        return s;
    }
    *out = p;
    return AC_OK;
}

const ac_pv *ac_pickle_root(const ac_pickle *p) { return p->root; }
size_t ac_pickle_count(const ac_pickle *p) { return p->n_all; }

void ac_pickle_free(ac_pickle *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n_all; i++) {
        if (p->all[i]->kind == AC_PV_STR) free(p->all[i]->s);
        free(p->all[i]->items);
        free(p->all[i]);
    }
    free(p->all);
    free(p);
}
