/* Containers libsndfile cannot read, through FFmpeg's libavformat and
 * libavcodec: MP4/M4A/MOV (AAC, ALAC, ...), Matroska/WebM (Opus, Vorbis),
 * and raw AAC (ADTS, ADIF), as phones and browsers record them. The bytes
 * come from memory (an upload) or a file read piece by piece, always
 * through our own I/O context, so FFmpeg opens nothing by itself; only
 * these demuxers are allowed. The reader mixes and resamples what this
 * decodes, as for the other decoders. */
#ifndef AC_AUDIO_FFMPEG_H
#define AC_AUDIO_FFMPEG_H

#include <stddef.h>
#include <stdint.h>

#include "audioc.h"

typedef struct ac_ffmpeg ac_ffmpeg;

/* The container the first N bytes begin ("MP4/M4A", "Matroska/WebM",
 * "AAC"), or NULL when none of the above. */
const char *ac_ffmpeg_sniff(const unsigned char *head, size_t n);

/* NAME names the input in messages. BUF must outlive the decoder. The
 * info's frames are an estimate from the container (-1 when unknown). */
ac_status ac_ffmpeg_open_memory(const void *buf, size_t size, const char *name, ac_ffmpeg **out,
                                ac_audio_info *info);
ac_status ac_ffmpeg_open_file(const char *path, ac_ffmpeg **out, ac_audio_info *info);

/* Decodes up to MAX frames interleaved into DST: *GOT = 0 at the end. */
ac_status ac_ffmpeg_readf(ac_ffmpeg *f, float *dst, int64_t max, int64_t *got);
void ac_ffmpeg_close(ac_ffmpeg *f);

#endif
