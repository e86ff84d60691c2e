/* Fuzz the byte-level BPE reader (tokenizer.json) and the encoder and
 * decoder. The input is a tokenizer.json, a NUL, then a text. Whatever the
 * reader accepts must encode any valid UTF-8 text to ids it has, refuse
 * invalid text, and decode any of its ids to valid UTF-8. Seeds: tiny
 * tokenizers (the byte alphabet, merges, added tokens) with texts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/bpe.h"
#include "text/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t json_n = nul ? (size_t)(nul - data) : size;
    const char *text = nul ? (const char *)nul + 1 : "";
    size_t text_n = nul ? size - json_n - 1 : 0;
    ac_bpe *b = NULL;
    if (ac_bpe_parse_json((const char *)data, json_n, "fuzz.json", &b) != AC_OK) {
        if (b) abort(); /* nothing is handed out on failure */
        return 0;
    }
    int n = ac_bpe_size(b);
    if (n <= 0 || n > AC_BPE_MAX_ID + 1) abort();
    for (int id = 0; id < n && id < 4096; id++) {
        const char *t = ac_bpe_token(b, id);
        if (t && ac_bpe_token_to_id(b, t) < 0) abort();
    }
    if (ac_bpe_token(b, n) || ac_bpe_token(b, -1) || ac_bpe_is_special(b, n)) abort();

    int *ids = NULL;
    size_t m = 0;
    int valid = ac_utf8_invalid_at((const uint8_t *)text, text_n) == text_n;
    ac_status st = ac_bpe_encode(b, text, text_n, &ids, &m);
    if (valid != (st == AC_OK) || (st != AC_OK && ids) || (m && !ids)) abort();
    for (size_t i = 0; i < m; i++)
        if (ids[i] < 0 || ids[i] >= n || !ac_bpe_token(b, ids[i])) abort();
    for (int keep = 0; keep < 2; keep++) {
        char *out = NULL;
        size_t len;
        if (ac_bpe_decode(b, ids, m, keep, &out, &len) != AC_OK || !out) abort();
        if (ac_utf8_invalid_at((const uint8_t *)out, len) != len || out[len]) abort();
        free(out);
    }
    free(ids);
    ac_bpe_free(b);
    return 0;
}
