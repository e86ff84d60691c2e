/* Fuzz the SentencePiece model reader and the decoder: whatever model the
 * reader accepts must have a consistent piece table, and decoding any ids
 * of it must give valid, stripped UTF-8. Seed: a real tokenizer.model. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/sentencepiece.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Strict UTF-8 (no overlongs, surrogates, > U+10FFFF, no NUL). */
static int valid_utf8(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (c == 0 || len == 0 || n - i < len) return 0;
        uint32_t cp = len == 1 ? c : c & (0x7Fu >> len);
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            cp = cp << 6 | (s[i + k] & 0x3Fu);
        }
        static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000)) return 0;
        i += len;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ac_sp *sp = NULL;
    if (ac_sp_parse(data, size, "fuzz.model", &sp) != AC_OK) {
        if (sp) abort(); /* nothing is handed out on failure */
        return 0;
    }
    int n = ac_sp_size(sp);
    const ac_sp_info *info = ac_sp_get_info(sp);
    if (n <= 0 || n > AC_SP_MAX_PIECES || !info || info->unk_id < 0 || info->unk_id >= n) abort();
    for (int id = 0; id < n; id++) {
        const char *p = ac_sp_piece(sp, id);
        int t = ac_sp_type(sp, id);
        if (!p || !*p || !valid_utf8((const uint8_t *)p, strlen(p))) abort();
        if (t < AC_SP_NORMAL || t > AC_SP_BYTE) abort();
        if (ac_sp_piece_to_id(sp, p) != id) abort();
    }
    if (ac_sp_piece(sp, n) || ac_sp_type(sp, -1) || ac_sp_piece_to_id(sp, "\xff") != -1) abort();

    /* ids from the input bytes: every piece type and runs of them */
    int ids[512];
    size_t m = size / 2 < 512 ? size / 2 : 512;
    for (size_t i = 0; i < m; i++) ids[i] = (int)(((unsigned)data[2 * i] << 8 | data[2 * i + 1]) % (unsigned)n);
    char *text = NULL;
    if (ac_sp_decode(sp, ids, m, &text) != AC_OK || !text) abort();
    size_t len = strlen(text);
    if (!valid_utf8((const uint8_t *)text, len)) abort();
    if (len && (text[0] == ' ' || text[len - 1] == ' ' || text[0] == '\n')) abort();
    free(text);
    int bad = n;
    if (ac_sp_decode(sp, &bad, 1, &text) == AC_OK || text) abort();
    ac_sp_free(sp);
    return 0;
}
