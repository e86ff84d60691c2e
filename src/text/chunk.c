/* Splitting text for speech at its natural breaks. */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "base/error.h"
#include "base/mem.h"
#include "text/chunk.h"
#include "text/utf8.h"

enum { BREAK_WORD = 1, BREAK_CLAUSE, BREAK_SENTENCE };

typedef struct {
    size_t begin, end;   /* bytes */
    int brk;             /* how strong the break after it is */
} unit;

static int is_cjk(uint32_t c)
{
    return (c >= 0x2E80 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0xF900 && c <= 0xFAFF) ||
           (c >= 0xFF00 && c <= 0xFFEF) || (c >= 0x20000 && c <= 0x3FFFF);
}

static int break_after(uint32_t c)
{
    switch (c) {
    case '.': case '!': case '?': case 0x2026: case 0x3002: case 0xFF01: case 0xFF1F: case 0xFF0E: case 0x061F:
    case 0x0964:
        return BREAK_SENTENCE;
    case ',': case ';': case ':': case 0x2014: case 0x3001: case 0xFF0C: case 0xFF1B: case 0xFF1A: case 0x060C:
        return BREAK_CLAUSE;
    default:
        return BREAK_WORD;
    }
}

/* Closing quotes and brackets belong to the word before them. */
static int is_closing(uint32_t c)
{
    utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)c);
    return k == UTF8PROC_CATEGORY_PE || k == UTF8PROC_CATEGORY_PF || c == '"' || c == '\'';
}

static int is_space(uint32_t c)
{
    utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)c);
    return c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || k == UTF8PROC_CATEGORY_ZS ||
           k == UTF8PROC_CATEGORY_ZL || k == UTF8PROC_CATEGORY_ZP;
}

static int is_spoken(uint32_t c)
{
    utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)c);
    return k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO ? 1 : k >= UTF8PROC_CATEGORY_ND &&
           k <= UTF8PROC_CATEGORY_NO;
}

/* The units of TEXT[len] into *OUT (malloc'd); *SPOKEN: whether any letter or digit occurs. */
static ac_status units_of(const char *text, size_t len, unit **out, int *n_out, int *spoken)
{
    unit *u = ac_malloc((len + 1) * sizeof *u);
    if (!u) return AC_ERR_NOMEM;
    int n = 0, in_word = 0;
    *spoken = 0;
    for (size_t i = 0; i < len;) {
        uint32_t c;
        size_t k = ac_utf8_char((const uint8_t *)text + i, len - i, &c);
        if (!k) {
            free(u);
            return ac_error(AC_ERR_ARG, "the text is not valid UTF-8 (byte %zu)", i);
        }
        *spoken |= is_spoken(c);
        int brk = break_after(c);
        if (is_space(c)) {
            in_word = 0;
        } else if (n && (brk != BREAK_WORD || (in_word && is_closing(c)))) {
            /* punctuation and closing marks end the unit before them */
            u[n - 1].end = i + k;
            if (!is_closing(c)) u[n - 1].brk = brk;
            in_word = 1;
        } else if (is_cjk(c)) {
            u[n++] = (unit){i, i + k, BREAK_WORD};
            in_word = 0;
        } else if (in_word) {
            u[n - 1].end = i + k;
            u[n - 1].brk = BREAK_WORD;
        } else {
            u[n++] = (unit){i, i + k, BREAK_WORD};
            in_word = 1;
        }
        i += k;
    }
    *out = u;
    *n_out = n;
    return AC_OK;
}

ac_status ac_text_chunk(const char *text, int max_units, ac_text_chunks *out)
{
    memset(out, 0, sizeof *out);
    if (max_units < 1) return ac_error(AC_ERR_ARG, "chunks of %d units: must be at least 1", max_units);
    unit *u = NULL;
    int n, spoken;
    AC_TRY(units_of(text, strlen(text), &u, &n, &spoken));
    if (!spoken) {
        free(u);
        return ac_error(AC_ERR_ARG, "the text has no letter or digit to say (only spaces, punctuation or symbols such as emoji)");
    }
    out->text = ac_calloc((size_t)n, sizeof *out->text);
    if (!out->text) {
        free(u);
        return AC_ERR_NOMEM;
    }
    for (int i = 0; i < n;) {
        int j = n - 1;   /* the last unit of this chunk */
        if (n - i > max_units) {
            /* the strongest break in the window, the latest of that strength,
             * but not so early that the chunk is a sliver of the window */
            int best = -1, best_brk = 0, lo = i + max_units / 3;
            for (int k = i + max_units - 1; k >= i; k--)
                if (u[k].brk > best_brk && (k >= lo || best < 0)) best = k, best_brk = u[k].brk;
            j = best;
        }
        size_t len = u[j].end - u[i].begin;
        char *s = ac_malloc(len + 1);
        if (!s) {
            free(u);
            ac_text_chunks_free(out);
            return AC_ERR_NOMEM;
        }
        memcpy(s, text + u[i].begin, len);
        s[len] = 0;
        out->text[out->n++] = s;
        i = j + 1;
    }
    free(u);
    return AC_OK;
}

void ac_text_chunks_free(ac_text_chunks *c)
{
    for (int i = 0; i < c->n; i++) free(c->text[i]);
    free(c->text);
    memset(c, 0, sizeof *c);
}
