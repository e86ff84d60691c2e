#include "base/mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/error.h"

void *ac_malloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p) ac_error(AC_ERR_NOMEM, "out of memory (%zu bytes)", size);
    return p;
}

void *ac_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        ac_error(AC_ERR_NOMEM, "allocation of %zu x %zu bytes overflows", n, size);
        return NULL;
    }
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) ac_error(AC_ERR_NOMEM, "out of memory (%zu x %zu bytes)", n, size);
    return p;
}

#define HUGE_PAGE (2u << 20)

void *ac_alloc_aligned(size_t size)
{
    /* large buffers (activations, attention caches) go on huge pages where
     * the kernel grants them: streaming them through 4 KB pages costs TLB misses */
    size_t align = size >= 2 * HUGE_PAGE ? HUGE_PAGE : AC_ALIGN;
    size_t rounded = (size + align - 1) / align * align;
    if (rounded < size) {
        ac_error(AC_ERR_NOMEM, "allocation of %zu bytes overflows", size);
        return NULL;
    }
    void *p = aligned_alloc(align, rounded ? rounded : align);
    if (p && align == HUGE_PAGE) madvise(p, rounded, MADV_HUGEPAGE);
    if (!p) {
        ac_error(AC_ERR_NOMEM, "out of memory (%zu bytes)", size);
        return NULL;
    }
    memset(p, 0, rounded ? rounded : align);
    return p;
}

void ac_free_aligned(void *p) { free(p); }

/* The mapping behind a block of SIZE: the size rounded to pages, plus room
 * to align large ones to a huge page. */
static size_t pages_span(size_t size, size_t *align)
{
    *align = size >= 2 * HUGE_PAGE ? HUGE_PAGE : 4096;
    size_t rounded = (size + 4095) / 4096 * 4096;
    return rounded + (*align > 4096 ? *align : 0);
}

void *ac_pages_alloc(size_t size)
{
    size_t align, span = pages_span(size ? size : 1, &align);
    if (size > SIZE_MAX / 2 || span < size) {
        ac_error(AC_ERR_NOMEM, "allocation of %zu bytes overflows", size);
        return NULL;
    }
    unsigned char *base = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        ac_error(AC_ERR_NOMEM, "out of memory (%zu bytes)", size);
        return NULL;
    }
    /* keep the aligned part only: the head and tail go back */
    unsigned char *p = (unsigned char *)(((uintptr_t)base + align - 1) & ~(uintptr_t)(align - 1));
    size_t used = span - (align > 4096 ? align : 0);
    if (p > base) munmap(base, (size_t)(p - base));
    if (base + span > p + used) munmap(p + used, (size_t)(base + span - (p + used)));
    if (align == HUGE_PAGE) madvise(p, used, MADV_HUGEPAGE);
    return p;
}

void ac_pages_free(void *p, size_t size)
{
    if (!p) return;
    size_t align, span = pages_span(size ? size : 1, &align);
    munmap(p, span - (align > 4096 ? align : 0));
}

int ac_grow(void *pp, size_t *cap, size_t n, size_t elem)
{
    if (n <= *cap) return 0;
    size_t c = *cap ? *cap : 16;
    while (c < n) {
        if (c > SIZE_MAX / 2 / elem) return ac_error(AC_ERR_NOMEM, "array of %zu x %zu bytes overflows", n, elem), -1;
        c *= 2;
    }
    char *p;
    memcpy(&p, pp, sizeof p);
    char *q = realloc(p, c * elem);
    if (!q) return ac_error(AC_ERR_NOMEM, "out of memory (%zu x %zu bytes)", c, elem), -1;
    memset(q + *cap * elem, 0, (c - *cap) * elem);
    memcpy(pp, &q, sizeof q);
    *cap = c;
    return 0;
}

int ac_floatvec_push(ac_floatvec *v, const float *x, size_t n)
{
    if (n == 0) return AC_OK;
    if (ac_grow(&v->data, &v->cap, v->n + n, sizeof *v->data)) return AC_ERR_NOMEM;
    memcpy(v->data + v->n, x, n * sizeof *x);
    v->n += n;
    return AC_OK;
}

void ac_floatvec_free(ac_floatvec *v)
{
    free(v->data);
    v->data = NULL;
    v->n = v->cap = 0;
}
