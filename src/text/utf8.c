#include "text/utf8.h"

size_t ac_utf8_char(const uint8_t *s, size_t n, uint32_t *cp)
{
    uint8_t c = s[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) len = 1, v = c, min = 0;
    else if ((c & 0xE0) == 0xC0) len = 2, v = c & 0x1Fu, min = 0x80;
    else if ((c & 0xF0) == 0xE0) len = 3, v = c & 0x0Fu, min = 0x800;
    else if ((c & 0xF8) == 0xF0) len = 4, v = c & 0x07u, min = 0x10000;
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = v << 6 | (s[i] & 0x3Fu);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v < 0xE000)) return 0;
    if (cp) *cp = v;
    return len;
}

size_t ac_utf8_invalid_at(const uint8_t *s, size_t n)
{
    size_t i = 0, k;
    while (i < n && (k = ac_utf8_char(s + i, n - i, NULL))) i += k;
    return i;
}

size_t ac_utf8_put(uint32_t cp, char *out)
{
    uint8_t *o = (uint8_t *)out;
    if (cp < 0x80) {
        o[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (uint8_t)(0xC0 | cp >> 6);
        o[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | cp >> 12);
        o[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (uint8_t)(0xF0 | cp >> 18);
    o[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* '!'..'~', U+00A1..U+00AC and U+00AE..U+00FF keep their value. */
static int printable(unsigned b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE; }

uint32_t ac_byte_to_char(uint8_t b)
{
    if (printable(b)) return b;
    unsigned k = 0; /* the rank of B among the bytes that are not printable */
    for (unsigned c = 0; c < b; c++) k += !printable(c);
    return 0x100 + k;
}

int ac_char_to_byte(uint32_t cp)
{
    if (cp < 0x100) return printable(cp) ? (int)cp : -1;
    if (cp >= 0x100 + 68) return -1;
    unsigned k = cp - 0x100;
    for (unsigned c = 0; c < 256; c++)
        if (!printable(c) && k-- == 0) return (int)c;
    return -1;
}
