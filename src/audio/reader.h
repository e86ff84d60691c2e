/* Streaming audio input: decode any format libsndfile reads (WAV, FLAC,
 * OGG/Vorbis, Opus, MP3, ...) and, through FFmpeg (ffmpeg.h), the
 * containers it cannot (MP4/M4A, WebM/Matroska, AAC), mix the channels to mono by averaging, and
 * resample with soxr (high quality, as librosa's default) to the rate a
 * model wants. Memory stays bounded whatever the length of the input. */
#ifndef AC_AUDIO_READER_H
#define AC_AUDIO_READER_H

#include <stddef.h>
#include <stdint.h>

#include "audioc.h"

typedef struct ac_audio_reader ac_audio_reader;

/* TARGET_RATE 0 keeps the source rate. */
ac_status ac_audio_open_file(const char *path, int target_rate, ac_audio_reader **out);
/* An encoded file image in memory (an upload). BUF must outlive the reader. */
ac_status ac_audio_open_memory(const void *buf, size_t size, const char *name,
                               int target_rate, ac_audio_reader **out);
/* Interleaved float PCM in memory. PCM must outlive the reader. */
ac_status ac_audio_open_pcm(const float *pcm, int64_t frames, int channels, int rate,
                            int target_rate, ac_audio_reader **out);

const ac_audio_info *ac_audio_reader_info(const ac_audio_reader *r);
int ac_audio_reader_rate(const ac_audio_reader *r);   /* the output rate */
/* Source frames consumed so far (for progress). */
int64_t ac_audio_reader_source_pos(const ac_audio_reader *r);

/* Reads up to MAX mono samples at the output rate; *GOT = 0 at the end. */
ac_status ac_audio_read(ac_audio_reader *r, float *out, size_t max, size_t *got);
void ac_audio_close(ac_audio_reader *r);

#endif
