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
    int words;              /* verbose JSON: the words (when the result has them) */
    int max_len;            /* srt/vtt: cues of at most this many characters, cut between words (0: a cue per segment) */
    int max_line;           /* srt/vtt: lines of at most this many characters, broken between words (0: one line) */
} transcript_meta;

/* openai-whisper's compression_ratio: the text's bytes over its zlib-compressed bytes. */
double transcript_compression_ratio(const char *text);

void transcript_write(FILE *f, transcript_format fmt, const ac_asr_result *r, const transcript_meta *m);

#endif
