/* Vevo2's style-preserved conversion through src/models/vevo2, for
 * tests/ref/test_vevo2_route.py, which compares what this writes with the
 * PyTorch route (tests/ref/vevo2/route_ref.py):
 *   test_vevo2_route PKG SRC.f32 TGT.f32 SHIFT NOISE.f32 OUT_DIR [THREADS]
 * SRC and TGT are raw float32 mono audio at 24 kHz. Writes OUT_DIR/
 * src_ids.i32 (the source's content-style ids, chroma shifted by SHIFT),
 * tgt_ids.i32, and wav.f32: the conversion from the injected noise (or,
 * when NOISE is "-", the seeded noise of seed 0). SHIFT "est" estimates
 * the shift and prints it. Exit 3 with the error on stderr when anything
 * fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audioc.h"
#include "models/vevo2/vevo2.h"

static float *read_f32(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    float *x = malloc(size > 0 ? (size_t)size : 1);
    *n = fread(x, 4, (size_t)size / 4, f);
    fclose(f);
    return x;
}

static int write_raw(const char *dir, const char *name, const void *x, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(x, 1, bytes, f) == bytes;
    if (f) fclose(f);
    return ok ? 0 : -1;
}

static int fail(const char *what)
{
    fprintf(stderr, "%s: %s\n", what, ac_last_error());
    return 3;
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: test_vevo2_route PKG SRC.f32 TGT.f32 SHIFT|est NOISE.f32|- OUT_DIR [THREADS]\n");
        return 2;
    }
    if (argc > 7) ac_set_threads(atoi(argv[7]));
    size_t n, nt, nn = 0;
    float *src = read_f32(argv[2], &n), *tgt = read_f32(argv[3], &nt);
    float *noise = strcmp(argv[5], "-") ? read_f32(argv[5], &nn) : NULL;
    if (!src || !tgt) return fprintf(stderr, "cannot read the audio\n"), 2;
    vevo2_model *m;
    if (vevo2_load(argv[1], NULL, &m)) return fail("load");
    int rc = 0;
    if (vevo2_load_conversion(m)) {
        rc = fail("load conversion");
        goto done;
    }
    vevo2_convert_options o = {.steps = 32, .noise = noise, .n_noise = nn};
    if (strcmp(argv[4], "est") == 0) {
        o.pitch_mode = VEVO2_PITCH_ESTIMATE;
    } else {
        o.pitch_mode = VEVO2_PITCH_FIXED;
        o.pitch_shift = atoi(argv[4]);
    }
    vevo2_timings t = {0};
    if (o.pitch_mode == VEVO2_PITCH_FIXED) {
        ac_arena a;
        ac_arena_init(&a, 1 << 20);
        int32_t *ids;
        int k;
        if (vevo2_content_style_ids(m, src, (int64_t)n, o.pitch_shift, &a, &ids, &k, &t) ||
            write_raw(argv[6], "src_ids.i32", ids, (size_t)k * 4))
            rc = fail("source ids");
        else if (vevo2_content_style_ids(m, tgt, (int64_t)nt, 0, &a, &ids, &k, &t) ||
                 write_raw(argv[6], "tgt_ids.i32", ids, (size_t)k * 4))
            rc = fail("target ids");
        ac_arena_free(&a);
        if (rc) goto done;
    }
    float *wav;
    int64_t n_wav;
    int shift;
    if (vevo2_convert(m, src, (int64_t)n, tgt, (int64_t)nt, &o, &wav, &n_wav, &shift, &t)) {
        rc = fail("convert");
        goto done;
    }
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
