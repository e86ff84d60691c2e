/* Byte-level BPE (GPT-2 style, as Qwen2 uses it) with Hugging Face
 * tokenizers' behaviour: added tokens are cut out of the text first
 * (leftmost, longest, special or not, the text around them untouched), the
 * rest is NFC-normalized, split by the Qwen2 pre-tokenizer, mapped byte by
 * byte to GPT-2's alphabet and merged in rank order. Decoding maps back to
 * bytes and replaces what is not UTF-8 with U+FFFD.
 *
 * The files are untrusted and fully validated. A loaded tokenizer is
 * read-only: any number of threads may encode and decode with it at once. */
#ifndef AC_TEXT_BPE_H
#define AC_TEXT_BPE_H

#include <stddef.h>

#include "audioc.h"

#define AC_BPE_MAX_ID 16777215 /* ids are at most 2^24 - 1 */

typedef struct ac_bpe ac_bpe;

/* The tokenizer in folder DIR: tokenizer.json when present, else vocab.json
 * + merges.txt with the added tokens of tokenizer_config.json
 * (added_tokens_decoder) and added_tokens.json (either may be absent).
 * Messages name the file and the problem. */
ac_status ac_bpe_load_dir(const char *dir, ac_bpe **out);
/* A tokenizer.json file (PATH), or its bytes in memory (NAME in messages;
 * BUF is not referenced after the call). Only a BPE model is accepted, with
 * no normalizer or NFC, and a pre-tokenizer that splits, if it does, by the
 * Qwen2 regex. */
ac_status ac_bpe_load_json(const char *path, ac_bpe **out);
ac_status ac_bpe_parse_json(const char *buf, size_t n, const char *name, ac_bpe **out);
void ac_bpe_free(ac_bpe *bpe);

/* One more than the largest id (vocabulary and added tokens). */
int ac_bpe_size(const ac_bpe *bpe);
/* The token string of ID (an added token's content, or a vocabulary entry
 * in the byte-level alphabet), NULL for an id no token has. */
const char *ac_bpe_token(const ac_bpe *bpe, int id);
/* The id of TOKEN, an added token first, then the vocabulary; -1 if none. */
int ac_bpe_token_to_id(const ac_bpe *bpe, const char *token);
/* Whether ID is an added token flagged special. */
int ac_bpe_is_special(const ac_bpe *bpe, int id);

/* The ids of TEXT (LEN bytes of UTF-8) in *IDS (malloc'd, free() it; NULL
 * when *N is 0). Text that is not valid UTF-8 is an AC_ERR_ARG naming the
 * byte. */
ac_status ac_bpe_encode(const ac_bpe *bpe, const char *text, size_t len, int **ids, size_t *n);
/* The text of IDS in *TEXT (malloc'd, NUL-terminated, valid UTF-8; free()
 * it) and its length in *LEN (may be NULL; the text may hold U+0000).
 * Special tokens are kept when KEEP_SPECIAL, else dropped. An id no token
 * has is an AC_ERR_ARG. */
ac_status ac_bpe_decode(const ac_bpe *bpe, const int *ids, size_t n, int keep_special, char **text, size_t *len);

#endif
