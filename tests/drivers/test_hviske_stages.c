/* Hviske ASR stage by stage against the PyTorch reference's dumps:
 *   test_hviske_stages MODEL_DIR AUDIO.wav GOLDEN_DIR
 * GOLDEN_DIR holds the .npy files and result.json of tests/ref/hviske_asr/
 * golden.py for the same model and audio (16 kHz mono, the first chunk).
 * Also checks that the KV-cached decoder gives the ids of recomputing the
 * whole prefix at every step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/reader.h"
#include "base/arena.h"
#include "models/hviske_asr/decoder.h"
#include "models/hviske_asr/frontend.h"
#include "models/hviske_asr/transcribe.h"
#include "nn/decode.h"
#include "nn/sampler.h"
#include "test_util.h"

static const char *golden_dir;

/* A float32 C-order .npy file: its values and element count. */
static float *load_npy(const char *name, size_t *n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", golden_dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char head[10];
    float *data = NULL;
    if (fread(head, 1, 10, f) == 10 && memcmp(head, "\x93NUMPY", 6) == 0) {
        size_t hlen = head[8] | head[9] << 8;
        char *h = calloc(1, hlen + 1);
        if (h && fread(h, 1, hlen, f) == hlen && strstr(h, "'<f4'") && strstr(h, "'fortran_order': False")) {
            size_t count = 1;
            const char *p = strstr(h, "'shape': (") + 10;
            while (*p && *p != ')') {
                count *= strtoul(p, (char **)&p, 10);
                while (*p == ',' || *p == ' ') p++;
            }
            data = malloc(count * sizeof *data + 1);
            if (data && fread(data, sizeof *data, count, f) == count) *n = count;
            else free(data), data = NULL;
        }
        free(h);
    }
    fclose(f);
    return data;
}

/* max |a - b| / max(1e-6, max |b|): error relative to the tensor's scale. */
static double scaled_diff(const float *a, const float *b, size_t n)
{
    double d = 0, m = 1e-6;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - b[i]));
        m = fmax(m, fabs((double)b[i]));
    }
    return d / m;
}

static void compare(const char *name, const float *got, size_t n, double tol)
{
    size_t want_n = 0;
    float *want = load_npy(name, &want_n);
    CHECK(want != NULL, "%s: golden missing", name);
    if (!want) return;
    CHECK(want_n == n, "%s: %zu values, golden %zu", name, n, want_n);
    if (want_n == n) {
        double d = scaled_diff(got, want, n);
        CHECK(d <= tol, "%s: scaled difference %.3g > %.3g", name, d, tol);
        fprintf(stderr, "  %-22s %8zu values, scaled difference %.2e (tolerance %.0e)\n", name, n, d, tol);
    }
    free(want);
}

/* The encoder's traced stages against the goldens: "subsampling.npy",
 * "layer_I.npy", "encoder_proj.npy". */
static void compare_stage(void *user, const char *name, int layer, const void *data, size_t bytes)
{
    char file[64];
    if (layer >= 0) snprintf(file, sizeof file, "%s_%d.npy", name, layer);
    else snprintf(file, sizeof file, "%s.npy", name);
    compare(file, data, bytes / sizeof(float), 1e-4);
    ++*(int *)user;
}

/* Greedy ids recomputing every step from the prompt (no cache reuse). */
static int greedy_recompute(const hviske_model *m, const hviske_encoded *e, const int *prompt, int np, int max_new,
                            int *ids, ac_arena *a)
{
    int V = m->cfg.vocab, seq[512], beam[512], pos[512], n = 0;
    float *lp = malloc((size_t)V * sizeof *lp);
    memcpy(seq, prompt, (size_t)np * sizeof *seq);
    for (int i = 0; i < 512; i++) beam[i] = 0, pos[i] = i;
    for (; n < max_new; n++) {
        hviske_decoder *d;
        if (hviske_decoder_new(m, e->proj, e->T, e->T_valid, 1, np + n + 1, np + n, a, &d) ||
            hviske_decoder_forward(d, seq, beam, pos, np + n, 1, lp))
            break;
        int best = 0;
        for (int v = 1; v < V; v++)
            if (lp[v] > lp[best]) best = v;
        if (best == m->cfg.eos) break;
        ids[n] = seq[np + n] = best;
    }
    free(lp);
    return n;
}

int main(int argc, char **argv)
{
    test_init(0, argv);
    ac_set_log_level(1);
    if (argc != 4) {
        fprintf(stderr, "usage: test_hviske_stages MODEL_DIR AUDIO.wav GOLDEN_DIR\n");
        return 2;
    }
    golden_dir = argv[3];
    hviske_model *m;
    if (hviske_load(argv[1], test_weight_type(), &m)) {
        fprintf(stderr, "load: %s\n", ac_last_error());
        return 1;
    }
    ac_audio_reader *r;
    if (ac_audio_open_file(argv[2], 16000, &r)) {
        fprintf(stderr, "audio: %s\n", ac_last_error());
        return 1;
    }
    /* the first chunk, as golden.py dumps it */
    size_t cap = (size_t)(m->cfg.max_clip_s * 16000) + 1, n = 0;
    float *x = malloc(cap * sizeof *x);
    ac_audio_read(r, x, cap, &n);
    int at_end = n < cap;
    ac_audio_close(r);
    int64_t end = hviske_split(&m->cfg, x, 0, (int64_t)n, at_end);

    ac_arena a;
    ac_arena_init(&a, 1 << 20);
    float *feat;
    int64_t T, Tv;
    CHECK(hviske_features(m, x, end, &a, &feat, &T, &Tv) == AC_OK, "features: %s", ac_last_error());
    compare("features.npy", feat, (size_t)(T * m->cfg.n_mels), 1e-4);

    hviske_encoded e;
    int traced = 0;
    ac_trace trace = {.fn = compare_stage, .user = &traced};
    CHECK(hviske_encode(m, feat, T, Tv, &trace, &a, &e) == AC_OK, "encode: %s", ac_last_error());
    CHECK(traced == m->cfg.n_layers + 2, "%d encoder stages traced (subsampling, %d layers, projection)", traced,
          m->cfg.n_layers);

    int prompt[16], np;
    CHECK(hviske_prompt(m, "da", 1, 1, prompt, &np) == AC_OK, "prompt");
    hviske_decoder *d;
    int beam[16] = {0}, pos[16];
    for (int i = 0; i < np; i++) pos[i] = i;
    float *lp = malloc((size_t)m->cfg.vocab * sizeof *lp);
    CHECK(hviske_decoder_new(m, e.proj, e.T, e.T_valid, 1, 128, np, &a, &d) == AC_OK, "decoder");
    CHECK(hviske_decoder_forward(d, prompt, beam, pos, np, 1, lp) == AC_OK, "prefill");
    compare("prefill_logprobs.npy", lp, (size_t)m->cfg.vocab, 1e-4);
    /* the sampling distribution golden.py dumps: T 0.8, top-k 20, top-p 0.9 */
    ac_sampler smp;
    ac_sampler_options so = ac_sampler_defaults();
    so.temperature = 0.8f, so.top_k = 20, so.top_p = 0.9f;
    int n_kept = 0;
    CHECK(ac_sampler_init(&smp, m->cfg.vocab, 0) == AC_OK && ac_sampler_probs(&smp, &so, lp, NULL, 0, 0, &n_kept) == AC_OK,
          "sampling distribution: %s", ac_last_error());
    const float *probs = smp.probs;
    size_t gn = 0;
    float *gp = load_npy("sampling_probs.npy", &gn);
    if (gp && gn == (size_t)m->cfg.vocab) {
        double dmax = 0;
        int support = 1;
        for (size_t i = 0; i < gn; i++) {
            dmax = fmax(dmax, fabs(probs[i] - gp[i]));
            support &= (probs[i] > 0) == (gp[i] > 0);
        }
        CHECK(dmax <= 1e-4 && support, "sampling distribution: max diff %.3g, same support %d", dmax, support);
        fprintf(stderr, "  %-22s max abs difference %.2e, same support %d\n", "sampling_probs.npy", dmax, support);
    }
    free(gp);
    ac_sampler_free(&smp);

    /* KV cache: greedy with the cache equals recomputing the prefix */
    hviske_options o = {.language = "da", .punctuation = 1, .dummy_prefix = 1, .decode = ac_decode_defaults()};
    o.decode.max_new_tokens = 24;
    hviske_chunk_result cr;
    CHECK(hviske_transcribe_chunk(m, x, end, &o, &a, &cr) == AC_OK, "transcribe: %s", ac_last_error());
    int ids[64];
    int nr = greedy_recompute(m, &e, prompt, np, 24, ids, &a);
    CHECK(nr == cr.n_tokens && memcmp(ids, cr.tokens, (size_t)nr * sizeof *ids) == 0,
          "cached greedy (%d ids) differs from recomputed (%d ids)", cr.n_tokens, nr);
    fprintf(stderr, "  kv cache vs recompute: %d ids, %s\n", nr, nr == cr.n_tokens ? "same" : "DIFFERENT");
    hviske_chunk_result_free(&cr);

    free(lp), free(x);
    ac_arena_free(&a);
    hviske_free(m);
    return test_finish();
}
