/* The public audio API: decode, mix down and resample a file into another. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/input.h"
#include "audio/reader.h"
#include "audio/writer.h"
#include "base/error.h"
#include "base/mem.h"

/* Decodes R into OUT (which is created only once it is known to hold R's rate). */
static ac_status convert(ac_audio_reader *r, const char *out)
{
    ac_audio_writer *w = NULL;
    enum { BLOCK = 16384 };
    float *buf = ac_malloc(BLOCK * sizeof *buf);
    ac_status s = buf ? ac_audio_writer_open(out, ac_audio_reader_rate(r), 1, 0, &w) : AC_ERR_NOMEM;
    while (!s) {
        size_t got;
        s = ac_audio_read(r, buf, BLOCK, &got);
        if (s || got == 0) break;
        s = ac_audio_write(w, buf, got);
    }
    ac_status c = ac_audio_writer_close(w);
    if (!s) s = c;
    if (s && w) unlink(out);   /* no half-written file is left behind */
    free(buf);
    return s;
}

ac_status ac_audio_convert_input(const ac_audio_input *in, int rate, const char *out, ac_audio_info *info)
{
    ac_error_clear();
    if (!out) return ac_error(AC_ERR_ARG, "ac_audio_convert: no output path given");
    ac_audio_input i = {0};
    if (in) AC_TRY(ac_struct_take(&i, sizeof i, in, "ac_audio_input"));
    struct stat a, b;
    if (i.kind == AC_INPUT_FILE && i.path && stat(i.path, &a) == 0 && stat(out, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
        return ac_error(AC_ERR_ARG, "%s: the output would overwrite the input", out);
    ac_audio_reader *r;
    AC_TRY(ac_input_open(in, rate, &r));
    if (info) *info = *ac_audio_reader_info(r);
    ac_status s = convert(r, out);
    ac_audio_close(r);
    return s;
}

ac_status ac_audio_convert(const char *file, int rate, const char *out, ac_audio_info *info)
{
    ac_error_clear();
    ac_audio_input in = ac_input_file(file);
    return ac_audio_convert_input(&in, rate, out, info);
}

ac_status ac_audio_save(const char *path, const float *pcm, int64_t frames, int channels, int rate, int pcm16)
{
    ac_error_clear();
    if (!path || (!pcm && frames > 0) || frames < 0 || channels < 1 || rate < 1)
        return ac_error(AC_ERR_ARG, "ac_audio_save: bad arguments");
    ac_audio_writer *w;
    AC_TRY(ac_audio_writer_open(path, rate, channels, pcm16, &w));
    ac_status s = frames ? ac_audio_write(w, pcm, (size_t)frames) : AC_OK;
    ac_status c = ac_audio_writer_close(w);
    return s ? s : c;
}

ac_status ac_audio_decode(const ac_audio_input *in, int rate, float **pcm, int64_t *frames, ac_audio_info *info)
{
    ac_error_clear();
    if (!pcm || !frames || rate < 0) return ac_error(AC_ERR_ARG, "ac_audio_decode: bad arguments");
    return ac_input_error(in, ac_input_read_all(in, rate, 0, 0, pcm, frames, info));
}

ac_status ac_audio_encode(const char *format, const float *pcm, int64_t frames, int channels, int rate, int pcm16,
                          void **data, size_t *size)
{
    ac_error_clear();
    if (data) *data = NULL;
    if (size) *size = 0;
    if (!format || !data || !size || (!pcm && frames > 0) || frames < 0 || channels < 1 || rate < 1)
        return ac_error(AC_ERR_ARG, "ac_audio_encode: bad arguments");
    ac_audio_writer *w;
    AC_TRY(ac_audio_writer_open_memory(format, rate, channels, pcm16, &w));
    ac_status s = frames ? ac_audio_write(w, pcm, (size_t)frames) : AC_OK;
    if (s) {
        ac_audio_writer_close(w);
        return s;
    }
    return ac_audio_writer_finish(w, data, size);
}
