/* Allocation that reports failure as an ac_error, and aligned buffers
 * for SIMD kernels. */
#ifndef AC_BASE_MEM_H
#define AC_BASE_MEM_H

#include <stddef.h>

#define AC_ALIGN 64

/* malloc/calloc that set "out of memory" on failure and check n*size. */
void *ac_malloc(size_t size);
void *ac_calloc(size_t n, size_t size);
/* Aligned to AC_ALIGN, zeroed; free with ac_free_aligned. */
void *ac_alloc_aligned(size_t size);
void ac_free_aligned(void *p);
/* Zeroed pages straight from the kernel, on huge pages where it grants
 * them; free with ac_pages_free and the same SIZE. For large scratch whose
 * size changes between requests: memory from malloc would stay with the
 * process after free (glibc raises its mmap threshold each time a mapped
 * block is freed, and the heap then fragments), pages go back at once. */
void *ac_pages_alloc(size_t size);
void ac_pages_free(void *p, size_t size);

/* Room in the growable array *PP (of ELEM-byte elements, *CAP of them) for
 * N elements: the capacity doubles (from 16) until it holds them, the new
 * slots zeroed. 0, or -1 with "out of memory" set and *PP kept. PP is the
 * address of the array's pointer (any T **). */
int ac_grow(void *pp, size_t *cap, size_t n, size_t elem);

/* A growable array of floats. */
typedef struct ac_floatvec {
    float *data;
    size_t n, cap;
} ac_floatvec;

int ac_floatvec_push(ac_floatvec *v, const float *x, size_t n);
void ac_floatvec_free(ac_floatvec *v);

#endif
