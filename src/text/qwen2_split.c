#include "text/qwen2_split.h"

#include <stdint.h>
#include <utf8proc.h>

#include "text/utf8.h"

enum { LETTER, NUMBER, SPACE, OTHER };

/* Unicode White_Space, which is what Oniguruma's \s matches. */
static int white_space(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
           c == 0x3000;
}

static int kind(uint32_t c)
{
    if (white_space(c)) return SPACE;
    utf8proc_category_t cat = utf8proc_category((utf8proc_int32_t)c);
    if (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO) return LETTER;
    if (cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO) return NUMBER;
    return OTHER;
}

typedef struct {
    const uint8_t *s;
    size_t n;
} text;

/* The character at byte I < N: its kind, code point and length. */
static int at(const text *t, size_t i, uint32_t *cp, size_t *len)
{
    uint32_t c = 0;
    size_t k = ac_utf8_char(t->s + i, t->n - i, &c);
    if (k == 0) k = 1; /* not reached with valid input; keeps the scan moving */
    if (cp) *cp = c;
    if (len) *len = k;
    return kind(c);
}

/* The end of the run of KIND characters from byte I. */
static size_t run_of(const text *t, size_t i, int k)
{
    size_t len;
    while (i < t->n && at(t, i, NULL, &len) == k) i += len;
    return i;
}

static int fold_is(uint32_t c, char lower)
{
    if (c == 0x17F) return lower == 's';
    return c == (uint32_t)lower || c == (uint32_t)lower - 32;
}

/* Bytes of a contraction suffix (s t re ve m ll d, any case) at byte I. */
static size_t contraction(const text *t, size_t i)
{
    static const char *const suffix[] = {"s", "t", "re", "ve", "m", "ll", "d"};
    for (size_t k = 0; k < sizeof suffix / sizeof *suffix; k++) {
        size_t j = i;
        const char *p = suffix[k];
        for (; *p && j < t->n; p++) {
            uint32_t c;
            size_t len;
            at(t, j, &c, &len);
            if (!fold_is(c, *p)) break;
            j += len;
        }
        if (!*p) return j - i;
    }
    return 0;
}

static int newline(uint32_t c) { return c == '\r' || c == '\n'; }

size_t ac_qwen2_piece(const char *str, size_t n)
{
    text t = {(const uint8_t *)str, n};
    uint32_t c0, c1 = 0;
    size_t l0;
    int k0 = at(&t, 0, &c0, &l0), k1 = l0 < n ? at(&t, l0, &c1, NULL) : -1;

    /* (?i:'s|'t|'re|'ve|'m|'ll|'d) */
    if (c0 == '\'' && l0 < n) {
        size_t k = contraction(&t, l0);
        if (k) return l0 + k;
    }
    /* [^\r\n\p{L}\p{N}]?\p{L}+ */
    if (k0 == LETTER) return run_of(&t, 0, LETTER);
    if (k1 == LETTER && k0 != NUMBER && !newline(c0)) return run_of(&t, l0, LETTER);
    /* \p{N} */
    if (k0 == NUMBER) return l0;
    /* ' ?[^\s\p{L}\p{N}]+[\r\n]*' */
    size_t j = c0 == ' ' && k1 == OTHER ? l0 : 0;
    if (j || k0 == OTHER) {
        j = run_of(&t, j, OTHER);
        while (j < n && newline(t.s[j])) j++;
        return j;
    }
    /* c0 is white space: \s*[\r\n]+ ends at the run's last line break */
    size_t end = 0, last_break = 0, last_start = 0, chars = 0;
    while (end < n) {
        uint32_t c;
        size_t len;
        if (at(&t, end, &c, &len) != SPACE) break;
        last_start = end;
        end += len;
        chars++;
        if (newline(c)) last_break = end;
    }
    if (last_break) return last_break;
    /* \s+(?!\S): the run, or all of it but the last character when a
     * non-space follows; \s+ when that leaves nothing */
    if (end == n || chars == 1) return end;
    return last_start;
}
