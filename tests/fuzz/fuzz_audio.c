/* Fuzz audio decoding (libsndfile through our memory I/O), mixdown and
 * resampling to 16 kHz. */
#include <stdint.h>
#include <stdlib.h>

#include "audio/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SAMPLES (10u << 20) /* a tiny input may claim hours of audio */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ac_audio_reader *r = NULL;
    if (ac_audio_open_memory(data, size, "fuzz.audio", 16000, &r) != AC_OK) return 0;
    static float buf[4096];
    size_t total = 0, got = 0;
    while (total < MAX_SAMPLES) {
        if (ac_audio_read(r, buf, 4096, &got) != AC_OK || got == 0) break;
        if (got > 4096) abort(); /* read past the caller's buffer */
        total += got;
    }
    ac_audio_close(r);
    return 0;
}
