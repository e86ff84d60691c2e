/* Hviske's scratch bounds: the count before allocation covers what a chunk
 * really takes (and not wildly more), a configuration whose chunks would
 * need more than the bound is refused at load naming the key, and a request
 * beyond it is refused before anything is allocated. */
#include <stdlib.h>
#include <string.h>

#include "audio/reader.h"
#include "base/arena.h"
#include "base/error.h"
#include "models/hviske_asr/budget.h"
#include "models/hviske_asr/transcribe.h"
#include "test_util.h"

static const char *tiny = AUDIOC_SOURCE_DIR "/models/hviske-tiny-da";
static const char *sample = AUDIOC_SOURCE_DIR "/samples/da_04_sentence.flac";

static char *read_text(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = malloc(1 << 20);
    *n = buf ? fread(buf, 1, 1 << 20, f) : 0;
    fclose(f);
    return buf;
}

/* config.json of the bundled model with "KEY": OLD replaced by NEW. */
static ac_status parse_with(const char *from, const char *to, hviske_config *cfg)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", tiny);
    size_t n;
    char *text = read_text(path, &n), *out = malloc(n + 256);
    CHECK(text && out, "read %s", path);
    if (!text || !out) return AC_ERR_IO;
    text[n] = 0;
    const char *at = strstr(text, from);
    CHECK(at, "config.json holds %s", from);
    if (at) snprintf(out, n + 256, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    else snprintf(out, n + 256, "%s", text);
    ac_status s = hviske_config_parse(out, strlen(out), NULL, 0, "hostile", cfg);
    free(text);
    free(out);
    return s;
}

static void test_config_refused(void)
{
    hviske_config cfg;
    CHECK(parse_with("\"max_audio_clip_s\": 35", "\"max_audio_clip_s\": 35", &cfg) == AC_OK, "%s", ac_last_error());
    /* 3599 s chunks: the encoder's attention alone is ~ heads x frames^2 */
    ac_status s = parse_with("\"max_audio_clip_s\": 35", "\"max_audio_clip_s\": 3599", &cfg);
    CHECK(s == AC_ERR_MODEL && strstr(ac_last_error(), "max_audio_clip_s 3599") &&
              strstr(ac_last_error(), "GB of scratch each (limit 4 GB)"), "%s", ac_last_error());
    /* 20 min: refused too; 60 s (a long but sane chunk) loads */
    s = parse_with("\"max_audio_clip_s\": 35", "\"max_audio_clip_s\": 1200", &cfg);
    CHECK(s == AC_ERR_MODEL && strstr(ac_last_error(), "max_audio_clip_s 1200"), "%s", ac_last_error());
    CHECK(parse_with("\"max_audio_clip_s\": 35", "\"max_audio_clip_s\": 60", &cfg) == AC_OK, "%s", ac_last_error());
}

static void test_request_refused(void)
{
    hviske_config cfg;
    if (parse_with("\"max_audio_clip_s\": 35", "\"max_audio_clip_s\": 35", &cfg)) return;
    /* a chunk longer than pos_emb_max_len allows, and one too big for the bound */
    cfg.pos_max = 100;
    ac_status s = hviske_check_chunk(&cfg, 16000 * 10, 1, 100);
    CHECK(s == AC_ERR_UNSUPPORTED && strstr(ac_last_error(), "exceeds pos_emb_max_len 100"), "%s", ac_last_error());
    cfg.pos_max = 1 << 20;
    s = hviske_check_chunk(&cfg, (int64_t)16000 * 1200, 1, 100);
    CHECK(s == AC_ERR_UNSUPPORTED && strstr(ac_last_error(), "audio chunk of 1200.0 s with 1 beams needs") &&
              strstr(ac_last_error(), "(limit 4 GB)"), "%s", ac_last_error());
    CHECK(hviske_check_chunk(&cfg, 16000 * 35, 4, 300) == AC_OK, "%s", ac_last_error());
}

/* The count against the arena a real chunk filled: at least what it took,
 * at most twice that. */
static void test_count_covers_use(void)
{
    hviske_model *m;
    ac_status s = hviske_load(tiny, AC_WEIGHTS_STORED, &m);
    CHECK(s == AC_OK, "%s", ac_last_error());
    if (s) return;
    ac_audio_reader *r;
    s = ac_audio_open_file(sample, 16000, &r);
    CHECK(s == AC_OK, "%s", ac_last_error());
    if (s) return;
    static float pcm[16000 * 30];
    size_t n = 0, got;
    while (n < sizeof pcm / sizeof *pcm && !ac_audio_read(r, pcm + n, sizeof pcm / sizeof *pcm - n, &got) && got)
        n += got;
    ac_audio_close(r);
    int beams[] = {1, 4};
    for (int i = 0; i < 2; i++) {
        hviske_options o = {.language = "da", .punctuation = 1, .decode = ac_decode_defaults()};
        o.decode.beam_size = beams[i];
        ac_arena a;
        ac_arena_init(&a, 1 << 16);   /* small blocks: the capacity is close to the use */
        hviske_chunk_result cr;
        s = hviske_transcribe_chunk(m, pcm, (int64_t)n, &o, &a, &cr);
        CHECK(s == AC_OK, "%s", ac_last_error());
        int np = 10, cap = np + o.decode.max_new_tokens;
        double used = (double)ac_arena_capacity(&a), counted = hviske_chunk_bytes(&m->cfg, (int64_t)n, beams[i], cap);
        CHECK(counted >= used && counted <= 2 * used, "%zu samples, %d beams: counted %.0f B, arena %.0f B", n,
              beams[i], counted, used);
        fprintf(stderr, "  %.1f s, %d beams: counted %.1f MB, used %.1f MB\n", n / 16000.0, beams[i], counted / 1e6,
                used / 1e6);
        if (!s) hviske_chunk_result_free(&cr);
        ac_arena_free(&a);
    }
    hviske_free(m);
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    RUN(test_config_refused);
    RUN(test_request_refused);
    RUN(test_count_covers_use);
    return test_finish();
}
