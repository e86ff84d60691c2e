/* A bump allocator for per-request scratch: many aligned allocations,
 * freed together by ac_arena_reset. Blocks are kept for reuse. */
#ifndef AC_BASE_ARENA_H
#define AC_BASE_ARENA_H

#include <stddef.h>

typedef struct ac_arena_block ac_arena_block;

typedef struct ac_arena {
    ac_arena_block *head;  /* block being filled; older ones follow */
    size_t block_size;     /* default size of a new block */
} ac_arena;

void ac_arena_init(ac_arena *a, size_t block_size);
/* Zeroed memory aligned to AC_ALIGN; NULL (with ac_error) when out of memory. */
void *ac_arena_alloc(ac_arena *a, size_t size);
float *ac_arena_floats(ac_arena *a, size_t n);
/* Forgets every allocation; keeps one block as large as all the blocks
 * were, for reuse. */
void ac_arena_reset(ac_arena *a);
void ac_arena_free(ac_arena *a);
/* Total bytes held in blocks. */
size_t ac_arena_capacity(const ac_arena *a);

#endif
