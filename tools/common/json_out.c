#include "json_out.h"

#include <string.h>

/* Length of the valid UTF-8 sequence at S (AVAIL bytes), or 0. */
static int utf8_len(const unsigned char *s, size_t avail)
{
    int n;
    unsigned min;
    unsigned c = s[0];
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) n = 2, c &= 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef) n = 3, c &= 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, c &= 0x07, min = 0x10000;
    else return 0;
    if ((size_t)n > avail) return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        c = c << 6 | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
    return n;
}

void json_string(FILE *f, const char *str) { json_string_n(f, str, strlen(str)); }

void json_string_n(FILE *f, const char *str, size_t len)
{
    const unsigned char *p = (const unsigned char *)str, *end = p + len;
    fputc('"', f);
    while (p < end) {
        int n = utf8_len(p, (size_t)(end - p));
        if (n == 0) {
            fputs("\\ufffd", f);
            p++;
        } else if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p++);
        } else if (*p < 0x20) {
            fprintf(f, "\\u%04x", *p++);
        } else {
            fwrite(p, 1, (size_t)n, f);
            p += n;
        }
    }
    fputc('"', f);
}
