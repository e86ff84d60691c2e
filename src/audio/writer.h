/* Streaming audio output through libsndfile. The container follows the
 * file name: .wav (32-bit float, or 16-bit PCM), .flac, .ogg (Vorbis),
 * .opus, .mp3. */
#ifndef AC_AUDIO_WRITER_H
#define AC_AUDIO_WRITER_H

#include <stddef.h>

#include "audioc.h"

typedef struct ac_audio_writer ac_audio_writer;

/* AC_OK when PATH's format can hold RATE and CHANNELS (a message naming
 * what it can hold when not); creates nothing. */
ac_status ac_audio_writer_check(const char *path, int rate, int channels);
/* Creates PATH (after the same check). */
ac_status ac_audio_writer_open(const char *path, int rate, int channels, int pcm16,
                               ac_audio_writer **out);
/* FRAMES interleaved frames. */
ac_status ac_audio_write(ac_audio_writer *w, const float *pcm, size_t frames);
/* Finishes the file (header sizes, encoder flush); reports a failed write. */
ac_status ac_audio_writer_close(ac_audio_writer *w);

#endif
