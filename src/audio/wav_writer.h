/* Streaming WAV output (32-bit float or 16-bit PCM) through libsndfile. */
#ifndef AC_AUDIO_WAV_WRITER_H
#define AC_AUDIO_WAV_WRITER_H

#include <stddef.h>

#include "audioc.h"

typedef struct ac_wav_writer ac_wav_writer;

ac_status ac_wav_open(const char *path, int rate, int channels, int pcm16, ac_wav_writer **out);
/* FRAMES interleaved frames. */
ac_status ac_wav_write(ac_wav_writer *w, const float *pcm, size_t frames);
/* Finishes the header; reports a failed final write. */
ac_status ac_wav_close(ac_wav_writer *w);

#endif
