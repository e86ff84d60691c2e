#include "api/input.h"

#include <stdint.h>
#include <string.h>

#include "base/error.h"
#include "base/mem.h"

ac_status ac_struct_take(void *dst, size_t full, const void *src, const char *what)
{
    size_t size;
    memcpy(&size, src, sizeof size);   /* every versioned struct starts with its size */
    if (size < 2 * sizeof size)
        return ac_error(AC_ERR_ARG, "%s: struct_size %zu: fill it with its _default() or ac_input_*() function",
                        what, size);
    memcpy(dst, src, size < full ? size : full);
    memcpy(dst, &full, sizeof full);
    return AC_OK;
}

/* D's first SIZE bytes into IN, SIZE recorded as its struct_size. */
static void input_init(ac_audio_input *in, size_t size, ac_audio_input d)
{
    d.struct_size = size;
    memcpy(in, &d, size < sizeof d ? size : sizeof d);
}

void ac_input_file_init(ac_audio_input *in, size_t size, const char *path)
{
    input_init(in, size, (ac_audio_input){.kind = AC_INPUT_FILE, .path = path});
}

void ac_input_pcm_init(ac_audio_input *in, size_t size, const float *pcm, int64_t frames, int channels,
                       int sample_rate)
{
    input_init(in, size,
               (ac_audio_input){.kind = AC_INPUT_PCM, .pcm = pcm, .frames = frames, .channels = channels,
                                .sample_rate = sample_rate});
}

void ac_input_memory_init(ac_audio_input *in, size_t size, const void *data, size_t data_size, const char *name)
{
    input_init(in, size, (ac_audio_input){.kind = AC_INPUT_MEMORY, .data = data, .size = data_size, .name = name});
}

ac_status ac_input_open(const ac_audio_input *user, int rate, ac_audio_reader **r)
{
    *r = NULL;
    if (!user) return ac_error(AC_ERR_ARG, "no audio input given");
    ac_audio_input in = {0};
    AC_TRY(ac_struct_take(&in, sizeof in, user, "ac_audio_input"));
    switch (in.kind) {
    case AC_INPUT_FILE:
        if (!in.path) return ac_error(AC_ERR_ARG, "audio input: no file path given");
        return ac_audio_open_file(in.path, rate, r);
    case AC_INPUT_PCM:
        return ac_audio_open_pcm(in.pcm, in.frames, in.channels, in.sample_rate, rate, r);
    case AC_INPUT_MEMORY:
        return ac_audio_open_memory(in.data, in.size, in.name ? in.name : "upload", rate, r);
    }
    return ac_error(AC_ERR_ARG, "audio input: unknown kind %d", (int)in.kind);
}

ac_status ac_input_error(const ac_audio_input *in, ac_status s)
{
    if (s && s != AC_ERR_CANCELLED && in && in->struct_size && in->kind == AC_INPUT_FILE && in->path)
        return ac_error_prefix(s, "%s", in->path);
    return s;
}

ac_status ac_input_read_all(const ac_audio_input *in, int rate, double max_s, double keep_s, float **out, int64_t *n,
                            ac_audio_info *info)
{
    *out = NULL;
    *n = 0;
    ac_audio_reader *r;
    AC_TRY(ac_input_open(in, rate, &r));
    if (info) *info = *ac_audio_reader_info(r);
    ac_floatvec v = {0};
    const double max_n = max_s > 0 ? max_s * ac_audio_reader_rate(r) : 1e300;
    const size_t keep_n = keep_s > 0 ? (size_t)(keep_s * ac_audio_reader_rate(r)) : SIZE_MAX;
    enum { BLOCK = 16384 };
    float buf[BLOCK];
    ac_status s;
    for (;;) {
        size_t got;
        if ((s = ac_audio_read(r, buf, BLOCK, &got)) || got == 0) break;
        if (got > keep_n - v.n) got = keep_n - v.n;
        if ((double)(v.n + got) > max_n) {
            s = ac_error(AC_ERR_ARG, "longer than %.0f s, the most this model converts at once", max_s);
            break;
        }
        if (ac_floatvec_push(&v, buf, got)) {
            s = AC_ERR_NOMEM;
            break;
        }
        if (v.n == keep_n) break;
    }
    ac_audio_close(r);
    if (s) {
        ac_floatvec_free(&v);
        return s;
    }
    *out = v.data;
    *n = (int64_t)v.n;
    return AC_OK;
}
