/* How the file readers (bpe_load.c) build an ac_bpe: the vocabulary
 * first, then the merges in rank order, then the added tokens. Every call
 * checks what it is given; messages start with NAME, the file. */
#ifndef AC_TEXT_BPE_BUILD_H
#define AC_TEXT_BPE_BUILD_H

#include <stddef.h>

#include "text/bpe.h"

ac_bpe *ac_bpe_new(void);
/* tokenizer.json's model.ignore_merges: a word found whole in the
 * vocabulary is that token, whatever the merges would make of it. */
void ac_bpe_set_ignore_merges(ac_bpe *b, int on);
/* TOKEN (LEN bytes, a string of the byte-level alphabet) has id ID. */
ac_status ac_bpe_add_vocab(ac_bpe *b, const char *token, size_t len, long long id, const char *name);
/* Done with the vocabulary: indexes it. */
ac_status ac_bpe_end_vocab(ac_bpe *b, const char *name);
/* The next merge, LEFT + RIGHT; WHERE says where it is in messages. */
ac_status ac_bpe_add_merge(ac_bpe *b, const char *left, size_t nl, const char *right, size_t nr, const char *name,
                           const char *where);
ac_status ac_bpe_add_token(ac_bpe *b, const char *content, size_t len, long long id, int special, int normalized,
                           const char *name);
/* Done: the tables for encoding and decoding. */
ac_status ac_bpe_end(ac_bpe *b, const char *name);

#endif
