/* Streaming audio output through libsndfile. The container follows the
 * file name: .wav (32-bit float, or 16-bit PCM), .flac, .ogg (Vorbis),
 * .opus, .mp3, and .pcm (headerless 16-bit little-endian). To a file, or to
 * a file image in memory. */
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
/* The same to memory: FORMAT is an extension ("wav", "mp3", ...); the
 * bytes are handed over by ac_audio_writer_finish. */
ac_status ac_audio_writer_open_memory(const char *format, int rate, int channels, int pcm16,
                                      ac_audio_writer **out);
/* FRAMES interleaved frames. */
ac_status ac_audio_write(ac_audio_writer *w, const float *pcm, size_t frames);
/* Finishes the file (header sizes, encoder flush); reports a failed write. */
ac_status ac_audio_writer_close(ac_audio_writer *w);
/* Closes a memory writer and hands over its bytes in *DATA (free()), *SIZE of them. */
ac_status ac_audio_writer_finish(ac_audio_writer *w, void **data, size_t *size);

#endif
