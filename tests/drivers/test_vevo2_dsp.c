/* The DSP front end of Vevo2 (resampler, chroma, time rescale) on inputs
 * the reference writes, for tests/ref/test_vevo2_dsp.py to compare:
 *   test_vevo2_dsp resample ORIG NEW IN OUT
 *   test_vevo2_dsp chroma RATE N_FFT HOP N_CHROMA FRAMES IN OUT
 *   test_vevo2_dsp interp T_IN C T_OUT IN OUT
 * IN and OUT are raw little-endian f32; chroma prints "tuning X". Exit 0
 * on success, 1 with the error on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio/chroma.h"
#include "audio/resample_sinc.h"
#include "audioc.h"
#include "base/arena.h"
#include "base/file.h"

/* What a mode made: N floats in OUT (malloc'd). */
typedef struct {
    float *out;
    int64_t n;
} result;

static ac_status resample(char **a, const float *x, int64_t n, ac_arena *arena, result *res)
{
    ac_sinc_resampler r;
    ac_status st = ac_sinc_resampler_init(&r, atoi(a[0]), atoi(a[1]));
    if (!st) {
        res->n = ac_sinc_resampled_len(&r, n);
        res->out = malloc((size_t)(res->n > 0 ? res->n : 1) * sizeof *res->out);
        st = ac_sinc_resample(&r, x, n, arena, res->out);
    }
    ac_sinc_resampler_free(&r);
    return st;
}

static ac_status chroma(char **a, const float *x, int64_t n, ac_arena *arena, result *res)
{
    ac_chroma c;
    int64_t frames = atoll(a[4]);
    ac_status st = ac_chroma_init(&c, atoi(a[0]), atoi(a[1]), atoi(a[2]), atoi(a[3]));
    if (!st) {
        double tuning;
        res->n = frames * c.n_chroma;
        res->out = malloc((size_t)(res->n > 0 ? res->n : 1) * sizeof *res->out);
        st = ac_chroma_stft(&c, x, n, frames, arena, res->out, &tuning);
        if (!st) printf("tuning %.17g\n", tuning);
    }
    ac_chroma_free(&c);
    return st;
}

static ac_status interp(char **a, const float *x, int64_t n, ac_arena *arena, result *res)
{
    int64_t t_in = atoll(a[0]), C = atoll(a[1]), t_out = atoll(a[2]);
    if (n != t_in * C) {
        fprintf(stderr, "interp: %lld floats for %lld x %lld\n", (long long)n, (long long)t_in, (long long)C);
        return AC_ERR_ARG;
    }
    res->n = t_out * C;
    res->out = malloc((size_t)(res->n > 0 ? res->n : 1) * sizeof *res->out);
    return ac_frames_interp_linear(x, t_in, C, t_out, res->out);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int argc;
        ac_status (*run)(char **, const float *, int64_t, ac_arena *, result *);
    } modes[] = {{"resample", 6, resample}, {"chroma", 9, chroma}, {"interp", 7, interp}};
    ac_set_log_level(0);
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        if (argc != modes[m].argc || strcmp(argv[1], modes[m].name)) continue;
        char *bytes;
        size_t size;
        if (ac_read_file(argv[argc - 2], (size_t)1 << 31, &bytes, &size))
            return fprintf(stderr, "test_vevo2_dsp: %s\n", ac_last_error()), 1;
        ac_arena arena;
        ac_arena_init(&arena, 1 << 20);
        result res = {NULL, 0};
        ac_status st = modes[m].run(argv + 2, (const float *)bytes, (int64_t)(size / sizeof(float)), &arena, &res);
        int rc = 0;
        if (st) {
            fprintf(stderr, "test_vevo2_dsp %s: %s\n", argv[1], ac_last_error());
            rc = 1;
        } else {
            FILE *f = fopen(argv[argc - 1], "wb");
            rc = !f || fwrite(res.out, sizeof(float), (size_t)res.n, f) != (size_t)res.n;
            if (f && fclose(f)) rc = 1;
        }
        free(res.out);
        free(bytes);
        ac_arena_free(&arena);
        return rc;
    }
    fprintf(stderr, "usage: test_vevo2_dsp resample ORIG NEW IN OUT | chroma RATE N_FFT HOP N_CHROMA FRAMES IN OUT | "
                    "interp T_IN C T_OUT IN OUT\n");
    return 2;
}
