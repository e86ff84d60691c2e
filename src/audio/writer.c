#include "audio/writer.h"

#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/error.h"
#include "base/mem.h"

/* A file image growing in memory, behind libsndfile's virtual I/O. */
typedef struct {
    unsigned char *data;
    sf_count_t len, cap, pos;
} membuf;

struct ac_audio_writer {
    SNDFILE *sf;
    char path[256];
    membuf *mem;   /* NULL: a file */
};

static sf_count_t mem_length(void *user) { return ((membuf *)user)->len; }
static sf_count_t mem_tell(void *user) { return ((membuf *)user)->pos; }

static sf_count_t mem_seek(sf_count_t offset, int whence, void *user)
{
    membuf *m = user;
    sf_count_t to = whence == SEEK_SET ? offset : whence == SEEK_CUR ? m->pos + offset : m->len + offset;
    if (to < 0) return -1;
    return m->pos = to;
}

static sf_count_t mem_read(void *ptr, sf_count_t count, void *user)
{
    membuf *m = user;
    sf_count_t n = m->pos < m->len ? m->len - m->pos : 0;
    if (n > count) n = count;
    if (n > 0) memcpy(ptr, m->data + m->pos, (size_t)n);
    m->pos += n;
    return n;
}

static sf_count_t mem_write(const void *ptr, sf_count_t count, void *user)
{
    membuf *m = user;
    if (count <= 0) return 0;
    if (m->pos + count > m->cap) {
        sf_count_t cap = m->cap ? m->cap : 65536;
        while (cap < m->pos + count) cap *= 2;
        unsigned char *d = realloc(m->data, (size_t)cap);
        if (!d) return 0;
        m->data = d;
        m->cap = cap;
    }
    if (m->pos > m->len) memset(m->data + m->len, 0, (size_t)(m->pos - m->len));   /* a seek past the end */
    memcpy(m->data + m->pos, ptr, (size_t)count);
    m->pos += count;
    if (m->pos > m->len) m->len = m->pos;
    return count;
}

/* The rates an encoder takes, 0-terminated (NULL: any). libsndfile's own
 * check lets every rate through and its encoder refuses them only once the
 * file is created. */
static const int opus_rates[] = {8000, 12000, 16000, 24000, 48000, 0};
static const int mp3_rates[] = {8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 0};

typedef struct {
    const char *ext, *name;
    int format;              /* with the WAV subtype left to pcm16 */
    const int *rates;
} out_format;

static const out_format out_formats[] = {
    {"wav", "WAV", SF_FORMAT_WAV, NULL},
    {"flac", "FLAC", SF_FORMAT_FLAC | SF_FORMAT_PCM_16, NULL},
    {"ogg", "Ogg Vorbis", SF_FORMAT_OGG | SF_FORMAT_VORBIS, NULL},
    {"opus", "Opus", SF_FORMAT_OGG | SF_FORMAT_OPUS, opus_rates},
    {"mp3", "MP3", SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III, mp3_rates},
    {"pcm", "raw PCM", SF_FORMAT_RAW | SF_FORMAT_PCM_16 | SF_ENDIAN_LITTLE, NULL},   /* headerless 16-bit LE */
};

/* PATH: a file name, or a bare extension ("wav") for memory. */
static const out_format *format_for(const char *path)
{
    const char *dot = strrchr(path, '.'), *ext = dot ? dot + 1 : path;
    for (size_t i = 0; i < sizeof out_formats / sizeof *out_formats; i++)
        if (strcasecmp(ext, out_formats[i].ext) == 0) return &out_formats[i];
    return NULL;
}

/* AC_OK when F can hold RATE; else a message listing the rates it can. */
static ac_status check_rate(const char *path, const out_format *f, int rate)
{
    if (!f->rates) return AC_OK;
    char list[128] = "";
    for (const int *r = f->rates; *r; r++) {
        if (*r == rate) return AC_OK;
        const char *sep = r == f->rates ? "" : r[1] ? ", " : " or ";
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", sep, *r);
    }
    return ac_error(AC_ERR_UNSUPPORTED, "%s: %s holds %s Hz only, not %d Hz (resample to one of them)", path, f->name,
                    list, rate);
}

ac_status ac_audio_writer_check(const char *path, int rate, int channels)
{
    if (rate <= 0 || channels <= 0) return ac_error(AC_ERR_ARG, "%s: bad rate or channel count", path);
    const out_format *f = format_for(path);
    if (!f) return ac_error(AC_ERR_ARG, "%s: unknown output format (use .wav, .flac, .ogg, .opus, .mp3 or .pcm)", path);
    AC_TRY(check_rate(path, f, rate));
    int subtype = f->format == SF_FORMAT_WAV ? SF_FORMAT_FLOAT : 0;   /* WAV holds any rate either way */
    SF_INFO si = {.samplerate = rate, .channels = channels, .format = f->format | subtype};
    if (!sf_format_check(&si))
        return ac_error(AC_ERR_UNSUPPORTED, "%s: this format cannot hold %d Hz, %d channels", path, rate, channels);
    return AC_OK;
}

/* A writer to PATH, or to memory when MEMORY (PATH then names the format). */
static ac_status open_writer(const char *path, int memory, int rate, int channels, int pcm16, ac_audio_writer **out)
{
    *out = NULL;
    AC_TRY(ac_audio_writer_check(path, rate, channels));
    const out_format *f = format_for(path);
    int format = f->format == SF_FORMAT_WAV ? SF_FORMAT_WAV | (pcm16 ? SF_FORMAT_PCM_16 : SF_FORMAT_FLOAT) : f->format;
    SF_INFO si = {.samplerate = rate, .channels = channels, .format = format};
    ac_audio_writer *w = ac_calloc(1, sizeof *w);
    if (!w) return AC_ERR_NOMEM;
    snprintf(w->path, sizeof w->path, "%s", path);
    int existed = !memory && access(path, F_OK) == 0;
    static SF_VIRTUAL_IO io = {mem_length, mem_seek, mem_read, mem_write, mem_tell};
    if (memory && !(w->mem = ac_calloc(1, sizeof *w->mem))) {
        free(w);
        return AC_ERR_NOMEM;
    }
    w->sf = memory ? sf_open_virtual(&io, SFM_WRITE, &si, w->mem) : sf_open(path, SFM_WRITE, &si);
    if (!w->sf) {
        ac_status s = ac_error(AC_ERR_IO, "%s: cannot write: %s", path, sf_strerror(NULL));
        if (!memory && !existed) unlink(path);   /* an encoder that failed to start leaves an empty file */
        free(w->mem);
        free(w);
        return s;
    }
    /* clip instead of wrapping when float input exceeds [-1, 1] */
    sf_command(w->sf, SFC_SET_CLIPPING, NULL, SF_TRUE);
    *out = w;
    return AC_OK;
}

ac_status ac_audio_writer_open(const char *path, int rate, int channels, int pcm16, ac_audio_writer **out)
{
    return open_writer(path, 0, rate, channels, pcm16, out);
}

ac_status ac_audio_writer_open_memory(const char *format, int rate, int channels, int pcm16, ac_audio_writer **out)
{
    return open_writer(format, 1, rate, channels, pcm16, out);
}

ac_status ac_audio_write(ac_audio_writer *w, const float *pcm, size_t frames)
{
    if (sf_writef_float(w->sf, pcm, (sf_count_t)frames) != (sf_count_t)frames)
        return ac_error(AC_ERR_IO, "%s: write failed: %s", w->path, sf_strerror(w->sf));
    return AC_OK;
}

ac_status ac_audio_writer_finish(ac_audio_writer *w, void **data, size_t *size)
{
    if (data) *data = NULL;
    if (size) *size = 0;
    if (!w) return AC_OK;
    ac_status s = AC_OK;
    if (sf_close(w->sf) != 0) s = ac_error(AC_ERR_IO, "%s: closing failed", w->path);
    if (w->mem) {
        if (!s && data && size) {
            /* an empty image still gets a buffer of its own */
            *data = w->mem->data ? w->mem->data : ac_malloc(1);
            *size = (size_t)w->mem->len;
            if (!*data) s = AC_ERR_NOMEM;
        } else {
            free(w->mem->data);
        }
        free(w->mem);
    }
    free(w);
    return s;
}

ac_status ac_audio_writer_close(ac_audio_writer *w) { return ac_audio_writer_finish(w, NULL, NULL); }
