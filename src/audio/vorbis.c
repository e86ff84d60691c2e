#include "audio/vorbis.h"

#include <stdio.h>
#include <stdlib.h>
#include <ogg/ogg.h>
#include <string.h>
#include <vorbis/vorbisfile.h>

#include "base/error.h"
#include "base/mem.h"

struct ac_vorbis {
    char name[256];
    OggVorbis_File vf;
    int channels;
    long rate;
    /* the image for an upload */
    const unsigned char *data;
    size_t size, pos;
};

/* libsndfile takes a stream that begins "OggS" for Ogg, then names the
 * codec from the first page libogg syncs to (skipping bytes that are not
 * one, as it does). FEED gives the next bytes of the input (0 at its end). */
static int first_page_vorbis(size_t (*feed)(void *u, char *dst, size_t max), void *u)
{
    ogg_sync_state oy;
    ogg_page og;
    ogg_sync_init(&oy);
    int found = 0, r;
    for (;;) {
        while ((r = ogg_sync_pageout(&oy, &og)) < 0) {   /* -1: bytes skipped */
        }
        if (r == 1) {
            found = og.body_len >= 7 && memcmp(og.body, "\x01vorbis", 7) == 0;
            break;
        }
        char *dst = ogg_sync_buffer(&oy, 4096);
        size_t n = dst ? feed(u, dst, 4096) : 0;
        if (n == 0) break;
        ogg_sync_wrote(&oy, (long)n);
    }
    ogg_sync_clear(&oy);
    return found;
}

typedef struct {
    const unsigned char *p;
    size_t left;
} span;

static size_t feed_span(void *u, char *dst, size_t max)
{
    span *s = u;
    size_t n = s->left < max ? s->left : max;
    memcpy(dst, s->p, n);
    s->p += n;
    s->left -= n;
    return n;
}

static size_t feed_file(void *u, char *dst, size_t max) { return fread(dst, 1, max, u); }

int ac_vorbis_sniff(const unsigned char *buf, size_t n)
{
    if (n < 4 || memcmp(buf, "OggS", 4) != 0) return 0;
    span s = {buf, n};
    return first_page_vorbis(feed_span, &s);
}

int ac_vorbis_sniff_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char magic[4];
    int yes = fread(magic, 1, 4, f) == 4 && memcmp(magic, "OggS", 4) == 0;
    if (yes) {
        rewind(f);
        yes = first_page_vorbis(feed_file, f);
    }
    fclose(f);
    return yes;
}

/* ---- libvorbisfile callbacks over a buffer ------------------------------- */

static size_t mem_read(void *ptr, size_t size, size_t nmemb, void *u)
{
    ac_vorbis *v = u;
    size_t left = v->size - v->pos, want = size && nmemb <= left / size ? size * nmemb : left;
    memcpy(ptr, v->data + v->pos, want);
    v->pos += want;
    return size ? want / size : 0;
}

static int mem_seek(void *u, ogg_int64_t off, int whence)
{
    ac_vorbis *v = u;
    ogg_int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (ogg_int64_t)v->pos : (ogg_int64_t)v->size;
    if (off < -base || off > (ogg_int64_t)v->size - base) return -1;
    v->pos = (size_t)(base + off);
    return 0;
}

static long mem_tell(void *u) { return (long)((ac_vorbis *)u)->pos; }

/* ---- opening --------------------------------------------------------------- */

static const char *ov_message(int err)
{
    switch (err) {
    case OV_EREAD: return "read error";
    case OV_ENOTVORBIS: return "not Vorbis data";
    case OV_EVERSION: return "unsupported Vorbis version";
    case OV_EBADHEADER: return "bad or truncated Vorbis header";
    case OV_EBADLINK: return "damaged Ogg link";
    case OV_EFAULT: return "internal decoder error";
    default: return "not a readable Ogg Vorbis stream";
    }
}

/* Takes V (closed on failure) once ov_*open* returned ERR. */
static ac_status finish(ac_vorbis *v, int err, ac_vorbis **out, ac_audio_info *info)
{
    if (err) {
        ac_status s = ac_error(AC_ERR_FORMAT, "%s: not a readable audio file (Ogg Vorbis: %s)", v->name,
                               ov_message(err));
        free(v);   /* libvorbisfile already freed what it had */
        return s;
    }
    vorbis_info *vi = ov_info(&v->vf, -1);
    v->channels = vi->channels;
    v->rate = vi->rate;
    ogg_int64_t total = ov_seekable(&v->vf) ? ov_pcm_total(&v->vf, -1) : OV_EINVAL;
    *info = (ac_audio_info){.sample_rate = (int)vi->rate, .channels = vi->channels,
                            .frames = total >= 0 ? total : -1, .format = "ogg"};
    *out = v;
    return AC_OK;
}

static ac_vorbis *new_vorbis(const char *name)
{
    ac_vorbis *v = ac_calloc(1, sizeof *v);
    if (v) snprintf(v->name, sizeof v->name, "%s", name);
    return v;
}

ac_status ac_vorbis_open_file(const char *path, ac_vorbis **out, ac_audio_info *info)
{
    *out = NULL;
    ac_vorbis *v = new_vorbis(path);
    if (!v) return AC_ERR_NOMEM;
    return finish(v, ov_fopen(path, &v->vf), out, info);
}

ac_status ac_vorbis_open_memory(const void *buf, size_t size, const char *name, ac_vorbis **out,
                                ac_audio_info *info)
{
    *out = NULL;
    ac_vorbis *v = new_vorbis(name);
    if (!v) return AC_ERR_NOMEM;
    v->data = buf;
    v->size = size;
    ov_callbacks cb = {mem_read, mem_seek, NULL, mem_tell};
    return finish(v, ov_open_callbacks(v, &v->vf, NULL, 0, cb), out, info);
}

/* ---- decoding --------------------------------------------------------------- */

ac_status ac_vorbis_readf(ac_vorbis *v, float *dst, int64_t max, int64_t *got)
{
    *got = 0;
    while (*got < max) {
        float **pcm;
        int link;
        int64_t want = max - *got;
        long n = ov_read_float(&v->vf, &pcm, want > 4096 ? 4096 : (int)want, &link);
        if (n == OV_HOLE) continue;   /* a gap in the data: decoding resumes after it */
        if (n < 0) return ac_error(AC_ERR_FORMAT, "%s: decoding failed: %s", v->name, ov_message((int)n));
        if (n == 0) break;
        const vorbis_info *vi = ov_info(&v->vf, link);
        if (vi->channels != v->channels || vi->rate != v->rate)
            return ac_error(AC_ERR_UNSUPPORTED, "%s: a chained Ogg stream changes its channels or rate", v->name);
        for (long i = 0; i < n; i++)
            for (int c = 0; c < v->channels; c++) dst[(*got + i) * v->channels + c] = pcm[c][i];
        *got += n;
    }
    return AC_OK;
}

void ac_vorbis_close(ac_vorbis *v)
{
    if (!v) return;
    ov_clear(&v->vf);
    free(v);
}
