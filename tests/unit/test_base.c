/* src/base: half/bfloat16 conversions, arena, thread pool, errors, floatvec, random numbers. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audioc.h"
#include "base/arena.h"
#include "base/error.h"
#include "base/f16.h"
#include "base/mem.h"
#include "base/rng.h"
#include "base/threadpool.h"
#include "test_util.h"

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static int f16_is_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff); }

static void test_f16_known(void)
{
    static const struct {
        float f;
        uint16_t h;
    } exact[] = {
        {0.0f, 0x0000},          {-0.0f, 0x8000},          {1.0f, 0x3c00},
        {-2.0f, 0xc000},         {0.5f, 0x3800},           {65504.0f, 0x7bff},
        {0x1p-24f, 0x0001},      {0x1p-14f, 0x0400},       {1023 * 0x1p-24f, 0x03ff},
        {-0x1p-24f, 0x8001},     {INFINITY, 0x7c00},       {-INFINITY, 0xfc00},
        {1.0f + 0x1p-10f, 0x3c01},
    };
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++) {
        uint16_t h = ac_f32_to_f16(exact[i].f);
        CHECK(h == exact[i].h, "f32->f16(%g) = 0x%04x, want 0x%04x", exact[i].f, h, exact[i].h);
        float back = ac_f16_to_f32(exact[i].h);
        CHECK(back == exact[i].f && signbit(back) == signbit(exact[i].f), "f16->f32(0x%04x) = %g",
              exact[i].h, back);
    }
    /* round to nearest, ties to even */
    static const struct {
        float f;
        uint16_t h;
    } rounded[] = {
        {1.0f + 0x1p-11f, 0x3c00},             /* tie, 0x3c00 even */
        {1.0f + 3 * 0x1p-11f, 0x3c02},         /* tie, 0x3c01 odd -> up */
        {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01},  /* just above the tie */
        {1.0f + 0x1p-11f - 0x1p-20f, 0x3c00},  /* just below */
        {65519.0f, 0x7bff},                    /* below the tie with 65536 */
        {65520.0f, 0x7c00},                    /* tie -> even = infinity */
        {1e6f, 0x7c00},                        {-1e6f, 0xfc00},
        {0x1p-25f, 0x0000},                    /* subnormal tie -> 0 */
        {3 * 0x1p-25f, 0x0002},                /* 1.5 ulp -> 2 */
        {5 * 0x1p-25f, 0x0002},                /* 2.5 ulp -> 2 */
        {0x1p-25f + 0x1p-40f, 0x0001},         /* above the tie */
        {2047 * 0x1p-25f, 0x0400},             /* 1023.5 ulp -> first normal */
        {0x1p-26f, 0x0000},                    {-0x1p-26f, 0x8000},
    };
    for (size_t i = 0; i < sizeof rounded / sizeof *rounded; i++) {
        uint16_t h = ac_f32_to_f16(rounded[i].f);
        CHECK(h == rounded[i].h, "f32->f16(%.9g) = 0x%04x, want 0x%04x", rounded[i].f, h, rounded[i].h);
    }
    CHECK(f16_is_nan(ac_f32_to_f16(NAN)), "nan stays nan");
    CHECK(f16_is_nan(ac_f32_to_f16(bits_f32(0x7f800001u))), "signalling nan stays nan");
    CHECK(isnan(ac_f16_to_f32(0x7e00)) && isnan(ac_f16_to_f32(0xfc01)), "f16 nan -> f32 nan");
}

/* Every half value survives f16 -> f32 -> f16; NaNs stay NaN. */
static void test_f16_roundtrip(void)
{
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = ac_f16_to_f32((uint16_t)h);
        uint16_t back = ac_f32_to_f16(f);
        if (f16_is_nan((uint16_t)h)) bad += !(isnan(f) && f16_is_nan(back));
        else bad += back != h;
    }
    CHECK(bad == 0, "%d half values do not round-trip", bad);
    /* every half's value by the definition (NaNs: the payload kept, made
     * quiet, as F16C's vcvtph2ps gives them), and
     * the _n form's bits the scalar one's, from halves at an odd address */
    static unsigned char src[2 * 65536 + 1];
    static float dst[65536];
    int wrong = 0, differ = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        memcpy(src + 1 + 2 * h, &(uint16_t){(uint16_t)h}, 2);
        uint32_t e = (h >> 10) & 31, m = h & 1023, sign = (h & 0x8000) << 16;
        float f = ac_f16_to_f32((uint16_t)h);
        uint32_t bits;
        memcpy(&bits, &f, 4);
        if (e == 31) wrong += bits != (sign | 0x7f800000u | m << 13 | (m ? 0x400000u : 0));
        else {
            double v = e ? ldexp(1024 + m, (int)e - 25) : ldexp(m, -24);
            wrong += (double)f != (h & 0x8000 ? -v : v) || !signbit(f) != !(h & 0x8000);
        }
    }
    CHECK(wrong == 0, "%d halves convert to another value", wrong);
    ac_f16_to_f32_n(src + 1, dst, 65536);
    for (uint32_t h = 0; h < 65536; h++) differ += memcmp(&dst[h], &(float){ac_f16_to_f32((uint16_t)h)}, 4) != 0;
    CHECK(differ == 0, "ac_f16_to_f32_n differs from ac_f16_to_f32 on %d halves", differ);
}

/* The bfloat16 rows: the _n forms' bits the scalar ones', at an odd
 * address, over ties, NaNs, infinities and random floats. */
static void test_bf16_rows(void)
{
    enum { N = 4096 };
    static float x[N], back[N];
    static unsigned char row[2 * N + 1];
    const uint32_t special[] = {0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0xffbfffffu, 0x3f808000u,
                                0x3f818000u, 0x3f80c000u, 0x7f7fffffu, 0x00000001u, 0x80000000u, 0};
    uint32_t s = 7;
    for (int i = 0; i < N; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = bits_f32(i < 12 ? special[i] : s);
    }
    ac_f32_to_bf16_n(x, row + 1, N);
    int differ = 0;
    for (int i = 0; i < N; i++) {
        uint16_t b;
        memcpy(&b, row + 1 + 2 * i, 2);
        differ += b != ac_f32_to_bf16(x[i]);
    }
    CHECK(differ == 0, "ac_f32_to_bf16_n differs from ac_f32_to_bf16 on %d values", differ);
    ac_bf16_to_f32_n(row + 1, back, N);
    differ = 0;
    for (int i = 0; i < N; i++) {
        uint16_t b;
        memcpy(&b, row + 1 + 2 * i, 2);
        differ += memcmp(&back[i], &(float){ac_bf16_to_f32(b)}, 4) != 0;
    }
    CHECK(differ == 0, "ac_bf16_to_f32_n differs from ac_bf16_to_f32 on %d values", differ);
}

/* Random floats in the half range convert to the nearest half, ties even. */
static void test_f16_nearest(void)
{
    uint32_t s = 99;
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        s = s * 1664525u + 1013904223u;
        /* exponents 2^-27 .. 2^16 */
        uint32_t bits = (s & 0x807fffffu) | ((uint32_t)(100 + (s >> 8) % 44) << 23);
        float f = bits_f32(bits);
        uint16_t h = ac_f32_to_f16(f);
        double err = fabs((double)f - ac_f16_to_f32(h));
        uint16_t mag = h & 0x7fff;
        if (mag >= 0x7c00) { /* infinity: only when |f| >= 65520 */
            bad += fabs(f) < 65520.0f;
            continue;
        }
        /* neighbours (toward zero, away from zero) must not be closer */
        for (int d = -1; d <= 1; d += 2) {
            if ((mag == 0 && d < 0) || mag + d >= 0x7c00) continue;
            double e2 = fabs((double)f - ac_f16_to_f32((uint16_t)((h & 0x8000) | (mag + d))));
            if (e2 < err || (e2 == err && (h & 1))) bad++;
        }
    }
    CHECK(bad == 0, "%d floats not rounded to the nearest half", bad);
}

static void test_bf16(void)
{
    CHECK(ac_f32_to_bf16(1.0f) == 0x3f80, "bf16(1)");
    CHECK(ac_f32_to_bf16(-2.0f) == 0xc000, "bf16(-2)");
    CHECK(ac_f32_to_bf16(INFINITY) == 0x7f80 && ac_f32_to_bf16(-INFINITY) == 0xff80, "bf16(inf)");
    CHECK(ac_f32_to_bf16(1.0f + 0x1p-8f) == 0x3f80, "bf16 tie to even (down)");
    CHECK(ac_f32_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3f82, "bf16 tie to even (up)");
    CHECK(ac_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 0x3f81, "bf16 above the tie");
    CHECK(ac_f32_to_bf16(bits_f32(0x7f7fffffu)) == 0x7f80, "largest float rounds to bf16 inf");
    uint16_t n = ac_f32_to_bf16(NAN);
    CHECK((n & 0x7f80) == 0x7f80 && (n & 0x7f), "bf16(nan) = 0x%04x", n);
    /* a payload only in the low 16 bits would truncate to infinity */
    n = ac_f32_to_bf16(bits_f32(0x7f800001u));
    CHECK((n & 0x7f80) == 0x7f80 && (n & 0x7f), "bf16(low-payload nan) = 0x%04x", n);
    CHECK(ac_bf16_to_f32(0x3f80) == 1.0f && ac_bf16_to_f32(0xc000) == -2.0f &&
              ac_bf16_to_f32(0x0001) == bits_f32(0x00010000u),
          "bf16 -> f32");
    int bad = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        float f = ac_bf16_to_f32((uint16_t)b);
        if (isnan(f)) bad += !isnan(ac_bf16_to_f32(ac_f32_to_bf16(f)));
        else bad += ac_f32_to_bf16(f) != b;
    }
    CHECK(bad == 0, "%d bf16 values do not round-trip", bad);
    uint16_t src[3] = {0x3f80, 0x4040, 0xbf00};
    float dst[3];
    ac_bf16_to_f32_n(src, dst, 3);
    CHECK(dst[0] == 1.0f && dst[1] == 3.0f && dst[2] == -0.5f, "ac_bf16_to_f32_n");
}

static int aligned(const void *p) { return ((uintptr_t)p % AC_ALIGN) == 0; }

static void test_arena(void)
{
    ac_arena a;
    ac_arena_init(&a, 1024);
    CHECK(ac_arena_capacity(&a) == 0, "a new arena holds nothing");
    const size_t sizes[] = {1, 3, 100, 7, 64, 65, 500, 1000, 3000, 5};
    unsigned char *p[10];
    for (int i = 0; i < 10; i++) {
        p[i] = ac_arena_alloc(&a, sizes[i]);
        CHECK(p[i] && aligned(p[i]), "allocation %d of %zu bytes: %p", i, sizes[i], (void *)p[i]);
        size_t zero = 1;
        for (size_t k = 0; k < sizes[i]; k++) zero &= p[i][k] == 0;
        CHECK(zero, "allocation %d is zeroed", i);
        memset(p[i], i + 1, sizes[i]);
    }
    /* no allocation overwrote another */
    for (int i = 0; i < 10; i++) {
        size_t same = 1;
        for (size_t k = 0; k < sizes[i]; k++) same &= p[i][k] == i + 1;
        CHECK(same, "allocation %d kept its bytes", i);
    }
    size_t cap = ac_arena_capacity(&a);
    CHECK(cap >= 3000 + 1024, "capacity %zu after several blocks", cap);
    ac_arena_reset(&a);
    size_t kept = ac_arena_capacity(&a);
    CHECK(kept == cap, "reset keeps one block as large as all were (%zu): %zu", cap, kept);
    for (int i = 0; i < 10; i++) CHECK(ac_arena_alloc(&a, sizes[i]), "the same allocations again");
    CHECK(ac_arena_capacity(&a) == kept, "the same allocations again fit the kept block: %zu", ac_arena_capacity(&a));
    ac_arena_reset(&a);
    CHECK(ac_arena_capacity(&a) == kept, "a reset of one block keeps it: %zu", ac_arena_capacity(&a));
    float *f = ac_arena_floats(&a, 700);
    CHECK(f && aligned(f) && f[0] == 0 && f[699] == 0, "floats after reset");
    CHECK(ac_arena_capacity(&a) == kept, "reuse after reset allocates nothing");

    /* a large allocation gets its own block */
    size_t big = 10u << 20;
    unsigned char *q = ac_arena_alloc(&a, big);
    CHECK(q && aligned(q) && q[big - 1] == 0, "10 MB allocation");
    if (q) q[big - 1] = 1;
    CHECK(ac_arena_capacity(&a) >= kept + big, "capacity after the large allocation");

    ac_error_clear();
    CHECK(ac_arena_alloc(&a, SIZE_MAX - 10) == NULL && error_has("overflows"), "size overflow: %s",
          ac_last_error());
    ac_error_clear();
    CHECK(ac_arena_floats(&a, SIZE_MAX / 2) == NULL && error_has("overflows"), "float count overflow: %s",
          ac_last_error());
    ac_arena_free(&a);
    CHECK(ac_arena_capacity(&a) == 0, "free releases everything");
    ac_arena_reset(&a); /* reset of an empty arena is harmless */
    ac_arena_init(&a, 0);
    CHECK(a.block_size > 0, "block size 0 picks a default");
    CHECK(aligned(ac_arena_alloc(&a, 0)), "zero-byte allocation");
    ac_arena_free(&a);
}

/* ---- thread pool ------------------------------------------------------- */

typedef struct {
    atomic_int *hits;
    size_t grain, n;
    atomic_int calls, misaligned;
    /* nested call bookkeeping */
    atomic_int nested_calls, nested_bad;
} pf_ctx;

static void mark(void *vctx, size_t b, size_t e)
{
    pf_ctx *c = vctx;
    atomic_fetch_add(&c->calls, 1);
    if (b % c->grain || e > c->n || b >= e) atomic_fetch_add(&c->misaligned, 1);
    for (size_t i = b; i < e && i < c->n; i++) atomic_fetch_add(&c->hits[i], 1);
}

static void test_parallel_for(void)
{
    const size_t ns[] = {0, 1, 7, 1000};
    const size_t grains[] = {1, 16};
    for (int threads = 1; threads <= 3; threads++) {
        CHECK(ac_set_threads(threads) == AC_OK && ac_get_threads() == threads, "set %d threads", threads);
        for (size_t in = 0; in < 4; in++)
            for (size_t ig = 0; ig < 2; ig++) {
                size_t n = ns[in];
                pf_ctx c = {.grain = grains[ig], .n = n};
                c.hits = calloc(n + 1, sizeof *c.hits);
                ac_parallel_for(n, grains[ig], mark, &c);
                int wrong = 0;
                for (size_t i = 0; i < n; i++) wrong += atomic_load(&c.hits[i]) != 1;
                CHECK(wrong == 0, "n=%zu grain=%zu threads=%d: %d indices not hit exactly once", n,
                      grains[ig], threads, wrong);
                CHECK(atomic_load(&c.misaligned) == 0, "n=%zu grain=%zu: a range not on the grain", n,
                      grains[ig]);
                int calls = atomic_load(&c.calls);
                size_t max_calls = (n + grains[ig] - 1) / grains[ig];
                CHECK(n ? calls >= 1 && calls <= 4 * threads && (size_t)calls <= max_calls : calls == 0,
                      "n=%zu grain=%zu threads=%d: %d calls", n, grains[ig], threads, calls);
                CHECK(threads > 1 || calls <= 1, "n=%zu: one thread runs one call, not %d", n, calls);
                free(c.hits);
            }
    }
    ac_error_clear();
    CHECK(ac_set_threads(0) == AC_ERR_ARG && error_has("thread count 0 is out of range"), "0 threads: %s",
          ac_last_error());
    CHECK(ac_set_threads(100000) == AC_ERR_ARG && error_has("100000"), "too many threads");
}

static void inner(void *vctx, size_t b, size_t e)
{
    pf_ctx *c = vctx;
    atomic_fetch_add(&c->nested_calls, 1);
    if (b != 0 || e != 10) atomic_fetch_add(&c->nested_bad, 1);
}

static void outer(void *vctx, size_t b, size_t e)
{
    pf_ctx *c = vctx;
    mark(vctx, b, e);
    /* must run inline: one call over the whole range */
    ac_parallel_for(10, 1, inner, c);
}

static void test_parallel_nested(void)
{
    ac_set_threads(2);
    pf_ctx c = {.grain = 1, .n = 100};
    c.hits = calloc(100, sizeof *c.hits);
    ac_parallel_for(100, 1, outer, &c);
    int wrong = 0;
    for (int i = 0; i < 100; i++) wrong += atomic_load(&c.hits[i]) != 1;
    CHECK(wrong == 0, "outer loop covers each index once");
    CHECK(atomic_load(&c.nested_calls) == atomic_load(&c.calls) && atomic_load(&c.nested_bad) == 0,
          "each nested loop ran inline in one call: %d nested for %d outer", atomic_load(&c.nested_calls),
          atomic_load(&c.calls));
    CHECK(atomic_load(&c.calls) == 8, "two threads split the outer loop in 8 pieces: %d", atomic_load(&c.calls));
    free(c.hits);
    ac_threadpool_shutdown();
    /* the pool restarts after a shutdown */
    c = (pf_ctx){.grain = 1, .n = 50};
    c.hits = calloc(50, sizeof *c.hits);
    ac_parallel_for(50, 1, mark, &c);
    wrong = 0;
    for (int i = 0; i < 50; i++) wrong += atomic_load(&c.hits[i]) != 1;
    CHECK(wrong == 0, "parallel_for after shutdown");
    free(c.hits);
}

/* Where the pieces of a loop start: the same every run for one pool size. */
typedef struct {
    atomic_int n;
    size_t begin[64];
} starts_ctx;

static void record_start(void *vctx, size_t b, size_t e)
{
    (void)e;
    starts_ctx *c = vctx;
    int i = atomic_fetch_add(&c->n, 1);
    if (i < 64) c->begin[i] = b;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static void test_parallel_fixed_pieces(void)
{
    ac_set_threads(2);
    starts_ctx first = {0};
    ac_parallel_for(1000, 16, record_start, &first);
    qsort(first.begin, (size_t)atomic_load(&first.n), sizeof *first.begin, cmp_size);
    int differ = 0;
    for (int run = 0; run < 50; run++) {
        starts_ctx c = {0};
        ac_parallel_for(1000, 16, record_start, &c);
        qsort(c.begin, (size_t)atomic_load(&c.n), sizeof *c.begin, cmp_size);
        differ += atomic_load(&c.n) != atomic_load(&first.n) ||
                  memcmp(c.begin, first.begin, (size_t)atomic_load(&c.n) * sizeof *c.begin) != 0;
    }
    CHECK(atomic_load(&first.n) == 8 && differ == 0, "1000 by 16 on 2 threads: %d pieces, %d runs cut otherwise",
          atomic_load(&first.n), differ);
}

/* A thread that stalls inside its piece does not stall the others: the
 * rest of the loop goes to the thread that keeps running. */
typedef struct {
    atomic_int finished, timed_out;
    atomic_int stalled; /* 1 once a piece has claimed the stall */
} stall_ctx;

static void stall_piece(void *vctx, size_t b, size_t e)
{
    (void)b, (void)e;
    stall_ctx *c = vctx;
    int expected = 0;
    if (atomic_compare_exchange_strong(&c->stalled, &expected, 1)) {
        /* wait (10 s at most) until the 7 other pieces are done elsewhere */
        double t0 = ac_now();
        while (atomic_load(&c->finished) < 7)
            if (ac_now() - t0 > 10) {
                atomic_store(&c->timed_out, 1);
                break;
            }
    }
    atomic_fetch_add(&c->finished, 1);
}

static void test_parallel_dynamic(void)
{
    ac_set_threads(2);
    stall_ctx c = {0};
    ac_parallel_for(8, 1, stall_piece, &c);
    CHECK(!atomic_load(&c.timed_out) && atomic_load(&c.finished) == 8,
          "one stalled piece of 8: the other thread ran the rest (%d finished)", atomic_load(&c.finished));
}

/* After the workers have gone to sleep, a loop wakes them: a piece that
 * waits for a second thread to enter the loop sees one. */
typedef struct {
    atomic_int entered, timed_out;
} wake_ctx;

static void wait_for_two(void *vctx, size_t b, size_t e)
{
    (void)b, (void)e;
    wake_ctx *c = vctx;
    atomic_fetch_add(&c->entered, 1);
    double t0 = ac_now();
    while (atomic_load(&c->entered) < 2)
        if (ac_now() - t0 > 10) {
            atomic_store(&c->timed_out, 1);
            return;
        }
}

static void test_parallel_sleep_wake(void)
{
    ac_set_threads(2);
    for (int round = 0; round < 5; round++) {
        struct timespec nap = {0, 20 * 1000 * 1000}; /* far longer than the workers spin */
        nanosleep(&nap, NULL);
        wake_ctx c = {0};
        ac_parallel_for(2, 1, wait_for_two, &c);
        CHECK(!atomic_load(&c.timed_out) && atomic_load(&c.entered) == 2, "round %d: a sleeping worker woke (%d)",
              round, atomic_load(&c.entered));
    }
}

/* Many short loops back to back, from the process-wide pool and from two
 * application threads with pools of their own at the same time. */
typedef struct {
    atomic_long sum;
} sum_ctx;

static void add_range(void *vctx, size_t b, size_t e)
{
    sum_ctx *c = vctx;
    long s = 0;
    for (size_t i = b; i < e; i++) s += (long)i + 1;
    atomic_fetch_add(&c->sum, s);
}

enum { SHORT_LOOPS = 20000 };

/* Loops of 1..9 indices; returns how many gave a wrong sum. */
static int short_loops(void)
{
    int wrong = 0;
    for (int l = 0; l < SHORT_LOOPS; l++) {
        size_t n = 1 + (size_t)l % 9;
        sum_ctx c = {0};
        ac_parallel_for(n, 1, add_range, &c);
        wrong += atomic_load(&c.sum) != (long)(n * (n + 1) / 2);
    }
    return wrong;
}

static void *local_pool_loops(void *arg)
{
    int *wrong = arg;
    *wrong = ac_set_local_threads(2) != AC_OK ? -1 : short_loops();
    ac_set_local_threads(0);
    return NULL;
}

static void test_parallel_many_short(void)
{
    ac_set_threads(2);
    pthread_t t[2];
    int wrong_local[2] = {0, 0};
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, local_pool_loops, &wrong_local[i]);
    int wrong = short_loops();
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    CHECK(wrong == 0, "%d of %d short loops on the process pool gave a wrong sum", wrong, SHORT_LOOPS);
    CHECK(wrong_local[0] == 0 && wrong_local[1] == 0, "short loops on two local pools at once: %d and %d wrong",
          wrong_local[0], wrong_local[1]);
}

/* ---- errors ------------------------------------------------------------ */

static void *other_thread(void *arg)
{
    (void)arg;
    ac_error(AC_ERR_IO, "set in another thread");
    return NULL;
}

static void test_errors(void)
{
    ac_error_clear();
    CHECK(strcmp(ac_last_error(), "") == 0, "cleared");
    CHECK(ac_error(AC_ERR_IO, "cannot read %s (%d)", "x.wav", 5) == AC_ERR_IO, "returns the status");
    CHECK(strcmp(ac_last_error(), "cannot read x.wav (5)") == 0, "message: %s", ac_last_error());
    CHECK(ac_error_prefix(AC_ERR_FORMAT, "model.safetensors") == AC_ERR_FORMAT, "prefix returns the status");
    CHECK(strcmp(ac_last_error(), "model.safetensors: cannot read x.wav (5)") == 0, "prefixed: %s",
          ac_last_error());
    ac_error_prefix(AC_ERR_FORMAT, "model.safetensors"); /* already named: not twice */
    CHECK(strcmp(ac_last_error(), "model.safetensors: cannot read x.wav (5)") == 0, "named once: %s",
          ac_last_error());
    ac_error_prefix(AC_ERR_FORMAT, "model");
    CHECK(strcmp(ac_last_error(), "model: model.safetensors: cannot read x.wav (5)") == 0, "a shorter name: %s",
          ac_last_error());
    /* the message is thread-local */
    pthread_t t;
    pthread_create(&t, NULL, other_thread, NULL);
    pthread_join(t, NULL);
    CHECK(error_has("model.safetensors: cannot"), "another thread's error leaves ours alone");
    /* long messages are cut, not overflowed */
    char longs[3000];
    memset(longs, 'a', sizeof longs - 1);
    longs[sizeof longs - 1] = 0;
    ac_error(AC_ERR_ARG, "%s", longs);
    size_t n = strlen(ac_last_error());
    CHECK(n > 500 && n < sizeof longs - 1, "long message cut to %zu", n);
    ac_error_prefix(AC_ERR_ARG, "%s", longs);
    n = strlen(ac_last_error());
    CHECK(n > 500 && n < sizeof longs - 1 && strncmp(ac_last_error(), "aaa", 3) == 0, "long prefix cut to %zu", n);
    ac_error_clear();
    CHECK(ac_last_error()[0] == 0, "clear");
}

static void test_floatvec(void)
{
    ac_floatvec v = {0};
    float x[1000];
    for (int i = 0; i < 1000; i++) x[i] = (float)i * 0.5f;
    CHECK(ac_floatvec_push(&v, x, 3) == AC_OK && v.n == 3 && v.cap >= 3, "push 3");
    CHECK(ac_floatvec_push(&v, x, 1000) == AC_OK && v.n == 1003 && v.cap >= 1003, "push 1000");
    CHECK(ac_floatvec_push(&v, x, 0) == AC_OK && v.n == 1003, "push 0");
    int same = v.data[0] == 0 && v.data[2] == 1.0f;
    for (int i = 0; i < 1000; i++) same &= v.data[3 + i] == x[i];
    CHECK(same, "contents after pushes");
    ac_floatvec_free(&v);
    CHECK(v.data == NULL && v.n == 0 && v.cap == 0, "free resets");
    /* an empty push to an empty vector stays empty */
    CHECK(ac_floatvec_push(&v, x, 0) == AC_OK && v.n == 0, "empty push on empty vector");
    ac_floatvec_free(&v);
}

static void test_grow(void)
{
    int *v = NULL;
    size_t cap = 0;
    CHECK(ac_grow(&v, &cap, 0, sizeof *v) == 0 && v == NULL && cap == 0, "room for none: nothing allocated");
    CHECK(ac_grow(&v, &cap, 1, sizeof *v) == 0 && v && cap == 16, "first room: 16");
    for (int i = 0; i < 16; i++) v[i] = i + 1;
    CHECK(ac_grow(&v, &cap, 17, sizeof *v) == 0 && cap == 32, "doubles: %zu", cap);
    int kept = 1, zero = 1;
    for (int i = 0; i < 16; i++) kept &= v[i] == i + 1;
    for (int i = 16; i < 32; i++) zero &= v[i] == 0;
    CHECK(kept && zero, "old elements kept, new ones zeroed");
    CHECK(ac_grow(&v, &cap, 1000, sizeof *v) == 0 && cap == 1024, "to the next power of two: %zu", cap);
    int *before = v;
    CHECK(ac_grow(&v, &cap, SIZE_MAX / 2, sizeof *v) != 0 && v == before && cap == 1024, "an overflowing size refused");
    CHECK(strstr(ac_last_error(), "overflows") != NULL, "says it overflows: %s", ac_last_error());
    free(v);
}

/* SplitMix64 from seed 0 (the published first outputs); xoshiro256** seeded
 * with 42 (its four words from SplitMix64(42)), computed independently. */
static void test_rng_known(void)
{
    static const uint64_t split0[] = {0xe220a8397b1dcdafull, 0x6e789e6aa1b965f4ull, 0x06c45d188009454full};
    static const uint64_t xo42[] = {0x15780b2e0c2ec716ull, 0x6104d9866d113a7eull, 0xae17533239e499a1ull,
                                    0xecb8ad4703b360a1ull};
    uint64_t st = 0;
    for (int i = 0; i < 3; i++) {
        uint64_t v = ac_splitmix64(&st);
        CHECK(v == split0[i], "splitmix64 output %d = %016llx", i, (unsigned long long)v);
    }
    ac_rng r;
    ac_rng_seed(&r, 42);
    for (int i = 0; i < 4; i++) {
        uint64_t v = ac_rng_next(&r);
        CHECK(v == xo42[i], "xoshiro256** output %d = %016llx", i, (unsigned long long)v);
    }
    /* the uniforms are the top bits of the next output */
    ac_rng a, b;
    ac_rng_seed(&a, 7), ac_rng_seed(&b, 7);
    CHECK(ac_rng_uniform(&a) == (double)(ac_rng_next(&b) >> 11) * 0x1p-53, "uniform: top 53 bits");
    CHECK(ac_rng_uniformf(&a) == (float)(ac_rng_next(&b) >> 40) * 0x1p-24f, "uniformf: top 24 bits");
}

/* Ranges and moments: uniforms in [0, 1) with mean 1/2 and variance 1/12,
 * normals with mean 0 and variance 1 (200,000 draws: 5 standard errors). */
static void test_rng_moments(void)
{
    enum { N = 200000 };
    ac_rng r;
    ac_rng_seed(&r, 1);
    double su = 0, suu = 0, sf = 0, sg = 0, sgg = 0, sh = 0, shh = 0;
    int in_range = 1;
    uint64_t st = 3;
    for (int i = 0; i < N; i++) {
        double u = ac_rng_uniform(&r), g = ac_rng_gaussian(&r), h = ac_splitmix_gaussian(&st);
        float f = ac_rng_uniformf(&r);
        in_range &= u >= 0 && u < 1 && f >= 0 && f < 1 && isfinite(g) && isfinite(h);
        su += u, suu += u * u, sf += f, sg += g, sgg += g * g, sh += h, shh += h * h;
    }
    CHECK(in_range, "uniforms in [0, 1), normals finite");
    double se_u = sqrt(1.0 / 12 / N), se_g = sqrt(1.0 / N), se_var = sqrt(2.0 / N);
    CHECK(fabs(su / N - 0.5) < 5 * se_u && fabs(sf / N - 0.5) < 5 * se_u, "uniform means %.5f %.5f", su / N, sf / N);
    CHECK(fabs(suu / N - su / N * (su / N) - 1.0 / 12) < 0.002, "uniform variance %.5f", suu / N - su / N * (su / N));
    CHECK(fabs(sg / N) < 5 * se_g && fabs(sgg / N - 1) < 5 * se_var, "xoshiro normal: mean %.4f, variance %.4f",
          sg / N, sgg / N);
    CHECK(fabs(sh / N) < 5 * se_g && fabs(shh / N - 1) < 5 * se_var, "splitmix normal: mean %.4f, variance %.4f",
          sh / N, shh / N);
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    RUN(test_f16_known);
    RUN(test_f16_roundtrip);
    RUN(test_bf16_rows);
    RUN(test_f16_nearest);
    RUN(test_bf16);
    RUN(test_arena);
    RUN(test_parallel_for);
    RUN(test_parallel_nested);
    RUN(test_parallel_fixed_pieces);
    RUN(test_parallel_dynamic);
    RUN(test_parallel_sleep_wake);
    RUN(test_parallel_many_short);
    RUN(test_errors);
    RUN(test_floatvec);
    RUN(test_grow);
    RUN(test_rng_known);
    RUN(test_rng_moments);
    return test_finish();
}
