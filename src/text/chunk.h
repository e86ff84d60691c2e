/* Long text cut into pieces a text-to-speech model speaks one at a time:
 * after a sentence where one ends within reach, else after a clause, else
 * between words. A unit is a word (a run of characters between spaces) or
 * one CJK, kana or hangul character, which scripts write without spaces. */
#ifndef AC_TEXT_CHUNK_H
#define AC_TEXT_CHUNK_H

#include "audioc.h"

typedef struct ac_text_chunks {
    char **text;    /* NUL-terminated, trimmed of the spaces around them */
    int n;
} ac_text_chunks;

/* TEXT (UTF-8) in pieces of at most MAX_UNITS units. Text with no letter
 * or digit is an error (there is nothing to say), as is invalid UTF-8. */
ac_status ac_text_chunk(const char *text, int max_units, ac_text_chunks *out);
void ac_text_chunks_free(ac_text_chunks *c);

#endif
