/* Writing JSON string literals: escapes, and invalid UTF-8 (a byte-level
 * token can end mid-character) replaced by U+FFFD so the output stays valid. */
#ifndef AUDIOC_TOOLS_JSON_OUT_H
#define AUDIOC_TOOLS_JSON_OUT_H

#include <stdio.h>

void json_string(FILE *f, const char *s);
/* The same for LEN bytes that may hold NUL (written as \u0000). */
void json_string_n(FILE *f, const char *s, size_t len);

#endif
