/* Fuzz the FFmpeg decoder (src/audio/ffmpeg.c) over any bytes, sniffed or
 * not: MP4/M4A, WebM and AAC demuxing and decoding from memory. */
#include <stdint.h>
#include <stdlib.h>

#include "audio/ffmpeg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SAMPLES (10u << 20) /* a tiny input may claim hours of audio */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ac_ffmpeg *f = NULL;
    ac_audio_info info;
    if (ac_ffmpeg_open_memory(data, size, "fuzz.m4a", &f, &info) != AC_OK) return 0;
    if (info.channels < 1 || info.channels > 8) {   /* the reader refuses the rest before reading */
        ac_ffmpeg_close(f);
        return 0;
    }
    static float buf[4096 * 8];
    int64_t total = 0, got = 0;
    while (total < (int64_t)MAX_SAMPLES) {
        if (ac_ffmpeg_readf(f, buf, 4096, &got) != AC_OK || got == 0) break;
        if (got > 4096) abort(); /* read past the caller's buffer */
        total += got;
    }
    ac_ffmpeg_close(f);
    return 0;
}
