#include "audio/reader.h"

#include <errno.h>
#include <math.h>
#include <sndfile.h>
#include <soxr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio/ffmpeg.h"
#include "audio/vorbis.h"
#include "base/error.h"
#include "base/mem.h"

#define BLOCK 4096          /* source frames decoded per step */
#define MAX_CHANNELS 1024
#define MIN_RATE 1000
#define MAX_RATE 768000

typedef struct {
    const unsigned char *data;
    sf_count_t size, pos;
} memfile;

struct ac_audio_reader {
    char name[256];
    ac_audio_info info;
    int out_rate;
    /* source: a libsndfile handle, Ogg Vorbis, FFmpeg, or PCM in memory */
    SNDFILE *sf;
    ac_vorbis *vorbis;
    ac_ffmpeg *ffmpeg;
    memfile mem;
    const float *pcm;
    int64_t pcm_frames;
    int64_t src_pos;
    int eof;
    /* decoded block: interleaved, then mono */
    float *inter, *mono;
    size_t mono_n, mono_pos;
    /* resampler and its output not yet handed out */
    soxr_t soxr;
    int flushed;
    float *out;
    size_t out_cap, out_n, out_pos;
};

/* ---- libsndfile virtual I/O over a buffer -------------------------------- */

static sf_count_t vio_len(void *u) { return ((memfile *)u)->size; }
static sf_count_t vio_tell(void *u) { return ((memfile *)u)->pos; }

static sf_count_t vio_seek(sf_count_t off, int whence, void *u)
{
    memfile *m = u;
    sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? m->pos : m->size;
    sf_count_t p = base + off;
    if (p < 0 || p > m->size) return -1;
    return m->pos = p;
}

static sf_count_t vio_read(void *ptr, sf_count_t n, void *u)
{
    memfile *m = u;
    if (n > m->size - m->pos) n = m->size - m->pos;
    if (n <= 0) return 0;
    memcpy(ptr, m->data + m->pos, (size_t)n);
    m->pos += n;
    return n;
}

static sf_count_t vio_write(const void *p, sf_count_t n, void *u)
{
    (void)p, (void)n, (void)u;
    return 0;
}

/* ---- opening ------------------------------------------------------------- */

static ac_status finish_open(ac_audio_reader *r, int target_rate)
{
    ac_audio_info *in = &r->info;
    if (in->channels < 1 || in->channels > MAX_CHANNELS)
        return ac_error(AC_ERR_UNSUPPORTED, "%s: %d channels (supported: 1..%d)", r->name,
                        in->channels, MAX_CHANNELS);
    if (in->sample_rate < MIN_RATE || in->sample_rate > MAX_RATE)
        return ac_error(AC_ERR_UNSUPPORTED, "%s: sample rate %d Hz (supported: %d..%d)", r->name,
                        in->sample_rate, MIN_RATE, MAX_RATE);
    if (target_rate && (target_rate < MIN_RATE || target_rate > MAX_RATE))
        return ac_error(AC_ERR_ARG, "output rate %d Hz is out of range", target_rate);
    r->out_rate = target_rate ? target_rate : in->sample_rate;
    r->inter = ac_malloc((size_t)BLOCK * (size_t)in->channels * sizeof(float));
    r->mono = ac_malloc(BLOCK * sizeof(float));
    if (!r->inter || !r->mono) return AC_ERR_NOMEM;
    if (r->out_rate != in->sample_rate) {
        soxr_error_t err;
        soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
        soxr_quality_spec_t q = soxr_quality_spec(SOXR_HQ, 0);
        r->soxr = soxr_create(in->sample_rate, r->out_rate, 1, &err, &io, &q, NULL);
        if (!r->soxr) return ac_error(AC_ERR_UNSUPPORTED, "%s: resampler: %s", r->name, err);
        r->out_cap = (size_t)((double)BLOCK * r->out_rate / in->sample_rate) + 256;
        r->out = ac_malloc(r->out_cap * sizeof(float));
        if (!r->out) return AC_ERR_NOMEM;
    }
    return AC_OK;
}

static ac_audio_reader *new_reader(const char *name)
{
    ac_audio_reader *r = ac_calloc(1, sizeof *r);
    if (r) snprintf(r->name, sizeof r->name, "%s", name);
    return r;
}

/* An ID3v2 tag or an MPEG audio frame sync (11 bits set) begins an MP3. */
static int looks_mp3(const unsigned char *head, size_t n)
{
    return (n >= 3 && memcmp(head, "ID3", 3) == 0) || (n >= 2 && head[0] == 0xFF && (head[1] & 0xE0) == 0xE0);
}

/* HEAD: the first N bytes of the input, to name what failed. */
static ac_status open_sf(ac_audio_reader *r, SF_INFO *si, const unsigned char *head, size_t n, int target_rate)
{
    /* libsndfile's message for an MP3 without frames is a stale "File does
     * not exist" */
    if (!r->sf && looks_mp3(head, n))
        return ac_error(AC_ERR_FORMAT, "%s: not a readable audio file (an MP3 header with no decodable audio "
                        "frames after it: truncated or empty)", r->name);
    if (!r->sf)
        return ac_error(AC_ERR_FORMAT, "%s: not a readable audio file (%s)", r->name, sf_strerror(NULL));
    r->info.sample_rate = si->samplerate;
    r->info.channels = si->channels;
    r->info.frames = si->frames >= 0 && si->frames < SF_COUNT_MAX ? si->frames : -1;
    SF_FORMAT_INFO fi = {.format = si->format & SF_FORMAT_TYPEMASK};
    if (sf_command(NULL, SFC_GET_FORMAT_INFO, &fi, sizeof fi) == 0 && fi.extension)
        snprintf(r->info.format, sizeof r->info.format, "%s", fi.extension);
    return finish_open(r, target_rate);
}

ac_status ac_audio_open_file(const char *path, int target_rate, ac_audio_reader **out)
{
    *out = NULL;
    ac_audio_reader *r = new_reader(path);
    if (!r) return AC_ERR_NOMEM;
    SF_INFO si = {0};
    FILE *probe = fopen(path, "rb");
    ac_status s;
    if (!probe) {
        s = ac_error(AC_ERR_IO, "%s: cannot open (%s)", path, strerror(errno));
    } else {
        unsigned char head[64];
        size_t n = fread(head, 1, sizeof head, probe);
        fclose(probe);
        if (ac_vorbis_sniff_file(path)) {
            s = ac_vorbis_open_file(path, &r->vorbis, &r->info);
            if (!s) s = finish_open(r, target_rate);
        } else if (ac_ffmpeg_sniff(head, n)) {
            s = ac_ffmpeg_open_file(path, &r->ffmpeg, &r->info);
            if (!s) s = finish_open(r, target_rate);
        } else {
            r->sf = sf_open(path, SFM_READ, &si);
            s = open_sf(r, &si, head, n, target_rate);
        }
    }
    if (s) {
        ac_audio_close(r);
        return s;
    }
    *out = r;
    return AC_OK;
}

ac_status ac_audio_open_memory(const void *buf, size_t size, const char *name,
                               int target_rate, ac_audio_reader **out)
{
    *out = NULL;
    ac_audio_reader *r = new_reader(name);
    if (!r) return AC_ERR_NOMEM;
    static SF_VIRTUAL_IO vio = {vio_len, vio_seek, vio_read, vio_write, vio_tell};
    ac_status s;
    if (ac_vorbis_sniff(buf, size)) {
        s = ac_vorbis_open_memory(buf, size, name, &r->vorbis, &r->info);
        if (!s) s = finish_open(r, target_rate);
    } else if (ac_ffmpeg_sniff(buf, size)) {
        s = ac_ffmpeg_open_memory(buf, size, name, &r->ffmpeg, &r->info);
        if (!s) s = finish_open(r, target_rate);
    } else {
        r->mem = (memfile){buf, (sf_count_t)size, 0};
        SF_INFO si = {0};
        r->sf = sf_open_virtual(&vio, SFM_READ, &si, &r->mem);
        s = open_sf(r, &si, buf, size, target_rate);
    }
    if (s) {
        ac_audio_close(r);
        return s;
    }
    *out = r;
    return AC_OK;
}

ac_status ac_audio_open_pcm(const float *pcm, int64_t frames, int channels, int rate,
                            int target_rate, ac_audio_reader **out)
{
    *out = NULL;
    if (frames < 0 || (frames > 0 && !pcm)) return ac_error(AC_ERR_ARG, "PCM input: bad buffer");
    ac_audio_reader *r = new_reader("PCM input");
    if (!r) return AC_ERR_NOMEM;
    r->pcm = pcm;
    r->pcm_frames = frames;
    r->info = (ac_audio_info){.sample_rate = rate, .channels = channels, .frames = frames, .format = "PCM"};
    ac_status s = finish_open(r, target_rate);
    if (s) {
        ac_audio_close(r);
        return s;
    }
    *out = r;
    return AC_OK;
}

const ac_audio_info *ac_audio_reader_info(const ac_audio_reader *r) { return &r->info; }
int ac_audio_reader_rate(const ac_audio_reader *r) { return r->out_rate; }
int64_t ac_audio_reader_source_pos(const ac_audio_reader *r) { return r->src_pos; }

/* ---- reading ---------------------------------------------------------------- */

/* Decodes the next block and mixes it to mono into r->mono. */
static ac_status decode_block(ac_audio_reader *r)
{
    int ch = r->info.channels;
    sf_count_t n;
    if (r->sf) {
        n = sf_readf_float(r->sf, r->inter, BLOCK);
        if (n < 0) n = 0;
        if (n == 0 && sf_error(r->sf) != SF_ERR_NO_ERROR)
            return ac_error(AC_ERR_FORMAT, "%s: decoding failed: %s", r->name, sf_strerror(r->sf));
    } else if (r->vorbis) {
        AC_TRY(ac_vorbis_readf(r->vorbis, r->inter, BLOCK, &n));
    } else if (r->ffmpeg) {
        AC_TRY(ac_ffmpeg_readf(r->ffmpeg, r->inter, BLOCK, &n));
    } else {
        int64_t left = r->pcm_frames - r->src_pos;
        n = left < BLOCK ? left : BLOCK;
        if (n > 0) memcpy(r->inter, r->pcm + r->src_pos * ch, (size_t)n * (size_t)ch * sizeof(float));
    }
    if (n == 0) r->eof = 1;
    for (sf_count_t i = 0; i < n; i++) {
        float acc = 0;
        for (int c = 0; c < ch; c++) acc += r->inter[i * ch + c];
        r->mono[i] = ch == 1 ? acc : acc / (float)ch;
        /* float files and PCM buffers can hold NaN or infinity (any such
         * sample of any channel ends up in the mix); a model fed them
         * answers nonsense, so they are refused */
        if (!isfinite(r->mono[i]))
            return ac_error(AC_ERR_FORMAT, "%s: sample %lld is not a finite number (NaN or infinity)", r->name,
                            (long long)(r->src_pos + i));
    }
    r->src_pos += n;
    r->mono_n = (size_t)n;
    r->mono_pos = 0;
    return AC_OK;
}

/* Moves input through the resampler into r->out. */
static void resample_some(ac_audio_reader *r)
{
    size_t idone = 0, odone = 0;
    if (r->mono_pos < r->mono_n) {
        soxr_process(r->soxr, r->mono + r->mono_pos, r->mono_n - r->mono_pos, &idone,
                     r->out, r->out_cap, &odone);
        r->mono_pos += idone;
    } else {
        /* end of input: drain what the filter still holds */
        soxr_process(r->soxr, NULL, 0, NULL, r->out, r->out_cap, &odone);
        if (odone == 0) r->flushed = 1;
    }
    r->out_n = odone;
    r->out_pos = 0;
}

ac_status ac_audio_read(ac_audio_reader *r, float *dst, size_t max, size_t *got)
{
    *got = 0;
    while (*got < max) {
        float *src;
        size_t avail;
        if (r->soxr) {
            if (r->out_pos == r->out_n) {
                if (r->mono_pos == r->mono_n && !r->eof) AC_TRY(decode_block(r));
                if (r->eof && r->flushed) break;
                resample_some(r);
                continue;
            }
            src = r->out + r->out_pos;
            avail = r->out_n - r->out_pos;
        } else {
            if (r->mono_pos == r->mono_n) {
                if (r->eof) break;
                AC_TRY(decode_block(r));
                continue;
            }
            src = r->mono + r->mono_pos;
            avail = r->mono_n - r->mono_pos;
        }
        size_t k = avail < max - *got ? avail : max - *got;
        memcpy(dst + *got, src, k * sizeof(float));
        *got += k;
        if (r->soxr) r->out_pos += k;
        else r->mono_pos += k;
    }
    return AC_OK;
}

void ac_audio_close(ac_audio_reader *r)
{
    if (!r) return;
    if (r->sf) sf_close(r->sf);
    ac_vorbis_close(r->vorbis);
    ac_ffmpeg_close(r->ffmpeg);
    if (r->soxr) soxr_delete(r->soxr);
    free(r->inter);
    free(r->mono);
    free(r->out);
    free(r);
}
