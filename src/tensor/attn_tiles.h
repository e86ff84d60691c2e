/* The walk the attention tiles share (attn_avx512.c and attn_bf16.c, each
 * built with its own flags): rows in blocks of AC_ATTN_TILE_ROWS, then the
 * 1 to 5 left, each count its own copy of a tile so that the sums stay in
 * registers. BLOCK(MR) runs MR rows from row r. */
#ifndef AC_TENSOR_ATTN_TILES_H
#define AC_TENSOR_ATTN_TILES_H

#define AC_ATTN_TILE_ROWS 6
_Static_assert(AC_ATTN_TILE_ROWS == 6, "the walk's full blocks and the cases below it");

#define AC_ATTN_ROW_BLOCKS(rows, BLOCK)                                          \
    do {                                                                         \
        size_t r = 0;                                                            \
        for (; r + AC_ATTN_TILE_ROWS <= (rows); r += AC_ATTN_TILE_ROWS) BLOCK(6) \
        switch ((rows) - r) {                                                    \
        case 5: BLOCK(5) break;                                                  \
        case 4: BLOCK(4) break;                                                  \
        case 3: BLOCK(3) break;                                                  \
        case 2: BLOCK(2) break;                                                  \
        case 1: BLOCK(1) break;                                                  \
        default: break;                                                          \
        }                                                                        \
    } while (0)

/* The value tiles' outputs, 64 columns (NV vectors of 16, the last one's
 * lanes LAST) at a time from column c, each over all rows: BLOCK(MR) as
 * above, with c, nv and last in scope. */
#define AC_ATTN_VALUE_WALK(dk, rows, BLOCK)                                                      \
    for (size_t c = 0; c < (dk); c += 64) {                                                      \
        size_t cols = (dk) - c < 64 ? (dk) - c : 64, nv = (cols + 15) / 16, tail = cols - 16 * (nv - 1); \
        __mmask16 last = tail == 16 ? 0xffff : (__mmask16)((1u << tail) - 1);                    \
        AC_ATTN_ROW_BLOCKS(rows, BLOCK);                                                         \
    }

#endif
