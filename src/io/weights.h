/* The weight table: the one way a model reads its tensors. Each lookup
 * formats a name, checks the tensor's shape and type, and hands it out as
 * an f32 array or as a matrix in its stored type. F32 tensors are used in
 * place from the mapping when aligned; others are converted once and owned
 * by the table. */
#ifndef AC_IO_WEIGHTS_H
#define AC_IO_WEIGHTS_H

#include "audioc.h"
#include "base/error.h"
#include "io/tensor_file.h"
#include "tensor/mat.h"

/* Maps the name a loader asks for to the file's own: OURS and THEIRS are
 * printf formats with the same conversions (see ac_weights_set_names). */
typedef struct ac_weight_name {
    const char *ours, *theirs;
} ac_weight_name;

/* A matrix the table handed out (ac_weights_mat, ac_weights_linear): its
 * name in the file, the type the file stores it in and the type it is held
 * in, as the family's rule and the table's weight type decided. */
typedef struct ac_weight_held {
    char *name;
    ac_dtype stored, held;
} ac_weight_held;

typedef struct ac_weights {
    ac_tensor_file *st;
    const char *file;     /* short name for messages */
    char ns[64];          /* namespace put before every name ("fm_weights.") */
    const ac_weight_name *names; /* name table, or NULL */
    size_t n_names;
    struct ac_weights_owned {
        void *p;
        size_t size;
    } *owned;             /* converted copies */
    size_t n_owned, cap_owned;
    void *hot;            /* see ac_weights_make_hot */
    size_t hot_size;
    ac_weight_type type;  /* what matrices are converted to (ac_weights_set_type) */
    int keep;             /* the least bits of a converted matrix (ac_weights_keep) */
    ac_weight_held *held; /* every matrix handed out, in order */
    size_t n_held, cap_held;
} ac_weights;

ac_status ac_weights_open(const char *path, ac_weights **out);
void ac_weights_free(ac_weights *w);

/* How a loader's names reach the file's tensors. Every lookup below takes
 * its name as a printf format and arguments ("layers.%d.fc1.weight", i);
 * a format found in the name table is replaced by its pair before the
 * arguments are put in, and the namespace goes before the result. A
 * family reads one layout in its own names and the others through tables,
 * and a part of a many-part file through its namespace. */
ac_status ac_weights_set_namespace(ac_weights *w, const char *ns);
/* TABLE lives as long as W. A pair whose formats differ in their
 * conversions is refused. */
ac_status ac_weights_set_names(ac_weights *w, const ac_weight_name *table, size_t n);

/* Precision. The matrices handed out after this (ac_weights_mat,
 * ac_weights_linear's weight) are converted to TYPE when they load, once,
 * into memory the table owns (through tensor/quant's row conversions), and
 * the file's pages behind them are released, so the model holds each
 * matrix once, in TYPE. A matrix stored in a lower precision than TYPE is
 * only dequantized (it gains nothing); Q8_0 takes only rows that are a
 * multiple of 32 values (others stay as stored). Every other lookup
 * (vectors, norms, f32 arrays) is unchanged: a family's rule is what it
 * loads as a matrix, less what it loads under ac_weights_keep. */
ac_status ac_weights_set_type(ac_weights *w, ac_weight_type type);
/* ac_weights_open, then ac_weights_set_type (the table freed if that fails). */
ac_status ac_weights_open_as(const char *path, ac_weight_type type, ac_weights **out);
/* A family's exemptions: while set, matrices keep at least BITS bits
 * whatever the table's type (an f32 request still holds them in f32, which
 * loses nothing). AC_KEEP_STORED (32): each keeps its stored
 * type (embeddings, small convolutions); AC_KEEP_16: a request below 16
 * bits (q8_0) holds an F32 or F16 one in bf16 (F16 too: its products then
 * take bf16's dot products, where the CPU has them), others as stored;
 * 0: no exemption. Returns the previous setting, to restore. */
enum { AC_KEEP_16 = 16, AC_KEEP_STORED = 32 };
int ac_weights_keep(ac_weights *w, int bits);
/* The matrices handed out so far and the type each is held in: the rule as
 * the family's loader applied it, which a tool writing converted files
 * reads instead of repeating the rule. */
const ac_weight_held *ac_weights_held(const ac_weights *w, size_t *n);

/* A load watched by a tool that writes converted files (api/quantize.c):
 * while a recorder is set on the calling thread, matrices are handed out
 * as stored, not converted (the rule is recorded in ac_weights_held, the
 * model is never run), and ac_weights_free gives each table to the
 * recorder instead of freeing it, so every table a load opened, kept or
 * not, can be read after the model is freed. Unset it (NULL) before
 * ac_weights_recorder_free, which frees the tables. */
typedef struct ac_weights_recorder {
    ac_weights **tables;
    size_t n, cap;
    int failed;   /* out of memory while keeping a table (that one was freed) */
} ac_weights_recorder;
void ac_weights_record(ac_weights_recorder *r);
void ac_weights_recorder_free(ac_weights_recorder *r);

/* The tensor of that name, or NULL (a name too long to form also sets the
 * last error). */
const ac_tensor *ac_weights_find(const ac_weights *w, const char *fmt, ...) AC_PRINTF(2, 3);
/* The plain values of a torch checkpoint (medium.pt's "dims"), or NULL. */
const struct ac_config *ac_weights_values(const ac_weights *w);
/* A file carried inside the container (GGUF), or NULL. */
const ac_embedded_file *ac_weights_embedded(const ac_weights *w, const char *name);

/* The tensor as f32 after checking that its shape is SHAPE[NDIM]. Errors
 * name the file and the tensor. */
ac_status ac_weights_f32(ac_weights *w, int ndim, const int64_t *shape, const float **out, const char *fmt, ...)
    AC_PRINTF(5, 6);
/* The loader has made its own form of the N values ac_weights_f32 gave at
 * P (a new layout): a converted copy is freed, or the file's pages behind
 * them released, so they are not held twice. */
void ac_weights_done(ac_weights *w, const float *p, size_t n);
/* A vector of N values as f32. */
ac_status ac_weights_vec(ac_weights *w, int n, const float **out, const char *fmt, ...) AC_PRINTF(4, 5);
/* As ac_weights_f32, copied into a new buffer the table owns, for weights
 * that the model rearranges at load time. */
ac_status ac_weights_f32_copy(ac_weights *w, int ndim, const int64_t *shape, float **out, const char *fmt, ...)
    AC_PRINTF(5, 6);
/* The tensor of shape SHAPE[NDIM], whose first dimension is the matrix's
 * rows and the rest its columns, used in place in its stored type (f32 is
 * copied only when the mapping is misaligned). */
ac_status ac_weights_mat(ac_weights *w, int ndim, const int64_t *shape, ac_mat *out, const char *fmt, ...)
    AC_PRINTF(5, 6);
/* A linear layer NAME: NAME.weight [rows][cols] as a matrix and, unless
 * BIAS is NULL, NAME.bias [rows] as f32. */
ac_status ac_weights_linear(ac_weights *w, int rows, int cols, ac_mat *weight, const float **bias, const char *fmt,
                            ...) AC_PRINTF(6, 7);
/* A norm's NAME.weight and NAME.bias, vectors of N (LayerNorm and the like). */
ac_status ac_weights_norm(ac_weights *w, int n, const float **weight, const float **bias, const char *fmt, ...)
    AC_PRINTF(5, 6);
/* Moves matrices that are read in full at every step (decoding) into one
 * anonymous region on huge pages, where the kernel grants them, and points
 * them there; their pages in the file mapping are released, so memory use
 * stays the same. Streaming weights through 4 KB pages costs a third of the
 * memory bandwidth in TLB misses. */
ac_status ac_weights_make_hot(ac_weights *w, ac_mat *const *mats, size_t n);
/* A BatchNorm NAME (.weight, .bias, .running_mean, .running_var, vectors of
 * N) folded into y = x * SCALE + SHIFT, both owned by the table. A
 * variance below -EPS is refused. */
ac_status ac_weights_batchnorm(ac_weights *w, int n, float eps, float **scale, float **shift, const char *fmt, ...)
    AC_PRINTF(6, 7);
/* A weight-normed weight (torch's weight_norm over dim 0): NAME.weight_v
 * of shape SHAPE[NDIM] and NAME.weight_g of [shape[0], 1, ...], resolved
 * once to W[o] = g[o] * v[o] / ||v[o]|| as f32 [shape[0]][the rest], owned
 * by the table. A row of v whose norm is zero is refused. */
ac_status ac_weights_weight_norm(ac_weights *w, int ndim, const int64_t *shape, float **out, const char *fmt, ...)
    AC_PRINTF(5, 6);
/* A float buffer of N values that lives as long as the table. */
float *ac_weights_scratch(ac_weights *w, size_t n);

/* Shorthand for shape arrays: AC_SHAPE(128, 129, 3). */
#define AC_SHAPE(...) (sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), ((const int64_t[]){__VA_ARGS__})

#endif
