#include "audio/writer.h"

#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/mem.h"

struct ac_audio_writer {
    SNDFILE *sf;
    char path[256];
};

static int format_for(const char *path, int pcm16)
{
    const char *dot = strrchr(path, '.');
    const char *ext = dot ? dot + 1 : "";
    if (strcasecmp(ext, "flac") == 0) return SF_FORMAT_FLAC | SF_FORMAT_PCM_16;
    if (strcasecmp(ext, "ogg") == 0) return SF_FORMAT_OGG | SF_FORMAT_VORBIS;
    if (strcasecmp(ext, "opus") == 0) return SF_FORMAT_OGG | SF_FORMAT_OPUS;
    if (strcasecmp(ext, "mp3") == 0) return SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III;
    if (strcasecmp(ext, "wav") == 0) return SF_FORMAT_WAV | (pcm16 ? SF_FORMAT_PCM_16 : SF_FORMAT_FLOAT);
    return 0;
}

ac_status ac_audio_writer_open(const char *path, int rate, int channels, int pcm16,
                               ac_audio_writer **out)
{
    *out = NULL;
    if (rate <= 0 || channels <= 0) return ac_error(AC_ERR_ARG, "%s: bad rate or channel count", path);
    int format = format_for(path, pcm16);
    if (!format)
        return ac_error(AC_ERR_ARG, "%s: unknown output format (use .wav, .flac, .ogg, .opus or .mp3)", path);
    SF_INFO si = {.samplerate = rate, .channels = channels, .format = format};
    if (!sf_format_check(&si))
        return ac_error(AC_ERR_UNSUPPORTED, "%s: this format cannot hold %d Hz, %d channels", path, rate,
                        channels);
    ac_audio_writer *w = ac_calloc(1, sizeof *w);
    if (!w) return AC_ERR_NOMEM;
    snprintf(w->path, sizeof w->path, "%s", path);
    w->sf = sf_open(path, SFM_WRITE, &si);
    if (!w->sf) {
        free(w);
        return ac_error(AC_ERR_IO, "%s: cannot write: %s", path, sf_strerror(NULL));
    }
    /* clip instead of wrapping when float input exceeds [-1, 1] */
    sf_command(w->sf, SFC_SET_CLIPPING, NULL, SF_TRUE);
    *out = w;
    return AC_OK;
}

ac_status ac_audio_write(ac_audio_writer *w, const float *pcm, size_t frames)
{
    if (sf_writef_float(w->sf, pcm, (sf_count_t)frames) != (sf_count_t)frames)
        return ac_error(AC_ERR_IO, "%s: write failed: %s", w->path, sf_strerror(w->sf));
    return AC_OK;
}

ac_status ac_audio_writer_close(ac_audio_writer *w)
{
    if (!w) return AC_OK;
    ac_status s = AC_OK;
    if (sf_close(w->sf) != 0) s = ac_error(AC_ERR_IO, "%s: closing failed", w->path);
    free(w);
    return s;
}
