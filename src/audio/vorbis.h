/* Ogg Vorbis input through libvorbisfile. libsndfile (1.2.0) leaks the
 * Vorbis setup it parsed (about 6 KB) whenever an Ogg Vorbis open fails
 * after the headers, as on every truncated upload; libvorbisfile frees what
 * it allocated on every path, so the reader sends Ogg Vorbis here. */
#ifndef AC_AUDIO_VORBIS_H
#define AC_AUDIO_VORBIS_H

#include <stddef.h>
#include <stdint.h>

#include "audioc.h"

typedef struct ac_vorbis ac_vorbis;

/* 1 when libsndfile would take the input for Ogg Vorbis: it begins "OggS"
 * and the first Ogg page in it holds a Vorbis identification header. */
int ac_vorbis_sniff(const unsigned char *buf, size_t n);
int ac_vorbis_sniff_file(const char *path);

/* NAME names the input in messages. The info's frames are -1 when unknown. */
ac_status ac_vorbis_open_file(const char *path, ac_vorbis **out, ac_audio_info *info);
ac_status ac_vorbis_open_memory(const void *buf, size_t size, const char *name, ac_vorbis **out,
                                ac_audio_info *info);

/* Decodes up to MAX frames interleaved into DST: *GOT = 0 at the end. */
ac_status ac_vorbis_readf(ac_vorbis *v, float *dst, int64_t max, int64_t *got);
void ac_vorbis_close(ac_vorbis *v);

#endif
