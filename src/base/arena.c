#include "base/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"

struct ac_arena_block {
    ac_arena_block *next;
    size_t size, used;
    unsigned char *data;
};

void ac_arena_init(ac_arena *a, size_t block_size)
{
    a->head = NULL;
    a->block_size = block_size ? block_size : (1u << 20);
}

/* Blocks of this size and more are pages of their own (ac_pages_alloc):
 * request after request of another length would otherwise leave the heap
 * fragmented and the process ever larger. */
#define PAGES_FROM (1u << 20)

static void *block_data(size_t size) { return size >= PAGES_FROM ? ac_pages_alloc(size) : ac_alloc_aligned(size); }

static void block_data_free(void *p, size_t size)
{
    if (size >= PAGES_FROM) ac_pages_free(p, size);
    else ac_free_aligned(p);
}

static ac_arena_block *block_new(size_t size)
{
    ac_arena_block *b = ac_malloc(sizeof *b);
    if (!b) return NULL;
    b->data = block_data(size);
    if (!b->data) {
        free(b);
        return NULL;
    }
    b->size = size;
    b->used = 0;
    b->next = NULL;
    return b;
}

void *ac_arena_alloc(ac_arena *a, size_t size)
{
    size_t need = (size + AC_ALIGN - 1) / AC_ALIGN * AC_ALIGN;
    if (need < size) {
        ac_error(AC_ERR_NOMEM, "arena allocation of %zu bytes overflows", size);
        return NULL;
    }
    ac_arena_block *b = a->head;
    if (!b || b->size - b->used < need) {
        size_t bs = need > a->block_size ? need : a->block_size;
        ac_arena_block *nb = block_new(bs);
        if (!nb) return NULL;
        nb->next = b;
        a->head = b = nb;
    }
    void *p = b->data + b->used;
    b->used += need;
    memset(p, 0, need);
    return p;
}

float *ac_arena_floats(ac_arena *a, size_t n)
{
    if (n > SIZE_MAX / sizeof(float)) {
        ac_error(AC_ERR_NOMEM, "arena allocation of %zu floats overflows", n);
        return NULL;
    }
    return ac_arena_alloc(a, n * sizeof(float));
}

static void free_chain(ac_arena_block *b)
{
    while (b) {
        ac_arena_block *next = b->next;
        block_data_free(b->data, b->size);
        free(b);
        b = next;
    }
}

void ac_arena_reset(ac_arena *a)
{
    /* Keep one block as large as all this request needed, so a request of
     * the same size allocates nothing and the arena grows only with the
     * largest request, never with how many came before. */
    if (!a->head) return;
    if (!a->head->next) {
        a->head->used = 0;
        return;
    }
    size_t total = ac_arena_capacity(a);
    free_chain(a->head);
    a->head = block_new(total);   /* NULL when out of memory: the next request allocates anew */
}

void ac_arena_free(ac_arena *a)
{
    free_chain(a->head);
    a->head = NULL;
}

size_t ac_arena_capacity(const ac_arena *a)
{
    size_t n = 0;
    for (const ac_arena_block *b = a->head; b; b = b->next) n += b->size;
    return n;
}
