/* A transcription as the tools print it: plain text, JSON, the segments as
 * JSON (OpenAI's verbose_json shape), SubRip or WebVTT. The CLI and the
 * server both write through here, so their answers agree byte for byte. */
#ifndef AUDIOC_TOOLS_TRANSCRIPT_OUT_H
#define AUDIOC_TOOLS_TRANSCRIPT_OUT_H

#include <stdio.h>

#include "audioc.h"

typedef enum {
    TRANSCRIPT_TEXT,          /* the text and a newline */
    TRANSCRIPT_JSON,          /* {"text": ...} */
    TRANSCRIPT_VERBOSE_JSON,  /* task, language, duration, text and the segments */
    TRANSCRIPT_SRT,
    TRANSCRIPT_VTT,
} transcript_format;

typedef struct {
    const char *file;       /* verbose JSON: a leading "file" member when not NULL */
    const char *language;
    float temperature;      /* verbose JSON, per segment */
    int tokens;             /* verbose JSON: the token ids of each segment */
} transcript_meta;

void transcript_write(FILE *f, transcript_format fmt, const ac_asr_result *r, const transcript_meta *m);

#endif
