/* SubRip and WebVTT subtitles from a transcription: one cue per segment
 * with text, timed by the segment's start and end. */
#ifndef AUDIOC_TOOLS_SUBTITLES_H
#define AUDIOC_TOOLS_SUBTITLES_H

#include <stdio.h>

#include "audioc.h"

void subtitles_write(FILE *f, const ac_asr_result *r, int vtt);

#endif
