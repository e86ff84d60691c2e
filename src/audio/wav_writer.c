#include "audio/wav_writer.h"

#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "base/mem.h"

struct ac_wav_writer {
    SNDFILE *sf;
    char path[256];
};

ac_status ac_wav_open(const char *path, int rate, int channels, int pcm16, ac_wav_writer **out)
{
    *out = NULL;
    if (rate <= 0 || channels <= 0) return ac_error(AC_ERR_ARG, "%s: bad rate or channel count", path);
    SF_INFO si = {.samplerate = rate, .channels = channels,
                  .format = SF_FORMAT_WAV | (pcm16 ? SF_FORMAT_PCM_16 : SF_FORMAT_FLOAT)};
    ac_wav_writer *w = ac_calloc(1, sizeof *w);
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

ac_status ac_wav_write(ac_wav_writer *w, const float *pcm, size_t frames)
{
    if (sf_writef_float(w->sf, pcm, (sf_count_t)frames) != (sf_count_t)frames)
        return ac_error(AC_ERR_IO, "%s: write failed: %s", w->path, sf_strerror(w->sf));
    return AC_OK;
}

ac_status ac_wav_close(ac_wav_writer *w)
{
    if (!w) return AC_OK;
    ac_status s = AC_OK;
    if (sf_close(w->sf) != 0) s = ac_error(AC_ERR_IO, "%s: closing failed", w->path);
    free(w);
    return s;
}
