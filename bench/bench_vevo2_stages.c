/* Speed of Vevo2's heavy stages besides the flow matching (bench_vevo2_fm)
 * on a package (e.g. that of tests/ref/vevo2/make_package.py --bench; see
 * bench/vevo2_bench.py): the Whisper-medium encoder over its 30 s window
 * (1,500 frames, as every clip runs it) and the vocoder over SECONDS of
 * mel, each the best of 2 runs on 1 and 2 threads. WEIGHTS (stored, f32,
 * f16, bf16, q8_0: --weights) converts the matrices as a load would, each
 * part by its family's rule (the Whisper encoder keeps at least 16 bits).
 * Each stage is given against two roofs, both measured right after it:
 * - the roof of its products' weight type (bench/peak.c), all its
 *   operations counted at that rate, as bench_vevo2_fm gives the step;
 * - the roofs of its arithmetic: each product at its own instruction's
 *   roof (attention's scores and values at f32 FMA, or bf16 dot where its
 *   tiles round to bf16; a convolution kept in its stored type at f32
 *   FMA), the stage's ideal time over its measured one.
 * Depthwise convolutions, norms and the inverse STFT are not counted.
 * usage: bench_vevo2_stages PACKAGE [WEIGHTS stored] [SECONDS 10] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "audioc.h"
#include "base/arena.h"
#include "io/config.h"
#include "models/vevo2/vocoder.h"
#include "models/whisper/whisper.h"
#include "peak.h"

typedef struct {
    const char *name;
    double flops[PEAK_KINDS]; /* operations of each arithmetic */
    peak_kind main;           /* the kind of its weight type's products */
} stage_work;

/* a product of ROWS rows with W */
static void add_product(stage_work *s, const ac_mat *w, double rows)
{
    s->flops[peak_of_weights(w->dtype)] += 2.0 * rows * (double)w->rows * (double)w->cols;
}

static double total(const stage_work *s)
{
    double f = 0;
    for (int k = 0; k < PEAK_KINDS; k++) f += s->flops[k];
    return f;
}

static void print_row(const stage_work *s, const char *weights, int threads, double sec)
{
    double roof = peak_gops(s->main, threads), ideal = peak_seconds(s->flops, threads);
    printf("| %s | %s | %d | %.0f | %.1f | %.1f (%s) | %.2f | %.0f | %.2f |\n", s->name, weights, threads, sec * 1e3,
           total(s) / sec / 1e9, roof, peak_name(s->main), roof > 0 ? total(s) / sec / 1e9 / roof : 0, ideal * 1e3,
           ideal / sec);
    fflush(stdout);
}

/* S's stage run by RUN(CTX, A) on 1 and 2 threads, the best of 2 runs
 * each (the first also faults the weights in), printed as a row each.
 * Returns nonzero when a run fails. */
static int time_stage(const stage_work *s, ac_weight_type type, ac_status (*run)(void *ctx, ac_arena *a), void *ctx)
{
    ac_arena a;
    ac_arena_init(&a, 1 << 20);
    int rc = 0;
    for (int th = 1; !rc && th <= 2; th++) {
        ac_set_threads(th);
        double best = 1e30;
        for (int r = 0; !rc && r < 2; r++) {
            ac_arena_reset(&a);
            double t = ac_now();
            rc = run(ctx, &a) != AC_OK;
            if (ac_now() - t < best) best = ac_now() - t;
        }
        if (!rc) print_row(s, ac_weight_type_name(type), th, best);
    }
    ac_arena_free(&a);
    return rc;
}

/* ---- the Whisper encoder ---------------------------------------------- */

typedef struct {
    const whisper_encoder *m;
    const float *mel;
    float *enc;
} whisper_run;

static ac_status run_whisper(void *ctx, ac_arena *a)
{
    const whisper_run *w = ctx;
    return whisper_encode(w->m, w->mel, NULL, a, w->enc);
}

static stage_work whisper_work(const whisper_encoder *m)
{
    const whisper_config *c = &m->cfg;
    double F = (double)whisper_mel_frames(c), T = F / 2;
    stage_work s = {"Whisper encoder", {0}, peak_of_weights(m->block[0].fc1.dtype)};
    add_product(&s, &m->conv1_w, F);
    add_product(&s, &m->conv2_w, T);
    for (int l = 0; l < c->layers; l++) {
        const whisper_block *B = &m->block[l];
        const ac_mat *w[] = {&B->wq, &B->wk, &B->wv, &B->wo, &B->fc1, &B->fc2};
        for (int i = 0; i < 6; i++) add_product(&s, w[i], T);
        /* scores and weighted values: the encoder's choice (whisper_encode_frames) */
        s.flops[peak_of_attention(m->attn_bf16 && B->wq.dtype == AC_DTYPE_BF16)] += 4.0 * T * T * c->d;
    }
    return s;
}

static int bench_whisper(const char *pkg, ac_weight_type type)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/whisper-medium", pkg);
    whisper_encoder *m;
    if (whisper_encoder_load(p, type, &m) != AC_OK) return 1;
    size_t n = whisper_window_samples(&m->cfg), frames = whisper_mel_frames(&m->cfg);
    size_t out = frames / 2 * (size_t)m->cfg.d;
    float *x = malloc(n * sizeof *x), *mel = malloc(frames * (size_t)m->cfg.n_mels * sizeof *mel);
    float *enc = malloc(out * sizeof *enc);
    for (size_t i = 0; i < n; i++) /* a chirp with a little noise: any audio takes the same time */
        x[i] = 0.3f * sinf(0.0001f * (float)i * (float)i / 16000.0f) + 0.01f * (float)((i * 7919u) % 200) / 100.0f;
    int rc = !x || !mel || !enc || whisper_logmel(m, x, n, mel) != AC_OK;
    stage_work s = whisper_work(m);
    whisper_run w = {m, mel, enc};
    if (!rc) rc = time_stage(&s, type, run_whisper, &w);
    free(x), free(mel), free(enc);
    whisper_encoder_free(m);
    return rc;
}

/* ---- the vocoder ------------------------------------------------------- */

typedef struct {
    const vevo2_vocoder *v;
    const float *mel;
    size_t frames;
    float *wav;
} vocoder_run;

static ac_status run_vocoder(void *ctx, ac_arena *a)
{
    const vocoder_run *r = ctx;
    return vevo2_vocoder_forward(r->v, r->mel, r->frames, a, r->wav);
}

static stage_work vocoder_work(const vevo2_vocoder *v, double F)
{
    const ac_vocos_backbone *b = &v->backbone;
    stage_work s = {"vocoder", {0}, peak_of_weights(b->pw[0].dtype)};
    add_product(&s, &b->embed_w, F);
    for (int l = 0; l < b->layers; l++) add_product(&s, &b->pw[2 * l], F), add_product(&s, &b->pw[2 * l + 1], F);
    add_product(&s, &v->head, F);
    return s;
}

static int bench_vocoder(const char *pkg, ac_weight_type type, double seconds)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/vocoder/config.json", pkg);
    ac_config *c;
    if (ac_config_load_relaxed(p, &c) != AC_OK) return 1; /* the published configs have comments */
    const cJSON *model, *vocos;
    vevo2_vocoder_config cfg;
    ac_status st = ac_config_object(c, NULL, NULL, "model", &model);
    if (!st) st = ac_config_object(c, model, "model", "vocos", &vocos);
    if (!st) st = vevo2_vocoder_config_parse(c, vocos, "model.vocos", &cfg);
    ac_config_free(c);
    if (st) return 1;
    snprintf(p, sizeof p, "%s/vocoder/model.safetensors", pkg);
    ac_weights *w;
    vevo2_vocoder *v;
    if (ac_weights_open_as(p, type, &w) != AC_OK || vevo2_vocoder_load_from(w, &cfg, &v) != AC_OK) return 1;
    size_t F = (size_t)(seconds * 24000 / cfg.hop), C = (size_t)cfg.input_channels;
    float *mel = malloc(F * C * sizeof *mel), *wav = malloc(F * (size_t)cfg.hop * sizeof *wav);
    for (size_t i = 0; mel && i < F * C; i++) mel[i] = -4.0f + 3.0f * sinf(0.37f * (float)i);
    int rc = !mel || !wav;
    stage_work s = vocoder_work(v, (double)F);
    vocoder_run r = {v, mel, F, wav};
    if (!rc) rc = time_stage(&s, type, run_vocoder, &r);
    free(mel), free(wav);
    vevo2_vocoder_free(v);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_vevo2_stages PACKAGE [WEIGHTS] [SECONDS]\n");
        return 2;
    }
    ac_weight_type type = AC_WEIGHTS_STORED;
    if (argc > 2 && ac_weight_type_parse(argv[2], &type) != AC_OK) goto fail;
    double seconds = argc > 3 ? atof(argv[3]) : 10;
    if (!(seconds > 0 && seconds <= 600)) {
        fprintf(stderr, "bench_vevo2_stages: SECONDS must be in (0, 600]\n");
        return 2;
    }
    printf("| stage | weights | threads | ms | GFLOP/s | roof G/s | of roof | ideal ms at its roofs | of its roofs |\n"
           "|---|---|---|---|---|---|---|---|---|\n");
    if (bench_whisper(argv[1], type) || bench_vocoder(argv[1], type, seconds)) goto fail;
    return 0;
fail:
    fprintf(stderr, "%s\n", ac_last_error());
    return 1;
}
