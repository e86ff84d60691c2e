/* The blocks of src/nn (and the newer tensor ops) against PyTorch goldens
 * (ref/nn_blocks_ref.py, written to the work folder first) and against
 * naive references here: grouped-query attention against attention over
 * explicitly repeated K/V, cached decoding against full recomputation,
 * KV reorder, per-head F16 K/V, feed-forward. Every check runs with 1 and
 * 2 threads and at every SIMD level the CPU has. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "io/tensor_file.h"
#include "nn/attention.h"
#include "nn/convnext.h"
#include "nn/ffn.h"
#include "test_util.h"

static uint32_t seed = 777;
static ac_tensor_file *golden;

static float *rnd(size_t n, float lo, float hi)
{
    float *x = malloc((n ? n : 1) * sizeof *x);
    fill_random(x, n, lo, hi, &seed);
    return x;
}

/* A golden F32 tensor with NUMEL elements, or NULL (a failed check). */
static const float *g(const char *name, size_t numel)
{
    const ac_tensor *t = golden ? ac_tensor_file_find(golden, name) : NULL;
    CHECK(t && t->dtype == AC_DTYPE_F32 && (size_t)t->numel == numel, "golden tensor %s (%zu values)", name, numel);
    return t && t->dtype == AC_DTYPE_F32 && (size_t)t->numel == numel ? t->data : NULL;
}

static void test_convnext_torch(void)
{
    size_t T = 23, C = 16, I = 48;
    const float *x = g("cnx.x", T * C), *dw = g("cnx.dw_w", C * 7), *want = g("cnx.y", T * C);
    const float *pw1 = g("cnx.pw1_w", I * C), *pw2 = g("cnx.pw2_w", C * I);
    if (!x || !dw || !want || !pw1 || !pw2) return;
    float dw_ours[16 * 7], *y = malloc(T * C * sizeof *y);
    ac_depthwise_weight_from_torch(dw, dw_ours, (int)C, 7);
    ac_mat m1 = ac_mat_f32(pw1, I, C), m2 = ac_mat_f32(pw2, C, I);
    ac_convnext b = {(int)C, 7, dw_ours, g("cnx.dw_b", C), g("cnx.ln_w", C), g("cnx.ln_b", C), 1e-6f,
                     &m1, &m2, g("cnx.pw1_b", I), g("cnx.pw2_b", C), g("cnx.gamma", C)};
    float *scratch = malloc(ac_convnext_scratch(&b, T) * sizeof *scratch);
    memcpy(y, x, T * C * sizeof *y);
    ac_convnext_forward(&b, y, T, scratch);
    double d = max_rel_diff(y, want, T * C);
    CHECK(d < 1e-5, "ConvNeXt block vs torch: %g", d);
    free(y), free(scratch);
}

static void test_attention_torch(void)
{
    enum { T = 11, D = 32, H = 4, G = 2, DK = 8 };
    const float *x = g("attn.x", T * D);
    const float *wq = g("attn.wq", H * DK * D), *wk = g("attn.wk", G * DK * D), *wv = g("attn.wv", G * DK * D);
    const float *wo = g("attn.wo", D * H * DK), *yc = g("attn.y_causal", T * D), *yb = g("attn.y_bidir", T * D);
    if (!x || !wq || !wk || !wv || !wo || !yc || !yb) return;
    ac_mat q = ac_mat_f32(wq, H * DK, D), k = ac_mat_f32(wk, G * DK, D), v = ac_mat_f32(wv, G * DK, D);
    ac_mat o = ac_mat_f32(wo, D, H * DK);
    ac_attn_weights w = {.wq = &q, .wk = &k, .wv = &v, .wo = &o, .bq = g("attn.bq", H * DK), .bk = g("attn.bk", G * DK),
                         .bv = g("attn.bv", G * DK)};
    ac_attn_opts opts = {.heads = H, .kv_heads = G, .head_dim = DK, .rope_theta = 10000.0f};
    float *scratch = malloc(ac_attn_layer_scratch(&opts, T, T) * sizeof *scratch), y[T * D];
    int shifted[T];
    for (int i = 0; i < T; i++) shifted[i] = i + 5;
    ac_attn_self(&opts, &w, x, T, NULL, &(ac_mask){.causal = 1}, y, scratch); /* positions 0..T-1 */
    CHECK(max_rel_diff(y, yc, T * D) < 1e-5, "causal GQA attention with RoPE vs torch: %g", max_rel_diff(y, yc, T * D));
    ac_attn_self(&opts, &w, x, T, shifted, NULL, y, scratch);
    CHECK(max_rel_diff(y, yb, T * D) < 1e-5, "bidirectional attention vs torch: %g", max_rel_diff(y, yb, T * D));

    /* cached decoding, one token a step, gives the causal rows */
    ac_arena a;
    ac_arena_init(&a, 1 << 16);
    ac_kv_cache c;
    CHECK(ac_kv_cache_init(&c, 1, 1, T, 0, G, DK, &a) == AC_OK, "cache");
    int beam = 0;
    for (int t = 0; t < T; t++) ac_attn_cached(&opts, &w, &c, 0, x + t * D, 1, &beam, &t, y + t * D, scratch);
    CHECK(max_rel_diff(y, yc, T * D) < 1e-5, "cached decoding vs torch: %g", max_rel_diff(y, yc, T * D));
    ac_arena_free(&a);
    free(scratch);
}

static void test_ops_torch(void)
{
    size_t R = 7, C = 40;
    const float *x = g("rms.x", R * C), *gm = g("rms.gamma", R * C), *want = g("rms.y", R * C);
    if (x && gm && want) {
        float y[7 * 40];
        ac_rmsnorm(x, y, R, C, gm, C, 1e-6f);
        CHECK(max_rel_diff(y, want, R * C) < 1e-5, "adaptive RMSNorm vs torch: %g", max_rel_diff(y, want, R * C));
    }
    const char *names[] = {"ct_a", "ct_b", "ct_c"};
    for (int i = 0; i < 3; i++) {
        char n[32];
        snprintf(n, sizeof n, "%s.shape", names[i]);
        const ac_tensor *st = golden ? ac_tensor_file_find(golden, n) : NULL;
        CHECK(st && st->dtype == AC_DTYPE_I64 && st->numel == 7, "%s", n);
        if (!st || st->dtype != AC_DTYPE_I64 || st->numel != 7) continue;
        int64_t v[7];
        memcpy(v, st->data, sizeof v);
        ac_convt1d_shape s = {(int)v[0], (int)v[1], (int)v[2], (int)v[3], (int)v[4], (int)v[5], (int)v[6]};
        size_t T = 9, To = ac_conv_transpose1d_out_len(&s, T), wn = (size_t)s.cin * s.cout * s.kernel;
        snprintf(n, sizeof n, "%s.x", names[i]);
        const float *cx = g(n, T * s.cin);
        snprintf(n, sizeof n, "%s.w", names[i]);
        const float *cw = g(n, wn);
        snprintf(n, sizeof n, "%s.b", names[i]);
        const float *cb = g(n, (size_t)s.cout);
        snprintf(n, sizeof n, "%s.y", names[i]);
        const float *cy = g(n, To * s.cout);
        if (!cx || !cw || !cb || !cy) continue;
        float *w = malloc(wn * sizeof *w), *y = malloc(To * s.cout * sizeof *y);
        float *z = malloc(ac_conv_transpose1d_scratch(&s, 1, T) * sizeof *z);
        ac_conv_transpose1d_weight_from_torch(cw, w, s.cin, s.cout, s.kernel);
        ac_conv_transpose1d(&s, cx, 1, T, w, cb, y, z);
        CHECK(max_rel_diff(y, cy, To * s.cout) < 1e-5, "ConvTranspose1d %s vs torch", names[i]);
        free(w), free(y), free(z);
    }
    const float *gx = g("gelu.x", 1001), *gy = g("gelu.y", 1001);
    if (gx && gy) {
        float y[1001];
        memcpy(y, gx, sizeof y);
        ac_gelu(y, 1001);
        CHECK(max_rel_diff(y, gy, 1001) < 1e-6, "GELU vs torch: %g", max_rel_diff(y, gy, 1001));
    }
}

/* Attention by its definition, one query head at a time, KV head h / (H/G). */
static void naive_attention(const float *q, size_t nq, const float *k, const float *v, size_t nk, int H, int G,
                            int dk, const unsigned char *keep, float *out)
{
    float s[256];
    for (size_t r = 0; r < nq; r++)
        for (int h = 0; h < H; h++) {
            int u = h / (H / G);
            float mx = -INFINITY, sum = 0;
            for (size_t j = 0; j < nk; j++) {
                float d = 0;
                for (int e = 0; e < dk; e++) d += q[(r * H + h) * dk + e] * k[(j * G + u) * dk + e];
                s[j] = keep && !keep[r * nk + j] ? -INFINITY : d / sqrtf((float)dk);
                mx = fmaxf(mx, s[j]);
            }
            for (size_t j = 0; j < nk; j++) sum += (s[j] = s[j] == -INFINITY ? 0 : expf(s[j] - mx));
            for (int e = 0; e < dk; e++) {
                float acc = 0;
                for (size_t j = 0; j < nk; j++) acc += s[j] / sum * v[(j * G + u) * dk + e];
                out[(r * H + h) * dk + e] = acc;
            }
        }
}

static void test_gqa(void)
{
    enum { H = 6, G = 2, DK = 20 };
    const size_t sizes[][2] = {{1, 1}, {1, 37}, {3, 50}, {9, 9}, {40, 61}};
    for (size_t s = 0; s < 5; s++) {
        size_t nq = sizes[s][0], nk = sizes[s][1];
        float *q = rnd(nq * H * DK, -1, 1), *k = rnd(nk * G * DK, -1, 1), *v = rnd(nk * G * DK, -1, 1);
        float *ref = malloc(nq * H * DK * sizeof *ref), *got = malloc(nq * H * DK * sizeof *got);
        float *kr = malloc(nk * H * DK * sizeof *kr), *vr = malloc(nk * H * DK * sizeof *vr);
        unsigned char *keep = malloc(nq * nk);
        for (size_t i = 0; i < nq * nk; i++) keep[i] = (i * 5 + 1) % 7 != 0;
        keep[0] = 1;
        ac_attn_opts gqa = {.heads = H, .kv_heads = G, .head_dim = DK}, mha = {.heads = H, .kv_heads = H, .head_dim = DK};
        float *scratch = malloc(ac_attention_scratch(&mha, nq, nk) * sizeof *scratch);
        ac_mask mask = {.keep = keep, .ld = nk};
        naive_attention(q, nq, k, v, nk, H, G, DK, keep, ref);
        ac_attention(&gqa, q, nq, H * DK, &(ac_attn_kv){.n = nk, .k = k, .v = v, .ld = G * DK}, &mask, got,
                     H * DK, scratch);
        CHECK(max_rel_diff(got, ref, nq * H * DK) < 1e-5, "GQA %zux%zu vs naive", nq, nk);
        /* the same as multi-head attention over K/V repeated per query head */
        for (size_t j = 0; j < nk; j++)
            for (int h = 0; h < H; h++) {
                memcpy(kr + (j * H + h) * DK, k + (j * G + h / (H / G)) * DK, DK * sizeof *kr);
                memcpy(vr + (j * H + h) * DK, v + (j * G + h / (H / G)) * DK, DK * sizeof *vr);
            }
        float *rep = malloc(nq * H * DK * sizeof *rep);
        ac_attention(&mha, q, nq, H * DK, &(ac_attn_kv){.n = nk, .k = kr, .v = vr, .ld = H * DK}, &mask, rep,
                     H * DK, scratch);
        CHECK(max_rel_diff(got, rep, nq * H * DK) < 1e-5, "GQA %zux%zu vs repeated K/V", nq, nk);
        /* per-head K and V^T, F32 exactly the rows' answer, F16 close */
        ac_arena a;
        ac_arena_init(&a, 1 << 16);
        ac_mat kh[G], vt[G];
        for (int f16 = 0; f16 <= 1; f16++) {
            CHECK(ac_attn_kv_pack(&gqa, k, v, nk, G * DK, f16 ? AC_DTYPE_F16 : AC_DTYPE_F32, &a, kh, vt) == AC_OK,
                  "pack");
            ac_attention(&gqa, q, nq, H * DK, &(ac_attn_kv){.n = nk, .kh = kh, .vt = vt}, &mask, rep, H * DK,
                         scratch);
            double d = max_rel_diff(rep, ref, nq * H * DK);
            CHECK(d < (f16 ? 2e-3 : 1e-5), "per-head %s K/V %zux%zu: %g", f16 ? "F16" : "F32", nq, nk, d);
        }
        ac_arena_free(&a);
        free(q), free(k), free(v), free(ref), free(got), free(kr), free(vr), free(keep), free(scratch), free(rep);
    }
    /* more KV heads than the scratch's slots (20: the heads go in waves) */
    enum { H2 = 20, NQ = 40, NK = 61 };
    ac_attn_opts many = {.heads = H2, .kv_heads = H2, .head_dim = DK};
    float *q = rnd(NQ * H2 * DK, -1, 1), *k = rnd(NK * H2 * DK, -1, 1), *v = rnd(NK * H2 * DK, -1, 1);
    float *ref = malloc(NQ * H2 * DK * sizeof *ref), *got = malloc(NQ * H2 * DK * sizeof *got);
    float *scratch = malloc(ac_attention_scratch(&many, NQ, NK) * sizeof *scratch);
    naive_attention(q, NQ, k, v, NK, H2, H2, DK, NULL, ref);
    ac_attention(&many, q, NQ, H2 * DK, &(ac_attn_kv){.n = NK, .k = k, .v = v, .ld = H2 * DK}, NULL, got, H2 * DK,
                 scratch);
    CHECK(max_rel_diff(got, ref, NQ * H2 * DK) < 1e-5, "%d heads vs naive", H2);
    free(q), free(k), free(v), free(ref), free(got), free(scratch);
}

/* Attention over many rows with the tiles on (attend_tiled, AVX-512),
 * against its definition in double: every kind of mask, fully masked rows,
 * rows and keys off the tiles' sizes, GQA, head_dim 64 and others. The
 * tiles sum Q.K^T over head_dim and P.V over the keys in a different order
 * than a BLAS, and f32 rounding of a sum of N terms grows as sqrt(N) eps:
 * 1e-5 of the output's largest magnitude is ~100x that at these sizes and
 * still catches any wrong key, row or mask. Results are the same bits on 1
 * and 2 threads. */
static void attention_def(const float *q, size_t nq, const float *k, const float *v, size_t nk, int H, int G, int dk,
                          const ac_mask *m, double *out)
{
    double *s = malloc(nk * sizeof *s);
    for (size_t r = 0; r < nq; r++)
        for (int h = 0; h < H; h++) {
            int u = h / (H / G);
            size_t R = m->row0 + r;
            double mx = -INFINITY, sum = 0;
            for (size_t j = 0; j < nk; j++) {
                double d = 0;
                for (int e = 0; e < dk; e++) d += (double)q[(r * H + h) * dk + e] * k[(j * G + u) * dk + e];
                int sees = (!m->causal || j <= R) && (!m->keys || j < m->keys) && (!m->keep || m->keep[R * m->ld + j]);
                s[j] = sees ? d / sqrt((double)dk) + (m->add ? m->add[h * m->head_stride + R * m->ld + j] : 0)
                            : -INFINITY;
                mx = fmax(mx, s[j]);
            }
            for (size_t j = 0; j < nk; j++) sum += (s[j] = s[j] == -INFINITY ? 0 : exp(s[j] - mx));
            for (int e = 0; e < dk; e++) {
                double acc = 0;
                for (size_t j = 0; j < nk && mx > -INFINITY; j++) acc += s[j] / sum * v[(j * G + u) * dk + e];
                out[(r * H + h) * dk + e] = acc;
            }
        }
    free(s);
}

static void test_attention_tiles(void)
{
    /* rows, keys, heads, KV heads, head_dim */
    const int shapes[][5] = {{37, 53, 4, 2, 64}, {100, 131, 2, 2, 40}, {29, 300, 4, 1, 64},
                             {64, 64, 2, 2, 128}, {7, 33, 3, 3, 24},   {61, 97, 6, 3, 64}};
    int threads = ac_get_threads();
    for (size_t sh = 0; sh < sizeof shapes / sizeof *shapes; sh++) {
        size_t nq = (size_t)shapes[sh][0], nk = (size_t)shapes[sh][1], row0 = nk - nq;
        int H = shapes[sh][2], G = shapes[sh][3], DK = shapes[sh][4];
        size_t n = nq * (size_t)(H * DK);
        float *q = rnd(n, -1, 1), *k = rnd(nk * G * DK, -1, 1), *v = rnd(nk * G * DK, -1, 1);
        float *got = malloc(n * sizeof *got), *again = malloc(n * sizeof *again);
        float *add = malloc((size_t)H * nk * nk * sizeof *add);
        unsigned char *keep = malloc(nk * nk);
        for (size_t i = 0; i < nk * nk; i++) keep[i] = (i * 5 + 1) % 7 != 0;
        memset(keep + (row0 + 2) * nk, 0, nk); /* a row that sees nothing */
        for (size_t i = 0; i < (size_t)H * nk * nk; i++) add[i] = i % 11 == 0 ? -INFINITY : (float)(i % 5) * 0.3f;
        for (size_t j = 0; j < nk; j++) add[(row0 + 1) * nk + j] = -INFINITY; /* so does this one, in head 0 */
        const ac_mask masks[] = {{0},
                                 {.causal = 1, .row0 = row0},
                                 {.keys = nk - nk / 3},
                                 {.causal = 1, .row0 = row0, .keys = nk - 5},
                                 {.keep = keep, .ld = nk, .row0 = row0},
                                 {.add = add, .ld = nk, .head_stride = nk * nk, .row0 = row0}};
        ac_attn_opts o = {.heads = H, .kv_heads = G, .head_dim = DK, .tiles = 1};
        float *scratch = malloc(ac_attention_scratch(&o, nq, nk) * sizeof *scratch);
        double *want = malloc(n * sizeof *want);
        for (size_t mi = 0; mi < sizeof masks / sizeof *masks; mi++) {
            ac_attn_kv kv = {.n = nk, .k = k, .v = v, .ld = (size_t)(G * DK)};
            attention_def(q, nq, k, v, nk, H, G, DK, &masks[mi], want);
            ac_attention(&o, q, nq, (size_t)(H * DK), &kv, &masks[mi], got, (size_t)(H * DK), scratch);
            double top = 0, err = 0;
            for (size_t i = 0; i < n; i++) top = fmax(top, fabs(want[i]));
            for (size_t i = 0; i < n; i++) err = fmax(err, fabs(got[i] - want[i]));
            CHECK(err <= 1e-5 * top, "attention %zux%zu, %d/%d heads of %d, mask %zu: %g of %g", nq, nk, H, G, DK, mi,
                  err, top);
            ac_set_threads(3 - threads);
            ac_attention(&o, q, nq, (size_t)(H * DK), &kv, &masks[mi], again, (size_t)(H * DK), scratch);
            ac_set_threads(threads);
            CHECK(!memcmp(got, again, n * sizeof *got), "attention %zux%zu mask %zu: 1 and 2 threads differ", nq, nk,
                  mi);
        }
        free(q), free(k), free(v), free(got), free(again), free(add), free(keep), free(scratch), free(want);
    }
}

/* A layer of cached attention for the cache tests: two sequences X[B][T]
 * of rows and their causal self-attention FULL[B], recomputed from the
 * start (what every cached row must answer). */
enum { CD = 24, CH = 4, CG = 2, CDK = 6, CT = 10, CB = 2 };
typedef struct {
    float *wf[4], *bq, *x, *scratch, full[CB][CT * CD], got[CB][CT * CD];
    ac_mat q, k, v, o;
    ac_attn_weights w;
    ac_attn_opts opts;
    ac_arena arena;
    ac_kv_cache c;
} cache_case;

/* PROMPT: the first rows both sequences share */
static void cache_case_init(cache_case *t, int prompt)
{
    for (int i = 0; i < 4; i++) t->wf[i] = rnd((i == 1 || i == 2 ? CG : CH) * CDK * CD, -0.4f, 0.4f);
    t->bq = rnd(CH * CDK, -0.1f, 0.1f), t->x = rnd(CB * CT * CD, -1, 1);
    memcpy(t->x + CT * CD, t->x, (size_t)prompt * CD * sizeof *t->x);
    t->q = ac_mat_f32(t->wf[0], CH * CDK, CD), t->k = ac_mat_f32(t->wf[1], CG * CDK, CD);
    t->v = ac_mat_f32(t->wf[2], CG * CDK, CD), t->o = ac_mat_f32(t->wf[3], CD, CH * CDK);
    t->w = (ac_attn_weights){.wq = &t->q, .wk = &t->k, .wv = &t->v, .wo = &t->o, .bq = t->bq};
    t->opts = (ac_attn_opts){.heads = CH, .kv_heads = CG, .head_dim = CDK, .rope_theta = 1e6f};
    t->scratch = malloc(ac_attn_layer_scratch(&t->opts, CT, CT) * sizeof *t->scratch);
    int pos[CT];
    for (int i = 0; i < CT; i++) pos[i] = i;
    for (int b = 0; b < CB; b++)
        ac_attn_self(&t->opts, &t->w, t->x + b * CT * CD, CT, pos, &(ac_mask){.causal = 1}, t->full[b], t->scratch);
    ac_arena_init(&t->arena, 1 << 16);
}

/* Both beams' rows at position P in one call (layer L of the cache) */
static ac_status cache_case_step(cache_case *t, int l, int p)
{
    int bs[CB] = {0, 1}, ps[CB] = {p, p};
    float rows[CB * CD], out[CB * CD];
    for (int b = 0; b < CB; b++) memcpy(rows + b * CD, t->x + (b * CT + p) * CD, CD * sizeof *rows);
    ac_status st = ac_attn_cached(&t->opts, &t->w, &t->c, l, rows, CB, bs, ps, out, t->scratch);
    for (int b = 0; b < CB; b++) memcpy(t->got[b] + p * CD, out + b * CD, CD * sizeof *out);
    return st;
}

static void cache_case_free(cache_case *t)
{
    ac_arena_free(&t->arena);
    for (int i = 0; i < 4; i++) free(t->wf[i]);
    free(t->bq), free(t->x), free(t->scratch);
}

/* Two beams decode different tokens; beam search then keeps beam 1 twice:
 * the cache answers as recomputing each sequence from its start. */
static void test_cache_and_reorder(void)
{
    static cache_case t;
    cache_case_init(&t, 0);
    CHECK(ac_kv_cache_init(&t.c, 2, CB, CT, 0, CG, CDK, &t.arena) == AC_OK, "cache");
    /* beam 0's first 4 rows in one call, beam 1's a row at a time; then steps with both beams */
    int beams0[4] = {0, 0, 0, 0}, pos[4] = {0, 1, 2, 3}, one = 1;
    ac_attn_cached(&t.opts, &t.w, &t.c, 1, t.x, 4, beams0, pos, t.got[0], t.scratch);
    for (int p = 0; p < 4; p++)
        ac_attn_cached(&t.opts, &t.w, &t.c, 1, t.x + (CT + p) * CD, 1, &one, &p, t.got[1] + p * CD, t.scratch);
    for (int p = 4; p < CT; p++) cache_case_step(&t, 1, p);
    for (int b = 0; b < CB; b++)
        CHECK(max_rel_diff(t.got[b], t.full[b], CT * CD) < 1e-5, "beam %d: cached = recomputed (%g)", b,
              max_rel_diff(t.got[b], t.full[b], CT * CD));
    int parent[CB] = {1, 1};
    size_t step = ac_kv_cache_head_step(&t.c, 5);
    float before[CG][CDK];
    for (int h = 0; h < CG; h++) memcpy(before[h], ac_kv_cache_v(&t.c, 1, 1, 5) + h * step, sizeof before[h]);
    ac_kv_cache_reorder(&t.c, parent, CT);
    for (int h = 0; h < CG; h++)
        CHECK(memcmp(ac_kv_cache_v(&t.c, 1, 0, 5) + h * step, before[h], sizeof before[h]) == 0 &&
                  memcmp(ac_kv_cache_k(&t.c, 1, 0, 8) + h * step, ac_kv_cache_k(&t.c, 1, 1, 8) + h * step,
                         sizeof before[h]) == 0,
              "reorder copies the parent's rows (KV head %d)", h);
    int bad = CT;
    CHECK(ac_attn_cached(&t.opts, &t.w, &t.c, 1, t.x, 1, parent, &bad, t.got[0], t.scratch) != AC_OK &&
              error_has("position"),
          "a position past the capacity is an error");
    cache_case_free(&t);
}

/* A prompt of P rows held once for both beams (nn/kv_cache's shared
 * positions), then each beam its own tokens: every row answers as
 * recomputing the prompt and that beam's tokens from the start, before and
 * after a reorder, and no beam but 0 may write the prompt. */
static void test_cache_shared_prompt(void)
{
    enum { P = 4 };
    static cache_case t;
    cache_case_init(&t, P);
    CHECK(ac_kv_cache_init(&t.c, 1, CB, CT, P, CG, CDK, &t.arena) == AC_OK, "cache with a shared prompt");
    int zeros[P] = {0}, pos[P] = {0, 1, 2, 3}, one = 1;
    CHECK(ac_attn_cached(&t.opts, &t.w, &t.c, 0, t.x, P, zeros, pos, t.got[0], t.scratch) == AC_OK, "prompt");
    memcpy(t.got[1], t.got[0], P * CD * sizeof **t.got);
    for (int p = P; p < CT; p++) CHECK(cache_case_step(&t, 0, p) == AC_OK, "step %d", p);
    for (int b = 0; b < CB; b++)
        CHECK(max_rel_diff(t.got[b], t.full[b], CT * CD) < 1e-5, "beam %d over the shared prompt = recomputed (%g)",
              b, max_rel_diff(t.got[b], t.full[b], CT * CD));
    /* beam 0 takes beam 1's line: its next row answers as beam 1's sequence */
    int parent[CB] = {1, 1}, last = CT - 1;
    ac_kv_cache_reorder(&t.c, parent, last);
    float out[CD];
    CHECK(ac_attn_cached(&t.opts, &t.w, &t.c, 0, t.x + (CT + last) * CD, 1, zeros, &last, out, t.scratch) == AC_OK &&
              max_rel_diff(out, t.full[1] + last * CD, CD) < 1e-5,
          "after reorder, beam 0 continues beam 1 (%g)", max_rel_diff(out, t.full[1] + last * CD, CD));
    int early = 2;
    CHECK(ac_attn_cached(&t.opts, &t.w, &t.c, 0, t.x, 1, &one, &early, out, t.scratch) != AC_OK &&
              error_has("shared"),
          "beam 1 may not write a shared position");
    CHECK(ac_kv_cache_init(&t.c, 1, CB, CT, CT + 1, CG, CDK, &t.arena) != AC_OK,
          "more shared positions than the capacity");
    cache_case_free(&t);
}

/* A prompt's rows in one call attend as one causal block (the tiles or the
 * products of many rows where there are more than a few): two calls of 5
 * rows, the second from position 5, answer as recomputing the sequence,
 * with the tiles off, on in f32, and on bf16 operands (rounded: 1e-2); the
 * same over a shared prompt, whose second call spans both parts of the
 * cache and so goes a row at a time. */
static void test_cache_prompt_block(void)
{
    enum { P = 5 };
    const struct { int tiles, bf16; double tol; } kinds[] = {{0, 0, 1e-5}, {1, 0, 1e-5}, {1, 1, 1e-2}};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        for (int shared = 0; shared <= P; shared += P) {
            static cache_case t;
            cache_case_init(&t, 0);
            t.opts.tiles = kinds[i].tiles, t.opts.bf16 = kinds[i].bf16;
            CHECK(ac_kv_cache_init(&t.c, 1, 1, CT, shared, CG, CDK, &t.arena) == AC_OK, "cache");
            int zeros[P] = {0}, first[P], second[P];
            for (int r = 0; r < P; r++) first[r] = r, second[r] = P + r;
            CHECK(ac_attn_cached(&t.opts, &t.w, &t.c, 0, t.x, P, zeros, first, t.got[0], t.scratch) == AC_OK &&
                      ac_attn_cached(&t.opts, &t.w, &t.c, 0, t.x + P * CD, P, zeros, second, t.got[0] + P * CD,
                                     t.scratch) == AC_OK,
                  "two blocks of rows");
            double d = max_rel_diff(t.got[0], t.full[0], CT * CD);
            CHECK(d < kinds[i].tol, "prompt blocks (tiles %d, bf16 %d, %d shared) = recomputed: %g of %g",
                  kinds[i].tiles, kinds[i].bf16, shared, d, kinds[i].tol);
            cache_case_free(&t);
        }
}

static void test_ffn(void)
{
    enum { R = 5, D = 12, F = 30 };
    float *x = rnd(R * D, -1, 1), *wu = rnd(F * D, -0.5f, 0.5f), *wg = rnd(F * D, -0.5f, 0.5f);
    float *wd = rnd(D * F, -0.5f, 0.5f), *bu = rnd(F, -0.1f, 0.1f), *bd = rnd(D, -0.1f, 0.1f);
    ac_mat up = ac_mat_f32(wu, F, D), gate = ac_mat_f32(wg, F, D), down = ac_mat_f32(wd, D, F);
    for (int gated = 0; gated <= 1; gated++)
        for (int act = AC_ACT_RELU; act <= AC_ACT_GELU; act++) {
            ac_ffn f = {&up, gated ? &gate : NULL, &down, bu, NULL, bd, (ac_act)act};
            float y[R * D], want[R * D], *scratch = malloc(ac_ffn_scratch(&f, R) * sizeof *scratch);
            ac_ffn_forward(&f, x, R, y, scratch);
            for (int r = 0; r < R; r++)
                for (int o = 0; o < D; o++) {
                    double acc = bd[o];
                    for (int i = 0; i < F; i++) {
                        double u = bu[i], gv = 0;
                        for (int c = 0; c < D; c++) u += wu[i * D + c] * x[r * D + c];
                        for (int c = 0; c < D; c++) gv += wg[i * D + c] * x[r * D + c];
                        double a = gated ? gv : u;
                        a = act == AC_ACT_RELU ? (a > 0 ? a : 0) : act == AC_ACT_SILU ? a / (1 + exp(-a))
                                                                                     : 0.5 * a * (1 + erf(a / sqrt(2)));
                        acc += wd[o * F + i] * (gated ? a * u : a);
                    }
                    want[r * D + o] = (float)acc;
                }
            CHECK(max_rel_diff(y, want, R * D) < 1e-5, "ffn gated=%d act=%d", gated, act);
            free(scratch);
        }
    free(x), free(wu), free(wg), free(wd), free(bu), free(bd);
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    ac_status st = ac_tensor_file_open(work_path("nn_blocks.safetensors"), &golden);
    CHECK(st == AC_OK, "nn_blocks.safetensors (made by ref/nn_blocks_ref.py): %s", ac_last_error());
    for (int simd = AC_SIMD_LEVELS - 1; simd >= AC_SIMD_NONE; simd--) {
        ac_kernels_set_simd(simd);
        if (ac_kernels_simd() != simd) continue;
        for (int threads = 1; threads <= 2; threads++) {
            ac_set_threads(threads);
            fprintf(stderr, "-- simd %d, %d threads\n", simd, threads);
            RUN(test_convnext_torch);
            RUN(test_attention_torch);
            RUN(test_ops_torch);
            RUN(test_gqa);
            RUN(test_attention_tiles);
            RUN(test_cache_and_reorder);
            RUN(test_cache_shared_prompt);
            RUN(test_cache_prompt_block);
            RUN(test_ffn);
        }
    }
    if (golden) ac_tensor_file_close(golden);
    return test_finish();
}
