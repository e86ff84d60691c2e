/* UTF-8 as the tokenizers see it: strict decoding (what a valid character
 * is) and the GPT-2 byte-level alphabet (a printable character per byte). */
#ifndef AC_TEXT_UTF8_H
#define AC_TEXT_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 character at S (N > 0 bytes available), 0 when
 * it is not one: no overlong forms, no surrogates, nothing above U+10FFFF.
 * Its code point goes to *CP when CP is not NULL. (libsentencepiece's
 * DecodeUTF8 rule as well.) */
size_t ac_utf8_char(const uint8_t *s, size_t n, uint32_t *cp);
/* Offset of the first byte of S that does not start a valid character,
 * N when all of S is valid. */
size_t ac_utf8_invalid_at(const uint8_t *s, size_t n);
/* Writes CP (a valid code point) at OUT and returns its length (1..4). */
size_t ac_utf8_put(uint32_t cp, char *out);

/* GPT-2's byte-to-unicode map: the printable Latin-1 bytes map to
 * themselves, the 68 others to U+0100.. in byte order. */
uint32_t ac_byte_to_char(uint8_t b);
/* The inverse: the byte of code point CP, -1 when CP is not in the map. */
int ac_char_to_byte(uint32_t cp);

#endif
