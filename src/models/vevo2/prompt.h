/* The AR model's prompt and the reading of its continuation (spec
 * vevo2.md §4.6, Amphion's chat template): the text is built byte for byte
 * as upstream builds it and tokenized whole, so the tokenizer's added-token
 * matching turns the tags into their ids. */
#ifndef AC_MODELS_VEVO2_PROMPT_H
#define AC_MODELS_VEVO2_PROMPT_H

#include <stdint.h>

#include "audioc.h"

/* The prompt: system instruction (the prosody one when USE_PROSODY), user
 * content STYLE_TEXT + " " + TEXT, the assistant turn, the prosody block
 * of PROSODY[n_prosody] when USE_PROSODY, then <|content_style_start|> and
 * STYLE[n_style]. *OUT is malloc'd. */
ac_status vevo2_prompt_text(int use_prosody, const char *style_text, const char *text, const int32_t *prosody,
                            int n_prosody, const int32_t *style, int n_style, char **out);

/* Every <|content_style_N|> of TEXT, in order (what upstream's regex
 * collects from the decoded continuation); anything else is skipped. An N
 * of K or more is an error naming it. *IDS is malloc'd (NULL when *N is 0). */
ac_status vevo2_parse_content_style(const char *text, int K, int32_t **ids, int *n);

#endif
