/* The weight table: named tensors of a checkpoint, checked against the
 * shapes a model expects and handed out as f32. F32 tensors are used in
 * place from the mapping when aligned; others are converted once and owned
 * by the table. */
#ifndef AC_IO_WEIGHTS_H
#define AC_IO_WEIGHTS_H

#include "io/tensor_file.h"
#include "tensor/mat.h"

typedef struct ac_weights {
    ac_tensor_file *st;
    const char *file;     /* short name for messages */
    void **owned;         /* converted copies */
    size_t n_owned, cap_owned;
    void *hot;            /* see ac_weights_make_hot */
    size_t hot_size;
} ac_weights;

ac_status ac_weights_open(const char *path, ac_weights **out);
void ac_weights_free(ac_weights *w);

int ac_weights_has(const ac_weights *w, const char *name);
/* The plain values of a torch checkpoint (medium.pt's "dims"), or NULL. */
const struct ac_config *ac_weights_values(const ac_weights *w);
/* A file carried inside the container (GGUF), or NULL. */
const ac_embedded_file *ac_weights_embedded(const ac_weights *w, const char *name);

/* The tensor NAME as f32 after checking that its shape is SHAPE[NDIM].
 * Errors name the file and the tensor. */
ac_status ac_weights_f32(ac_weights *w, const char *name, int ndim,
                         const int64_t *shape, const float **out);
/* The same, copied into a new buffer the table owns, for weights that the
 * model rearranges at load time. */
ac_status ac_weights_f32_copy(ac_weights *w, const char *name, int ndim,
                              const int64_t *shape, float **out);
/* The tensor NAME of shape SHAPE[NDIM], whose first dimension is the
 * matrix's rows and the rest its columns, used in place in its stored type
 * (f32 is copied only when the mapping is misaligned). */
ac_status ac_weights_mat(ac_weights *w, const char *name, int ndim, const int64_t *shape, ac_mat *out);
/* Moves matrices that are read in full at every step (decoding) into one
 * anonymous region on huge pages, where the kernel grants them, and points
 * them there; their pages in the file mapping are released, so memory use
 * stays the same. Streaming weights through 4 KB pages costs a third of the
 * memory bandwidth in TLB misses. */
ac_status ac_weights_make_hot(ac_weights *w, ac_mat *const *mats, size_t n);
/* A weight-normed weight (torch's weight_norm over dim 0): PREFIX.weight_v
 * of shape SHAPE[NDIM] and PREFIX.weight_g of [shape[0], 1, ...], resolved
 * once to W[o] = g[o] * v[o] / ||v[o]|| as f32 [shape[0]][the rest], owned
 * by the table. A row of v whose norm is zero is refused. */
ac_status ac_weights_weight_norm(ac_weights *w, const char *prefix, int ndim, const int64_t *shape, float **out);
/* A float buffer of N values that lives as long as the table. */
float *ac_weights_scratch(ac_weights *w, size_t n);

/* Shorthand for shape arrays: AC_SHAPE(128, 129, 3). */
#define AC_SHAPE(...) (sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), ((const int64_t[]){__VA_ARGS__})

#endif
