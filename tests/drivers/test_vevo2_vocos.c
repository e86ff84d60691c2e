/* Stage driver of tests/ref/test_vevo2_vocos.py: Vevo2's timbre mel, Coco
 * tokenizers and Vocos vocoder on tiny random packages, dumping raw
 * little-endian outputs for the script to compare with the PyTorch
 * references (tests/ref/vevo2).
 *   mel CONFIG WAV N OUT                              timbre mel [N/480][128] of wav[N] (config's preprocess)
 *   coco AMPHION_CONFIG KEY WEIGHTS WHISPER|- CHROMA T LATENTS IDS GAPS
 *   vocoder CONFIG WEIGHTS MEL F OUT [THREADS [noblas]]  wav [F*hop] of mel [F][128] (config's model.vocos);
 *                                                     noblas: our kernels only (OpenBLAS's results
 *                                                     depend on how the pool slices a product)
 *   resynth CONFIG WEIGHTS WAV N OUT                  wav -> timbre mel -> vocoder
 *   load-vocoder CONFIG WEIGHTS | load-coco AMPHION_CONFIG KEY WEIGHTS
 *                                                     loads only: prints the error, exit 3 on failure
 *   bench CONFIG WEIGHTS F THREADS REPEAT             best time of the vocoder on F random frames
 *   selftest                                          the VQ search's tie rule and the weight norm
 * KEY is the object of amphion_config.json under "model" (coco_content_style, coco_style). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/error.h"
#include "models/vevo2/coco.h"
#include "models/vevo2/timbre_mel.h"
#include "models/vevo2/vocoder.h"
#include "tensor/kernels.h"
#include "test_util.h"

/* N values of SIZE bytes from PATH; NULL (with a message) unless it holds exactly that. */
static void *read_raw(const char *path, size_t n, size_t size)
{
    FILE *f = fopen(path, "rb");
    void *p = malloc(n * size + 1);
    size_t got = f && p ? fread(p, size, n + 1, f) : 0;
    if (f) fclose(f);
    if (got != n) {
        fprintf(stderr, "%s: %zu values, expected %zu\n", path, got, n);
        free(p);
        return NULL;
    }
    return p;
}

static int write_raw(const char *path, const void *p, size_t n, size_t size)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(p, size, n, f) == n;
    if (f) ok &= fclose(f) == 0;
    if (!ok) fprintf(stderr, "%s: cannot write\n", path);
    return ok;
}

/* The object at dotted PATH of config C, its path in WHERE. */
static ac_status object_at(const ac_config *c, const char *path, char *where, size_t cap, const cJSON **out)
{
    const cJSON *o = c->root;
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", path);
    where[0] = 0;
    for (char *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save)) {
        AC_TRY(ac_config_object(c, o, where[0] ? where : NULL, k, &o));
        size_t len = strlen(where);
        snprintf(where + len, cap - len, "%s%s", len ? "." : "", k);
    }
    *out = o;
    return AC_OK;
}

/* The relaxed config file PATH and its object at dotted KEY (WHERE: its
 * path for messages); the caller frees *C. */
static ac_status open_object(const char *path, const char *key, ac_config **c, const cJSON **o, char *where,
                             size_t cap)
{
    AC_TRY(ac_config_load_relaxed(path, c));
    ac_status s = object_at(*c, key, where, cap, o);
    if (s) ac_config_free(*c);
    return s;
}

/* The vocoder of CONFIG's model.vocos, and (MEL not NULL) its preprocess. */
static ac_status load_vocoder(const char *config, const char *weights, vevo2_vocoder **v, vevo2_mel_config *mel)
{
    ac_config *c;
    const cJSON *o;
    char where[256];
    vevo2_vocoder_config cfg;
    AC_TRY(open_object(config, "model.vocos", &c, &o, where, sizeof where));
    ac_status s = vevo2_vocoder_config_parse(c, o, where, &cfg);
    if (!s && mel) s = object_at(c, "preprocess", where, sizeof where, &o);
    if (!s && mel) s = vevo2_mel_config_parse(c, o, where, mel);
    ac_config_free(c);
    return s ? s : vevo2_vocoder_load(weights, &cfg, test_weight_type(), v);
}

static ac_status load_coco(const char *config, const char *key, const char *weights, vevo2_coco **m)
{
    ac_config *c;
    const cJSON *o;
    char where[256], path[128];
    vevo2_coco_config cfg;
    snprintf(path, sizeof path, "model.%s", key);
    AC_TRY(open_object(config, path, &c, &o, where, sizeof where));
    ac_status s = vevo2_coco_config_parse(c, o, where, &cfg);
    ac_config_free(c);
    return s ? s : vevo2_coco_load(weights, &cfg, test_weight_type(), m);
}

static int cmd_mel(char **a)
{
    vevo2_timbre_mel m;
    vevo2_mel_config mc;
    ac_config *c;
    const cJSON *o;
    char where[256];
    size_t n = strtoul(a[2], NULL, 10);
    float *wav = read_raw(a[1], n, sizeof *wav), *out = NULL;
    ac_status s = open_object(a[0], "preprocess", &c, &o, where, sizeof where);
    if (!s) {
        s = vevo2_mel_config_parse(c, o, where, &mc);
        ac_config_free(c);
    }
    if (!s) s = vevo2_timbre_mel_init(&mc, &m);
    if (!wav || s) {
        fprintf(stderr, "mel: %s\n", s ? ac_last_error() : "no input");
        if (!s) vevo2_timbre_mel_free(&m);
        free(wav);
        return 1;
    }
    size_t T = (size_t)vevo2_timbre_mel_frames(&m, (int64_t)n);
    out = malloc((T ? T : 1) * (size_t)m.cfg.n_mels * sizeof *out);
    int ok = vevo2_timbre_mel_compute(&m, wav, (int64_t)n, out) == AC_OK;
    if (!ok) fprintf(stderr, "mel: %s\n", ac_last_error());
    ok = ok && write_raw(a[3], out, T * (size_t)m.cfg.n_mels, sizeof *out);
    printf("frames %zu\n", T);
    vevo2_timbre_mel_free(&m);
    free(wav), free(out);
    return ok ? 0 : 1;
}

static int cmd_coco(char **a)
{
    vevo2_coco *m;
    if (load_coco(a[0], a[1], a[2], &m)) {
        fprintf(stderr, "coco: %s\n", ac_last_error());
        return 1;
    }
    size_t T = strtoul(a[5], NULL, 10), n = vevo2_coco_tokens(&m->cfg, T), d = (size_t)m->cfg.codebook_dim;
    float *whisper = strcmp(a[3], "-") ? read_raw(a[3], T * (size_t)m->cfg.whisper_dim, sizeof(float)) : NULL;
    float *chroma = read_raw(a[4], T * (size_t)m->cfg.chroma_dim, sizeof(float));
    float *lat = malloc(n * d * sizeof *lat), *gaps = malloc(n * sizeof *gaps);
    int32_t *ids = malloc(n * sizeof *ids);
    ac_arena arena;
    ac_arena_init(&arena, 1 << 20);
    int ok = chroma && (whisper || !strcmp(a[3], "-"));
    if (ok && vevo2_coco_encode(m, whisper, chroma, T, &arena, lat, ids, gaps)) {
        fprintf(stderr, "coco: %s\n", ac_last_error());
        ok = 0;
    }
    ok = ok && write_raw(a[6], lat, n * d, sizeof *lat) && write_raw(a[7], ids, n, sizeof *ids) &&
         write_raw(a[8], gaps, n, sizeof *gaps);
    printf("tokens %zu\n", n);
    ac_arena_free(&arena);
    free(whisper), free(chroma), free(lat), free(gaps), free(ids);
    vevo2_coco_free(m);
    return ok ? 0 : 1;
}

/* The vocoder on MEL[F] into WAV, on THREADS threads (0: as set). */
static int vocode(const vevo2_vocoder *v, const float *mel, size_t F, int threads, float *wav)
{
    ac_arena arena;
    ac_arena_init(&arena, 1 << 20);
    int before = ac_get_threads();
    if (threads) ac_set_threads(threads);
    ac_status s = vevo2_vocoder_forward(v, mel, F, &arena, wav);
    ac_set_threads(before);
    if (s) fprintf(stderr, "vocoder: %s\n", ac_last_error());
    ac_arena_free(&arena);
    return s == AC_OK;
}

static int cmd_vocoder(char **a, int argc)
{
    vevo2_vocoder *v;
    if (load_vocoder(a[0], a[1], &v, NULL)) {
        fprintf(stderr, "vocoder: %s\n", ac_last_error());
        return 1;
    }
    size_t F = strtoul(a[3], NULL, 10), n = F * (size_t)v->cfg.hop;
    float *mel = read_raw(a[2], F * (size_t)v->cfg.input_channels, sizeof *mel), *wav = malloc(n * sizeof *wav);
    if (argc > 6) ac_kernels_set_blas(strcmp(a[6], "noblas") != 0);
    int ok = mel && vocode(v, mel, F, argc > 5 ? atoi(a[5]) : 0, wav) && write_raw(a[4], wav, n, sizeof *wav);
    free(mel), free(wav);
    vevo2_vocoder_free(v);
    return ok ? 0 : 1;
}

static int cmd_resynth(char **a)
{
    vevo2_vocoder *v;
    vevo2_mel_config mc;
    vevo2_timbre_mel m;
    if (load_vocoder(a[0], a[1], &v, &mc)) {
        fprintf(stderr, "resynth: %s\n", ac_last_error());
        return 1;
    }
    size_t n = strtoul(a[3], NULL, 10);
    float *wav = read_raw(a[2], n, sizeof *wav), *mel = NULL, *out = NULL;
    int ok = wav && vevo2_timbre_mel_init(&mc, &m) == AC_OK;
    if (ok) {
        size_t F = (size_t)vevo2_timbre_mel_frames(&m, (int64_t)n);
        mel = malloc((F ? F : 1) * (size_t)mc.n_mels * sizeof *mel);
        out = malloc((F ? F : 1) * (size_t)v->cfg.hop * sizeof *out);
        ok = vevo2_timbre_mel_compute(&m, wav, (int64_t)n, mel) == AC_OK && vocode(v, mel, F, 0, out) &&
             write_raw(a[4], out, F * (size_t)v->cfg.hop, sizeof *out);
        printf("frames %zu samples %zu\n", F, F * (size_t)v->cfg.hop);
        vevo2_timbre_mel_free(&m);
    }
    if (!ok) fprintf(stderr, "resynth: %s\n", ac_last_error());
    free(wav), free(mel), free(out);
    vevo2_vocoder_free(v);
    return ok ? 0 : 1;
}

static int cmd_bench(char **a)
{
    vevo2_vocoder *v;
    if (load_vocoder(a[0], a[1], &v, NULL)) {
        fprintf(stderr, "bench: %s\n", ac_last_error());
        return 1;
    }
    size_t F = strtoul(a[2], NULL, 10), C = (size_t)v->cfg.input_channels;
    int threads = atoi(a[3]), repeat = atoi(a[4]);
    float *mel = malloc(F * C * sizeof *mel), *wav = malloc(F * (size_t)v->cfg.hop * sizeof *wav);
    uint32_t seed = 5;
    fill_random(mel, F * C, -1.5f, 1.5f, &seed);
    double best = INFINITY;
    int ok = 1;
    for (int r = 0; ok && r < repeat; r++) {
        double t0 = ac_now();
        ok = vocode(v, mel, F, threads, wav);
        best = fmin(best, ac_now() - t0);
    }
    double audio = (double)F * v->cfg.hop / 24000.0;
    printf("vocoder %zu frames (%.1f s of audio), %d thread(s): best of %d %.3f s, real-time factor %.4f\n", F,
           audio, threads, repeat, best, best / audio);
    free(mel), free(wav);
    vevo2_vocoder_free(v);
    return ok ? 0 : 1;
}

static int cmd_selftest(void)
{
    /* unit rows; codes 1 and 3 are the same: the first wins, with gap 0 */
    const float cb[] = {1, 0, 0.6f, 0.8f, 0, 1, 0.6f, 0.8f}, z[] = {0.6f, 0.8f, 1, 0};
    int32_t ids[2];
    float gap[2];
    ac_cosine_vq_search(cb, 4, 2, z, 2, ids, gap);
    CHECK(ids[0] == 1 && gap[0] == 0, "tie: id %d gap %g (want 1, 0)", ids[0], gap[0]);
    CHECK(ids[1] == 0 && fabsf(gap[1] - 0.4f) < 1e-6f, "id %d gap %g (want 0, 0.4)", ids[1], gap[1]);
    float x[] = {3, 4, 0}, tiny[] = {0, 0};
    ac_l2_normalize(x, 3);
    ac_l2_normalize(tiny, 2);
    CHECK(fabsf(x[0] - 0.6f) < 1e-7f && fabsf(x[1] - 0.8f) < 1e-7f && tiny[0] == 0, "l2 normalize");
    return test_finish();
}

int main(int argc, char **argv)
{
    test_init(0, argv);
    ac_set_log_level(1);
    const char *cmd = argc > 1 ? argv[1] : "";
    char **a = argv + 2;
    int n = argc - 2;
    if (!strcmp(cmd, "mel") && n == 4) return cmd_mel(a);
    if (!strcmp(cmd, "coco") && n == 9) return cmd_coco(a);
    if (!strcmp(cmd, "vocoder") && n >= 5 && n <= 7) return cmd_vocoder(a, n);
    if (!strcmp(cmd, "resynth") && n == 5) return cmd_resynth(a);
    if (!strcmp(cmd, "bench") && n == 5) return cmd_bench(a);
    if (!strcmp(cmd, "selftest") && n == 0) return cmd_selftest();
    if (!strcmp(cmd, "load-vocoder") && n == 2) {
        vevo2_vocoder *v;
        vevo2_mel_config mc;
        if (load_vocoder(a[0], a[1], &v, &mc)) return printf("%s\n", ac_last_error()), 3;
        vevo2_vocoder_free(v);
        return 0;
    }
    if (!strcmp(cmd, "load-coco") && n == 3) {
        vevo2_coco *m;
        if (load_coco(a[0], a[1], a[2], &m)) return printf("%s\n", ac_last_error()), 3;
        vevo2_coco_free(m);
        return 0;
    }
    fprintf(stderr, "usage: see the comment at the top of tests/drivers/test_vevo2_vocos.c\n");
    return 2;
}
