#include "audio/ffmpeg.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>

#include "base/error.h"
#include "base/mem.h"

/* The demuxers of the containers in ffmpeg.h; no other is ever probed. */
#define DEMUXERS "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm,aac"
#define IO_BUFFER 65536

struct ac_ffmpeg {
    char name[256];
    const char *kind;   /* the container, for messages */
    /* the bytes of an upload, or a file read as FFmpeg asks (bounded memory
     * whatever its length) */
    const unsigned char *data;
    size_t size, pos;
    FILE *file;
    AVIOContext *io;
    AVFormatContext *fmt;
    AVCodecContext *dec;
    AVPacket *pkt;
    AVFrame *frame;
    int stream, channels, rate;
    int frame_pos;      /* samples of FRAME already handed out */
    int have_frame, draining, eof;
    /* a damaged packet is skipped, as FFmpeg's own tools do; only audio
     * with nothing decodable fails (with the first such error) */
    int first_error;
    int64_t decoded;
};

const char *ac_ffmpeg_sniff(const unsigned char *h, size_t n)
{
    if (n >= 8 && memcmp(h + 4, "ftyp", 4) == 0) return "MP4/M4A";
    if (n >= 4 && memcmp(h, "\x1A\x45\xDF\xA3", 4) == 0) return "Matroska/WebM";   /* EBML */
    if (n >= 4 && memcmp(h, "ADIF", 4) == 0) return "AAC";
    if (n >= 2 && h[0] == 0xFF && (h[1] & 0xF6) == 0xF0) return "AAC";   /* ADTS: a sync word with layer 0 */
    return NULL;
}

/* ---- I/O over the bytes ------------------------------------------------------ */

static int io_read(void *u, uint8_t *dst, int n)
{
    ac_ffmpeg *f = u;
    size_t k;
    if (f->file) {
        k = fread(dst, 1, (size_t)n, f->file);
    } else {
        k = f->size - f->pos < (size_t)n ? f->size - f->pos : (size_t)n;
        memcpy(dst, f->data + f->pos, k);
    }
    f->pos += k;
    return k ? (int)k : AVERROR_EOF;
}

static int64_t io_seek(void *u, int64_t off, int whence)
{
    ac_ffmpeg *f = u;
    if (whence & AVSEEK_SIZE) return (int64_t)f->size;
    whence &= ~AVSEEK_FORCE;
    int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (int64_t)f->pos : (int64_t)f->size;
    if (off < -base || off > (int64_t)f->size - base) return AVERROR(EINVAL);
    if (f->file && fseeko(f->file, (off_t)(base + off), SEEK_SET) != 0) return AVERROR(errno);
    f->pos = (size_t)(base + off);
    return (int64_t)f->pos;
}

/* ---- opening ----------------------------------------------------------------- */

static void quiet_once(void) { av_log_set_level(AV_LOG_QUIET); }   /* our messages say what failed */

/* WHAT follows the container's kind: " container" (ERR says what is wrong
 * with it), ": no audio stream". */
static ac_status fail(ac_ffmpeg *f, const char *what, int err)
{
    char msg[AV_ERROR_MAX_STRING_SIZE] = "";
    if (err) av_strerror(err, msg, sizeof msg);
    ac_status s = ac_error(AC_ERR_FORMAT, "%s: not a readable audio file (%s%s%s%s)", f->name, f->kind, what,
                           err ? ": " : "", msg);
    ac_ffmpeg_close(f);
    return s;
}

/* Opens the container over F's bytes and the decoder of its first audio stream. */
static ac_status open_bytes(ac_ffmpeg *f, ac_ffmpeg **out, ac_audio_info *info)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, quiet_once);
    unsigned char *buf = av_malloc(IO_BUFFER);
    if (buf) f->io = avio_alloc_context(buf, IO_BUFFER, 0, f, io_read, NULL, io_seek);
    if (!f->io) av_free(buf);
    f->fmt = f->io ? avformat_alloc_context() : NULL;
    f->pkt = av_packet_alloc();
    f->frame = av_frame_alloc();
    if (!f->fmt || !f->pkt || !f->frame) {
        ac_ffmpeg_close(f);
        return AC_ERR_NOMEM;
    }
    f->fmt->pb = f->io;
    f->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
    AVDictionary *opts = NULL;
    av_dict_set(&opts, "format_whitelist", DEMUXERS, 0);
    av_dict_set(&opts, "protocol_whitelist", "none", 0);   /* references to other files stay closed */
    int err = avformat_open_input(&f->fmt, NULL, NULL, &opts);
    av_dict_free(&opts);
    if (err < 0) {
        f->fmt = NULL;   /* freed by the failed open */
        return fail(f, " container", err);
    }
    if ((err = avformat_find_stream_info(f->fmt, NULL)) < 0) return fail(f, " stream info", err);
    const AVCodec *codec = NULL;
    f->stream = av_find_best_stream(f->fmt, AVMEDIA_TYPE_AUDIO, -1, -1, &codec, 0);
    if (f->stream < 0) return fail(f, ": no audio stream", 0);
    if (!codec) return fail(f, ": an audio codec this FFmpeg cannot decode", 0);
    const AVStream *st = f->fmt->streams[f->stream];
    f->dec = avcodec_alloc_context3(codec);
    if (!f->dec) {
        ac_ffmpeg_close(f);
        return AC_ERR_NOMEM;
    }
    if ((err = avcodec_parameters_to_context(f->dec, st->codecpar)) < 0 ||
        (err = avcodec_open2(f->dec, codec, NULL)) < 0) {
        char what[64];
        snprintf(what, sizeof what, " %s decoder", codec->name);
        return fail(f, what, err);
    }
    f->channels = f->dec->ch_layout.nb_channels;
    f->rate = f->dec->sample_rate;
    int64_t frames = -1;
    if (st->duration > 0 && st->time_base.den > 0)
        frames = av_rescale_q(st->duration, st->time_base, (AVRational){1, f->rate > 0 ? f->rate : 1});
    *info = (ac_audio_info){.sample_rate = f->rate, .channels = f->channels, .frames = frames};
    snprintf(info->format, sizeof info->format, "%s", codec->name);
    *out = f;
    return AC_OK;
}

static ac_ffmpeg *new_ffmpeg(const char *name)
{
    ac_ffmpeg *f = ac_calloc(1, sizeof *f);
    if (f) snprintf(f->name, sizeof f->name, "%s", name);
    return f;
}

/* F over its bytes (or file), the first N of them in HEAD. */
static ac_status open_source(ac_ffmpeg *f, const unsigned char *head, size_t n, ac_ffmpeg **out, ac_audio_info *info)
{
    f->kind = ac_ffmpeg_sniff(head, n);
    if (!f->kind) f->kind = "container";
    return open_bytes(f, out, info);
}

ac_status ac_ffmpeg_open_memory(const void *buf, size_t size, const char *name, ac_ffmpeg **out,
                                ac_audio_info *info)
{
    *out = NULL;
    ac_ffmpeg *f = new_ffmpeg(name);
    if (!f) return AC_ERR_NOMEM;
    f->data = buf;
    f->size = size;
    return open_source(f, buf, size, out, info);
}

ac_status ac_ffmpeg_open_file(const char *path, ac_ffmpeg **out, ac_audio_info *info)
{
    *out = NULL;
    ac_ffmpeg *f = new_ffmpeg(path);
    if (!f) return AC_ERR_NOMEM;
    struct stat st;
    f->file = fopen(path, "rb");
    int regular = f->file && fstat(fileno(f->file), &st) == 0 && S_ISREG(st.st_mode);
    if (!regular) {
        ac_status s =
            ac_error(AC_ERR_IO, "%s: cannot open (%s)", path, f->file ? "not a regular file" : strerror(errno));
        ac_ffmpeg_close(f);
        return s;
    }
    unsigned char head[16];
    size_t n = fread(head, 1, sizeof head, f->file);
    rewind(f->file);
    f->size = (size_t)st.st_size;
    return open_source(f, head, n, out, info);
}

/* ---- decoding ------------------------------------------------------------------ */

/* Sample I of channel C of FRAME as a float in [-1, 1]. */
static float sample(const AVFrame *fr, int c, int i, int channels)
{
    enum AVSampleFormat fmt = fr->format;
    int planar = av_sample_fmt_is_planar(fmt), bytes = av_get_bytes_per_sample(fmt);
    const uint8_t *p = planar ? fr->extended_data[c] + (size_t)i * bytes
                              : fr->extended_data[0] + ((size_t)i * channels + c) * bytes;
    union { uint8_t u8; int16_t s16; int32_t s32; int64_t s64; float f; double d; } v;
    memcpy(&v, p, (size_t)bytes);
    switch (av_get_packed_sample_fmt(fmt)) {
    case AV_SAMPLE_FMT_U8: return ((float)v.u8 - 128) / 128;
    case AV_SAMPLE_FMT_S16: return (float)v.s16 / 32768;
    case AV_SAMPLE_FMT_S32: return (float)((double)v.s32 / 2147483648.0);
    case AV_SAMPLE_FMT_S64: return (float)((double)v.s64 / 9223372036854775808.0);
    case AV_SAMPLE_FMT_FLT: return v.f;
    case AV_SAMPLE_FMT_DBL: return (float)v.d;
    default: return 0;
    }
}

static ac_status decode_error(ac_ffmpeg *f, const char *what, int err)
{
    char msg[AV_ERROR_MAX_STRING_SIZE];
    av_strerror(err, msg, sizeof msg);
    return ac_error(AC_ERR_FORMAT, "%s: decoding failed (%s, %s: %s)", f->name, f->kind, what, msg);
}

/* The next decoded frame into f->frame; f->eof at the end. */
static ac_status next_frame(ac_ffmpeg *f)
{
    for (;;) {
        int err = avcodec_receive_frame(f->dec, f->frame);
        if (err == 0) {
            if (f->frame->ch_layout.nb_channels != f->channels || f->frame->sample_rate != f->rate)
                return ac_error(AC_ERR_UNSUPPORTED, "%s: the audio changes its channels or rate midway", f->name);
            f->have_frame = 1;
            f->frame_pos = 0;
            f->decoded += f->frame->nb_samples;
            return AC_OK;
        }
        if (err == AVERROR_EOF) {
            f->eof = 1;
            if (!f->decoded && f->first_error) return decode_error(f, f->dec->codec->name, f->first_error);
            return AC_OK;
        }
        if (err != AVERROR(EAGAIN) && err != AVERROR_INVALIDDATA) return decode_error(f, f->dec->codec->name, err);
        if (f->draining) {   /* the decoder wants input that will not come */
            f->eof = 1;
            return AC_OK;
        }
        err = av_read_frame(f->fmt, f->pkt);
        if (err == AVERROR_EOF) {
            f->draining = 1;
            avcodec_send_packet(f->dec, NULL);
            continue;
        }
        if (err < 0) return decode_error(f, "the container", err);
        if (f->pkt->stream_index == f->stream) err = avcodec_send_packet(f->dec, f->pkt);
        av_packet_unref(f->pkt);
        if (err == AVERROR_INVALIDDATA && !f->first_error) f->first_error = err;
        else if (err < 0 && err != AVERROR(EAGAIN) && err != AVERROR_INVALIDDATA)
            return decode_error(f, f->dec->codec->name, err);
    }
}

ac_status ac_ffmpeg_readf(ac_ffmpeg *f, float *dst, int64_t max, int64_t *got)
{
    *got = 0;
    while (*got < max && !f->eof) {
        if (!f->have_frame) {
            AC_TRY(next_frame(f));
            continue;
        }
        int64_t k = f->frame->nb_samples - f->frame_pos;
        if (k > max - *got) k = max - *got;
        for (int64_t i = 0; i < k; i++)
            for (int c = 0; c < f->channels; c++)
                dst[(*got + i) * f->channels + c] = sample(f->frame, c, f->frame_pos + (int)i, f->channels);
        *got += k;
        f->frame_pos += (int)k;
        if (f->frame_pos >= f->frame->nb_samples) {
            av_frame_unref(f->frame);
            f->have_frame = 0;
        }
    }
    return AC_OK;
}

void ac_ffmpeg_close(ac_ffmpeg *f)
{
    if (!f) return;
    avcodec_free_context(&f->dec);
    avformat_close_input(&f->fmt);
    if (f->io) av_freep(&f->io->buffer);
    avio_context_free(&f->io);
    av_packet_free(&f->pkt);
    av_frame_free(&f->frame);
    if (f->file) fclose(f->file);
    free(f);
}
