/* The Whisper encoder module (src/models/whisper) for
 * tests/ref/test_vevo2_whisper.py, which compares what this writes with
 * the PyTorch reference:
 *   test_vevo2_whisper run MODEL STATS AUDIO.f32 T OUT_PREFIX
 *       writes OUT_PREFIX{mel,enc,feat}.f32: the log-mel [2*n_ctx][n_mels],
 *       the encoder output [n_ctx][d] and the normalized features [T][d],
 *       and through the trace hook OUT_PREFIX{conv,layerN}.f32 [n_ctx][d];
 *       checks that 1 and 2 threads give the same encoder output within
 *       float rounding (1e-5)
 *   test_vevo2_whisper --load MODEL        prints the dims and the number of
 *                                          tensors copied out, or the error (exit 3)
 *   test_vevo2_whisper --stats PATH DIM    prints the first values or the error (exit 3)
 *   test_vevo2_whisper bench MODEL THREADS REPS
 *       times the log-mel and the encoder over a 30 s window (best of REPS)
 *       and prints the encoder's GFLOP and GFLOP/s
 * MODEL is anything whisper_encoder_load takes. */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/timing.h"
#include "models/whisper/whisper.h"
#include "test_util.h"

#define THREADS_TOL 1e-5

static void dump(const char *prefix, const char *name, const float *x, size_t n)
{
    char p[4200];
    snprintf(p, sizeof p, "%s%s.f32", prefix, name);
    CHECK(write_file(p, x, n * sizeof *x) == 0, "%s: cannot write", p);
}

/* the trace hook: each stage to PREFIX<name>[<layer>].f32 */
static void dump_stage(void *prefix, const char *name, int layer, const void *data, size_t bytes)
{
    char stage[64];
    if (layer >= 0) snprintf(stage, sizeof stage, "%s%d", name, layer);
    else snprintf(stage, sizeof stage, "%s", name);
    dump(prefix, stage, data, bytes / sizeof(float));
}

static int run(const char *model, const char *stats_path, const char *audio, int T, const char *prefix)
{
    whisper_encoder *m;
    whisper_stats *st;
    if (whisper_encoder_load(model, test_weight_type(), &m)) {
        fprintf(stderr, "load %s: %s\n", model, ac_last_error());
        return 1;
    }
    if (whisper_stats_load(stats_path, m->cfg.d, &st)) {
        fprintf(stderr, "stats %s: %s\n", stats_path, ac_last_error());
        whisper_encoder_free(m);
        return 1;
    }
    size_t n = 0, F = whisper_mel_frames(&m->cfg) * (size_t)m->cfg.n_mels;
    size_t E = (size_t)m->cfg.n_ctx * (size_t)m->cfg.d;
    float *x = read_f32_file(audio, &n), *mel = malloc(F * sizeof *mel), *enc = malloc(E * sizeof *enc);
    float *enc2 = malloc(E * sizeof *enc2), *feat = malloc((size_t)T * (size_t)m->cfg.d * sizeof *feat + 1);
    ac_arena a;
    ac_arena_init(&a, 1 << 20);
    ac_trace trace = {.fn = dump_stage, .user = (void *)prefix};
    if (x && mel && enc && enc2 && feat) {
        CHECK(whisper_logmel(m, x, n, mel) == AC_OK, "log-mel: %s", ac_last_error());
        int before = ac_get_threads();
        ac_set_threads(1);
        CHECK(whisper_encode(m, mel, &trace, &a, enc) == AC_OK, "encode: %s", ac_last_error());
        ac_arena_reset(&a);
        ac_set_threads(2);
        CHECK(whisper_encode_audio(m, x, n, NULL, &a, enc2) == AC_OK, "encode: %s", ac_last_error());
        ac_set_threads(before);
        /* OpenBLAS rounds an element differently where a thread's slice puts it */
        double d = max_rel_diff(enc, enc2, E);
        CHECK(d <= THREADS_TOL, "1 and 2 threads: encoder outputs differ by %.3g > %g", d, THREADS_TOL);
        fprintf(stderr, "  1 vs 2 threads: %.2e (tolerance %g)\n", d, THREADS_TOL);
        CHECK(whisper_features(&m->cfg, enc, T, st, feat) == AC_OK, "features: %s", ac_last_error());
        dump(prefix, "mel", mel, F);
        dump(prefix, "enc", enc, E);
        dump(prefix, "feat", feat, (size_t)T * (size_t)m->cfg.d);
    }
    ac_arena_free(&a);
    free(x), free(mel), free(enc), free(enc2), free(feat);
    whisper_stats_free(st);
    whisper_encoder_free(m);
    return test_finish();
}

/* Multiply-adds x 2 of the encoder: the convs, the projections and MLP, and
 * attention's two products per head (QK^T and PV). */
static double encoder_flops(const whisper_config *c)
{
    double T = c->n_ctx, d = c->d, F = (double)whisper_mel_frames(c);
    double conv = 2 * F * d * 3 * c->n_mels + 2 * T * d * 3 * d;
    double block = 2 * T * (4 * d * d + 2 * d * c->ffn) + 2 * 2 * T * T * d;
    return conv + c->layers * block;
}

static int bench(const char *model, int threads, int reps)
{
    whisper_encoder *m;
    if (whisper_encoder_load(model, test_weight_type(), &m)) {
        fprintf(stderr, "load %s: %s\n", model, ac_last_error());
        return 1;
    }
    ac_set_threads(threads);
    size_t n = whisper_window_samples(&m->cfg), F = whisper_mel_frames(&m->cfg) * (size_t)m->cfg.n_mels;
    float *x = malloc(n * sizeof *x), *mel = malloc(F * sizeof *mel);
    float *enc = malloc((size_t)m->cfg.n_ctx * (size_t)m->cfg.d * sizeof *enc);
    uint32_t seed = 1;
    fill_random(x, n, -0.3f, 0.3f, &seed);
    ac_arena a;
    ac_arena_init(&a, 1 << 20);
    double best_mel = 1e30, best_enc = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = ac_now();
        CHECK(whisper_logmel(m, x, n, mel) == AC_OK, "log-mel: %s", ac_last_error());
        double t1 = ac_now();
        CHECK(whisper_encode(m, mel, NULL, &a, enc) == AC_OK, "encode: %s", ac_last_error());
        double t2 = ac_now();
        ac_arena_reset(&a);
        best_mel = t1 - t0 < best_mel ? t1 - t0 : best_mel;
        best_enc = t2 - t1 < best_enc ? t2 - t1 : best_enc;
    }
    double gf = encoder_flops(&m->cfg) / 1e9;
    printf("d %d layers %d threads %d: log-mel %.1f ms, encoder %.3f s, %.0f GFLOP, %.1f GFLOP/s, scratch %.0f MB\n",
           m->cfg.d, m->cfg.layers, threads, best_mel * 1e3, best_enc, gf, gf / best_enc,
           (double)ac_arena_capacity(&a) / 1e6);
    ac_arena_free(&a);
    free(x), free(mel), free(enc);
    whisper_encoder_free(m);
    return test_finish();
}

int main(int argc, char **argv)
{
    test_init(0, argv);
    ac_set_log_level(1);
    if (argc == 3 && strcmp(argv[1], "--load") == 0) {
        whisper_encoder *m;
        if (whisper_encoder_load(argv[2], AC_WEIGHTS_STORED, &m)) {
            printf("%s\n", ac_last_error());
            return 3;
        }
        const whisper_config *c = &m->cfg;
        /* converted: the tensors copied out of the file (decoder ones never are) */
        printf("n_mels %d n_ctx %d d %d heads %d layers %d ffn %d names %s converted %zu\n", c->n_mels, c->n_ctx, c->d,
               c->heads, c->layers, c->ffn, c->names == WHISPER_NAMES_HF ? "hf" : "openai", m->weights->n_owned);
        whisper_encoder_free(m);
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "--stats") == 0) {
        whisper_stats *s;
        if (whisper_stats_load(argv[2], atoi(argv[3]), &s)) {
            printf("%s\n", ac_last_error());
            return 3;
        }
        printf("dim %d mean %.9g std %.9g\n", s->dim, s->mean[0], s->std[0]);
        whisper_stats_free(s);
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "bench") == 0) return bench(argv[2], atoi(argv[3]), atoi(argv[4]));
    if (argc == 7 && strcmp(argv[1], "run") == 0) return run(argv[2], argv[3], argv[4], atoi(argv[5]), argv[6]);
    fprintf(stderr, "usage: test_vevo2_whisper run MODEL STATS AUDIO.f32 T OUT_PREFIX | --load MODEL | --stats PATH DIM |"
                    " bench MODEL THREADS REPS\n");
    return 2;
}
