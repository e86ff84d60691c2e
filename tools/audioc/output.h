/* Printing VAD results as text, JSON lines or CSV on stdout. */
#ifndef AUDIOC_TOOLS_OUTPUT_H
#define AUDIOC_TOOLS_OUTPUT_H

#include "audioc.h"

typedef enum { OUT_TEXT, OUT_JSON, OUT_CSV } out_format;

int out_format_parse(const char *s, out_format *out);
void out_begin(out_format f, int probs);
void out_vad_result(out_format f, const char *file, const char *family, const ac_vad_result *r,
                    int probs, int several_files);

#endif
