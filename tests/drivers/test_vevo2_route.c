/* Vevo2's style-preserved conversion through src/models/vevo2, for
 * tests/ref/test_vevo2_route.py, which compares what this writes with the
 * PyTorch route (tests/ref/vevo2/route_ref.py):
 *   test_vevo2_route PKG SRC.f32 TGT.f32 SHIFT NOISE.f32 OUT_DIR [THREADS]
 * SRC and TGT are raw float32 mono audio at 24 kHz. Writes OUT_DIR/
 * src_ids.i32 (the source's content-style ids, chroma shifted by SHIFT),
 * tgt_ids.i32, and wav.f32: the conversion from the injected noise (or,
 * when NOISE is "-", the seeded noise of seed 0). SHIFT "est" estimates
 * the shift and prints it. Exit 3 with the error on stderr when anything
 * fails.
 *   test_vevo2_route api PKG SRC.wav SRC.f32 TGT.wav NOISE.f32
 * The public API (ac_voice_convert): the source (a 24 kHz stereo float
 * WAV, its interleaved samples in SRC.f32) as a file, as PCM and as bytes
 * in memory give the same audio; the progress callback sees every
 * flow-matching step; a nonzero return cancels. Prints "api ok". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audioc.h"
#include "models/vevo2/vevo2.h"
#include "test_util.h"

static int write_raw(const char *dir, const char *name, const void *x, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return write_file(path, x, bytes);
}

static int fail(const char *what)
{
    fprintf(stderr, "%s: %s\n", what, ac_last_error());
    return 3;
}

static int steps_seen, cancel_at;

static int on_progress(const char *stage, int done, int total, void *user)
{
    if (strcmp(stage, "fm") == 0) steps_seen = done;
    return cancel_at && strcmp(stage, "fm") == 0 && done == cancel_at;
}

static int same(const ac_voice_result *a, const ac_voice_result *b)
{
    return a->n_samples == b->n_samples && memcmp(a->samples, b->samples, (size_t)a->n_samples * 4) == 0;
}

/* SRC.wav is a 24 kHz stereo float WAV whose samples SRC.f32 holds (interleaved). */
static int api(const char *pkg, const char *src_wav, const char *src_raw, const char *tgt_wav,
               const char *noise_path)
{
    ac_model *m;
    ac_load_options lo;
    ac_load_options_default(&lo);
    lo.weights = test_weight_type();
    API_CHECK(ac_model_load_with(pkg, NULL, &lo, &m) == AC_OK && ac_model_task(m) == AC_TASK_VOICE, "load %s", pkg);
    size_t nn, nbytes, npcm;
    float *noise = read_f32_file(noise_path, &nn), *bytes = read_f32_file(src_wav, &nbytes), *pcm = read_f32_file(src_raw, &npcm);
    ac_audio_input tgt = ac_input_file(tgt_wav), file = ac_input_file(src_wav);
    ac_voice_options o;
    ac_voice_options_default(&o);
    o.target_voice = &tgt;
    o.pitch_mode = AC_PITCH_FIXED;
    o.pitch_shift = 2;
    o.steps = 4;
    o.noise = noise;
    o.n_noise = nn;
    o.on_progress = on_progress;
    ac_voice_result *a, *b, *c;
    API_CHECK(ac_voice_convert(m, &file, &o, &a) == AC_OK, "file input");
    API_CHECK(steps_seen == 4 && a->sample_rate == 24000 && a->pitch_shift == 2 && a->timings->fm_steps == 4,
              "progress saw %d of 4 steps", steps_seen);
    ac_audio_input mem = ac_input_memory(bytes, nbytes * 4, "upload.wav");
    API_CHECK(ac_voice_convert(m, &mem, &o, &b) == AC_OK && same(a, b), "memory input");
    ac_voice_result_free(b);
    ac_audio_input in = ac_input_pcm(pcm, (int64_t)npcm / 2, 2, 24000);
    API_CHECK(ac_voice_convert(m, &in, &o, &b) == AC_OK && same(a, b), "stereo PCM input");
    cancel_at = 2;
    API_CHECK(ac_voice_convert(m, &file, &o, &c) == AC_ERR_CANCELLED && !c, "cancel at step 2");
    cancel_at = 0;
    ac_voice_options bad = o;
    bad.target_voice = NULL;
    API_CHECK(ac_voice_convert(m, &file, &bad, &c) == AC_ERR_ARG && strstr(ac_last_error(), "target voice"),
              "no target voice");
    bad = o;
    bad.n_noise = nn - 1;
    API_CHECK(ac_voice_convert(m, &file, &bad, &c) == AC_ERR_ARG && strstr(ac_last_error(), "noise"),
              "noise of the wrong size");
    ac_voice_result_free(a);
    ac_voice_result_free(b);
    free(noise);
    free(bytes);
    free(pcm);
    ac_model_free(m);
    printf("api ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 7 && strcmp(argv[1], "api") == 0) return api(argv[2], argv[3], argv[4], argv[5], argv[6]);
    if (argc < 7) {
        fprintf(stderr, "usage: test_vevo2_route PKG SRC.f32 TGT.f32 SHIFT|est NOISE.f32|- OUT_DIR [THREADS]\n");
        return 2;
    }
    if (argc > 7) ac_set_threads(atoi(argv[7]));
    size_t n, nt, nn = 0;
    float *src = read_f32_file(argv[2], &n), *tgt = read_f32_file(argv[3], &nt);
    float *noise = strcmp(argv[5], "-") ? read_f32_file(argv[5], &nn) : NULL;
    if (!src || !tgt) return fprintf(stderr, "cannot read the audio\n"), 2;
    vevo2_model *m;
    if (vevo2_load(argv[1], NULL, &m)) return fail("load");
    m->weights = test_weight_type();
    int rc = 0;
    if (vevo2_load_conversion(m)) {
        rc = fail("load conversion");
        goto done;
    }
    vevo2_options o = vevo2_defaults(vevo2_route_find("style_preserved_vc"));
    o.noise = noise;
    o.n_noise = nn;
    if (strcmp(argv[4], "est") != 0) {
        o.pitch_mode = VEVO2_PITCH_FIXED;
        o.pitch_shift = atoi(argv[4]);
    }
    vevo2_timings t = {0};
    if (o.pitch_mode == VEVO2_PITCH_FIXED) {
        ac_arena a, sc;
        ac_arena_init(&a, 1 << 20);
        ac_arena_init(&sc, 1 << 20);
        int32_t *ids;
        int k;
        if (vevo2_content_style_ids(m, src, (int64_t)n, o.pitch_shift, &a, &sc, &ids, &k, &t) ||
            write_raw(argv[6], "src_ids.i32", ids, (size_t)k * 4))
            rc = fail("source ids");
        else if (vevo2_content_style_ids(m, tgt, (int64_t)nt, 0, &a, &sc, &ids, &k, &t) ||
                 write_raw(argv[6], "tgt_ids.i32", ids, (size_t)k * 4))
            rc = fail("target ids");
        ac_arena_free(&a);
        ac_arena_free(&sc);
        if (rc) goto done;
    }
    vevo2_inputs in = {.source = {src, (int64_t)n}, .voice = {tgt, (int64_t)nt}};
    vevo2_output out;
    if (vevo2_run(m, &in, &o, &out)) {
        rc = fail("convert");
        goto done;
    }
    float *wav = out.wav;
    int64_t n_wav = out.n;
    int shift = out.shift;
    printf("shift %d frames %lld\n", shift, (long long)(n_wav / m->vocoder_cfg.hop));
    if (write_raw(argv[6], "wav.f32", wav, (size_t)n_wav * 4)) rc = 2;
    free(wav);
done:
    vevo2_free(m);
    free(src);
    free(tgt);
    free(noise);
    return rc;
}
