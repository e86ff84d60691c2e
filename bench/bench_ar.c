/* Speed of the Qwen2 decoder on a package: the prompt's prefill and the
 * cached decoding steps after it (each step feeds the previous step's
 * argmax, so every step is a real one-token pass plus the head). The
 * prefill is timed twice: the first also faults in the session's buffers.
 * The steps run in blocks of BLOCK, each followed by a read of 1 GB: a
 * shared machine's memory bandwidth changes from second to second, so each
 * block's time is printed with the bandwidth measured right after it.
 * WEIGHTS (stored, f32, f16, bf16, q8_0: --weights) converts the matrices
 * as a load would; the prefill's layer products are then also given as a
 * fraction of the roof of that type's arithmetic (bench/peak.c), measured
 * right after it.
 * usage: bench_ar MODEL_DIR [PROMPT_LEN 200] [STEPS 500] [THREADS 1] [BLOCK 50] [WEIGHTS stored] */
#include <stdio.h>
#include <stdlib.h>

#include "audioc.h"
#include "base/arena.h"
#include "models/qwen2/qwen2.h"
#include "peak.h"
#include "read_bandwidth.h"
#include "tensor/dtype.h"

#define READ_MB 1024

static int argmax(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_ar MODEL_DIR [PROMPT_LEN] [STEPS] [THREADS] [BLOCK] [WEIGHTS]\n");
        return 2;
    }
    int P = argc > 2 ? atoi(argv[2]) : 200, steps = argc > 3 ? atoi(argv[3]) : 500;
    int block = argc > 5 ? atoi(argv[5]) : 50;
    if (P < 1 || steps < 1 || block < 1) {
        fprintf(stderr, "bench_ar: PROMPT_LEN, STEPS and BLOCK must be positive\n");
        return 2;
    }
    int threads = argc > 4 ? atoi(argv[4]) : 1;
    ac_weight_type type = AC_WEIGHTS_STORED;
    if (argc > 6 && ac_weight_type_parse(argv[6], &type) != AC_OK) {
        fprintf(stderr, "%s\n", ac_last_error());
        return 2;
    }
    ac_set_threads(threads);
    double t0 = ac_now();
    qwen2_model *m;
    if (qwen2_load(argv[1], type, &m)) {
        fprintf(stderr, "%s\n", ac_last_error());
        return 1;
    }
    double t_load = ac_now() - t0;
    int V = m->cfg.vocab, *prompt = malloc((size_t)P * sizeof *prompt);
    float *logits = malloc((size_t)V * sizeof *logits);
    for (int i = 0; i < P; i++) prompt[i] = (int)((i * 7919u + 13u) % (unsigned)V);
    ac_arena a;
    ac_arena_init(&a, 1 << 20);
    qwen2_session *s;
    if (qwen2_session_new(m, P + steps, P, &a, &s)) {
        fprintf(stderr, "%s\n", ac_last_error());
        return 1;
    }
    /* the first prefill also faults in the session's buffers; the second is
     * what every later request of a process pays */
    t0 = ac_now();
    ac_status st = qwen2_forward(s, prompt, P, 0, 1, logits);
    double t_first = ac_now() - t0;
    t0 = ac_now();
    if (!st) st = qwen2_forward(s, prompt, P, 0, 1, logits);
    double t_prefill = ac_now() - t0;
    double peak_rss = ac_peak_rss_mb(); /* before the bandwidth buffer */
    /* the layer products' arithmetic: that of the matrices as held (q_proj's type stands for all) */
    ac_dtype held = m->layer[0].wq.dtype;
    peak_kind kind = peak_of_weights(held);
    const qwen2_config *c = &m->cfg;
    double q = (double)c->heads * c->head_dim, kv = (double)c->kv_heads * c->head_dim, D = c->hidden;
    double flops = 2.0 * P * c->layers * (D * (q + 2 * kv) + q * D + 3.0 * D * c->intermediate);
    double roof = peak_gops(kind, threads);
    float *buf = read_buffer(READ_MB);
    if (!buf) return 1;
    double t_steps = 0;
    char blocks[4096] = "";
    size_t used = 0;
    for (int i = 0; !st && i < steps;) {
        int n = steps - i < block ? steps - i : block;
        t0 = ac_now();
        for (int k = 0; !st && k < n; k++, i++) {
            int id = argmax(logits, V);
            st = qwen2_forward(s, &id, 1, P + i, 1, logits);
        }
        double dt = ac_now() - t0;
        t_steps += dt;
        double gbs = read_gbs(buf, READ_MB, 2);
        if (used + 32 < sizeof blocks) used += (size_t)snprintf(blocks + used, sizeof blocks - used, " %.2f@%.1f",
                                                                 dt * 1e3 / n, gbs);
    }
    free(buf);
    if (st) fprintf(stderr, "%s\n", ac_last_error());
    printf("load %.0f ms, prefill %d tokens %.1f ms (first %.1f ms), %d steps %.2f ms/step, peak RSS %.0f MB\n"
           "blocks (ms/step@GB/s):%s\n"
           "prefill layer products %.1f GFLOP/s, roof %.1f G/s (%s): %.2f of roof\n",
           t_load * 1e3, P, t_prefill * 1e3, t_first * 1e3, steps, t_steps * 1e3 / steps, peak_rss, blocks,
           flops / t_prefill / 1e9, roof, peak_name(kind), flops / t_prefill / 1e9 / roof);
    ac_arena_free(&a);
    free(prompt), free(logits);
    qwen2_free(m);
    return st ? 1 : 0;
}
