/* The restricted unpickler of torch.save's data.pkl: the opcodes of pickle
 * protocol 2 that plain containers and tensors need, and an allow-list of
 * globals (OrderedDict, the tensor rebuilders, the storage types). Anything
 * else is refused by name, so that loading a checkpoint never runs code. */
#ifndef AC_IO_TORCH_PICKLE_H
#define AC_IO_TORCH_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "audioc.h"
#include "io/tensor_file.h"

typedef enum {
    AC_PV_NONE,
    AC_PV_BOOL,
    AC_PV_INT,
    AC_PV_FLOAT,
    AC_PV_STR,
    AC_PV_TUPLE,
    AC_PV_LIST,
    AC_PV_DICT,     /* items alternate key, value (insertion order) */
    AC_PV_GLOBAL,   /* an allowed callable or class */
    AC_PV_STORAGE,  /* a persistent id: ("storage", type, key, location, numel) */
    AC_PV_TENSOR,
} ac_pv_kind;

/* The storage element types torch writes. */
typedef enum {
    AC_ST_HALF, AC_ST_FLOAT, AC_ST_BFLOAT16, AC_ST_DOUBLE, AC_ST_LONG, AC_ST_INT,
    AC_ST_SHORT, AC_ST_CHAR, AC_ST_BYTE, AC_ST_BOOL, AC_ST_COUNT,
} ac_storage_type;

typedef struct ac_pv {
    ac_pv_kind kind;
    int64_t i;            /* BOOL, INT; STORAGE: numel; GLOBAL: which */
    double f;
    char *s;              /* STR; STORAGE: key */
    size_t len;           /* STR bytes */
    struct ac_pv **items; /* TUPLE, LIST, DICT */
    size_t n, cap;
    /* TENSOR: its storage and view; STORAGE: st_type */
    struct ac_pv *storage;
    ac_storage_type st_type;
    int64_t offset;
    int ndim;
    int64_t shape[AC_MAX_DIMS], stride[AC_MAX_DIMS];
} ac_pv;

typedef struct ac_pickle ac_pickle;

/* Runs the pickle BUF[SIZE]; the result lives until ac_pickle_free.
 * Messages name the opcode or global, not the file: callers prefix it. */
ac_status ac_pickle_load(const void *buf, size_t size, ac_pickle **out);
const ac_pv *ac_pickle_root(const ac_pickle *p);
/* How many values the pickle made: a bound for walks over the result,
 * whose values may be shared or even cyclic. */
size_t ac_pickle_count(const ac_pickle *p);
void ac_pickle_free(ac_pickle *p);

/* Bytes of one element; "Half", "Float", ... */
size_t ac_storage_elem_size(ac_storage_type t);
const char *ac_storage_type_name(ac_storage_type t);

#endif
