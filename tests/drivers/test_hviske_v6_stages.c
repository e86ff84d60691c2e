/* Hviske v6's stages for the parity test (tests/ref/test_hviske_v6_parity.py):
 *   test_hviske_v6_stages MODEL_DIR AUDIO.f32 GOLDEN_DIR OUT_DIR
 * runs the chunk AUDIO.f32 (16 kHz f32 samples) and writes to OUT_DIR what
 * each stage computes: mel.f32 [frames][n_mels], enc.f32 (the encoder's
 * output), tokens.f32 (the valid projected rows), tf_logits.f32 (teacher
 * forcing: the logits after the prompt and after each id of GOLDEN_DIR's
 * tf_ids.i32, in one pass), greedy.i32 and beam.i32 (2 beams), and
 * text.txt (the 2-beam ids' text). Exit 3 with the message when the
 * package does not load. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/error.h"
#include "models/hviske_v6/hviske_v6.h"
#include "test_util.h"

static const char *out_dir;

static void dump(const char *name, const void *data, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", out_dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, bytes, f) == bytes, "%s: cannot write", path);
    if (f) fclose(f);
}

static void *slurp(const char *path, size_t *bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(n > 0 ? (size_t)n : 1);
    *bytes = buf ? fread(buf, 1, (size_t)n, f) : 0;
    fclose(f);
    return buf;
}

static void on_trace(void *user, const char *name, int layer, const void *data, size_t bytes)
{
    (void)user;
    if (layer < 0 && (!strcmp(name, "mel") || !strcmp(name, "encoder"))) {
        char file[64];
        snprintf(file, sizeof file, "%s.f32", strcmp(name, "mel") ? "enc" : "mel");
        dump(file, data, bytes);
    }
}

static void decode(const hv6_model *m, const float *rows, int n_rows, int64_t n, int beams, const char *name,
                   ac_arena *a)
{
    hv6_options o = hv6_defaults();
    o.beams = beams;
    ac_decode_result r;
    CHECK(hv6_decode(m, rows, n_rows, n, &o, a, &r, NULL) == AC_OK, "%d beams: %s", beams, ac_last_error());
    dump(name, r.tokens, (size_t)r.n_tokens * sizeof *r.tokens);
    if (beams == 2) {
        char *text;
        CHECK(hv6_text(m, r.tokens, r.n_tokens, &text) == AC_OK, "text: %s", ac_last_error());
        dump("text.txt", text, strlen(text));
        free(text);
    }
    ac_decode_result_free(&r);
}

static void teacher(const hv6_model *m, const float *rows, int n_rows, const char *gold, ac_arena *a)
{
    char path[4096];
    size_t bytes = 0;
    snprintf(path, sizeof path, "%s/tf_ids.i32", gold);
    int *tf = slurp(path, &bytes), n_tf = (int)(bytes / sizeof *tf), ids[4 + 512], n_ids;
    CHECK(tf && n_tf <= 512, "%s: cannot read", path);
    if (!tf) return;
    hv6_options o = hv6_defaults();
    hv6_prompt(m, &o, ids, &n_ids);
    memcpy(ids + n_ids, tf, (size_t)n_tf * sizeof *tf);
    int n_tok = n_ids + n_tf, S = n_rows + n_tok, V = m->cfg.dec.vocab;
    qwen2_session *s;
    float *logits = ac_arena_floats(a, (size_t)(n_tf + 1) * (size_t)V);
    CHECK(logits && qwen2_session_new(m->dec, S, S, a, &s) == AC_OK &&
              qwen2_forward_embeds(s, rows, n_rows, ids, n_tok, 0, n_tf + 1, logits) == AC_OK,
          "teacher forcing: %s", ac_last_error());
    dump("tf_logits.f32", logits, (size_t)(n_tf + 1) * (size_t)V * sizeof *logits);
    free(tf);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: test_hviske_v6_stages MODEL_DIR AUDIO.f32 GOLDEN_DIR OUT_DIR\n");
        return 2;
    }
    out_dir = argv[4];
    hv6_model *m;
    if (hv6_load(argv[1], test_weight_type(), &m)) {
        printf("%s\n", ac_last_error());
        return 3;
    }
    size_t bytes = 0;
    float *x = slurp(argv[2], &bytes);
    CHECK(x && bytes >= sizeof *x, "%s: cannot read", argv[2]);
    int64_t n = (int64_t)(bytes / sizeof *x);
    ac_arena a;
    ac_arena_init(&a, 1u << 20);
    ac_trace t = {.fn = on_trace};
    float *rows;
    int n_rows;
    CHECK(hv6_audio_rows(m, x, n, &t, &a, &rows, &n_rows, NULL) == AC_OK, "audio rows: %s", ac_last_error());
    dump("tokens.f32", rows, (size_t)n_rows * (size_t)m->cfg.dec.hidden * sizeof *rows);
    teacher(m, rows, n_rows, argv[3], &a);
    decode(m, rows, n_rows, n, 1, "greedy.i32", &a);
    decode(m, rows, n_rows, n, 2, "beam.i32", &a);
    ac_arena_free(&a);
    free(x);
    hv6_free(m);
    return test_failures ? 1 : 0;
}
