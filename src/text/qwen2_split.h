/* The Qwen2 pre-tokenizer, written out by hand: the pieces the regex
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|
 *   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * cuts a text into, as Oniguruma (Hugging Face tokenizers) matches it:
 * alternatives in order, \s the Unicode White_Space property, \p{L} and
 * \p{N} the general categories (utf8proc's tables), and the case-insensitive
 * contractions folding U+017F (long s) to 's' as Unicode case folding does.
 * The alternatives cover every character, so the pieces tile the text. */
#ifndef AC_TEXT_QWEN2_SPLIT_H
#define AC_TEXT_QWEN2_SPLIT_H

#include <stddef.h>

/* Length in bytes of the piece at the start of S, which holds N > 0 bytes
 * of valid UTF-8. */
size_t ac_qwen2_piece(const char *s, size_t n);

#endif
