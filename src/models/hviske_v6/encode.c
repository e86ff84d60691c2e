/* A chunk's audio rows: Whisper's log-mel over the waveform padded to
 * whole seconds (at least 2), the rotary encoder, STACK consecutive frames
 * side by side, RMSNorm (eps 1e-6) and the projection; the rows past the
 * audio's own frames are dropped. */
#include <string.h>

#include "base/error.h"
#include "base/timing.h"
#include "models/hviske_v6/hviske_v6.h"
#include "tensor/kernels.h"

#define PROJ_EPS 1e-6f

void hv6_frames(int64_t n, int64_t *valid, int64_t *frames)
{
    int64_t v = (n + WHISPER_HOP - 1) / WHISPER_HOP, f = (v + 99) / 100 * 100;
    *valid = v;
    *frames = f < 200 ? 200 : f;
}

ac_status hv6_audio_rows(const hv6_model *m, const float *x, int64_t n, const ac_trace *trace, ac_arena *a,
                         float **rows, int *n_rows, hv6_times *times)
{
    const hv6_config *c = &m->cfg;
    if (n < 1 || n > HV6_MAX_CHUNK)
        return ac_error(AC_ERR_ARG, "hviske_v6: a chunk of %lld samples (1 to %d)", (long long)n, HV6_MAX_CHUNK);
    int64_t valid, F;
    hv6_frames(n, &valid, &F);
    size_t M = (size_t)c->enc.n_mels, E = (size_t)c->enc.d, T = (size_t)F / 2, K = (size_t)c->stack;
    size_t D = (size_t)c->dec.hidden, n_tok = T / K;
    float *mel = ac_arena_floats(a, (size_t)F * M), *X = ac_arena_floats(a, T * E);
    float *Y = ac_arena_floats(a, n_tok * D);
    if (!mel || !X || !Y) return AC_ERR_NOMEM;
    double t0 = ac_now();
    AC_TRY(whisper_logmel_frames(m->enc, x, (size_t)n, (size_t)F, mel));
    double t1 = ac_now();
    ac_trace_put(trace, "mel", -1, mel, (size_t)F * M * sizeof *mel);
    AC_TRY(whisper_encode_frames(m->enc, mel, (size_t)F, trace, a, X));
    ac_trace_put(trace, "encoder", -1, X, T * E * sizeof *X);
    /* frames 4t .. 4t+3 side by side are rows of X back to back; normed in place */
    ac_rmsnorm(X, X, n_tok, K * E, m->norm, 0, PROJ_EPS);
    ac_matmul(X, &m->proj, NULL, Y, n_tok);
    ac_trace_put(trace, "tokens", -1, Y, n_tok * D * sizeof *Y);
    if (times) times->frontend = t1 - t0, times->encoder = ac_now() - t1;
    int64_t enc_valid = (valid + 1) / 2, keep = (enc_valid + (int64_t)K - 1) / (int64_t)K;
    if (keep > (int64_t)n_tok) keep = (int64_t)n_tok;
    if (keep < 1) keep = 1;
    *rows = Y;
    *n_rows = (int)keep;
    return AC_OK;
}
