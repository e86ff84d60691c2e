/* The scratch one chunk takes, counted from the configuration and the
 * chunk's length before anything is allocated: the encoder's attention is
 * quadratic in its frames, so a configuration with long chunks (or a long
 * chunk) would otherwise allocate gigabytes and only then fail. */
#include "models/hviske_asr/budget.h"

#include "base/error.h"
#include "models/hviske_asr/frontend.h"
#include "nn/attention.h"

#define GB (1024.0 * 1024.0 * 1024.0)

/* Mirrors the allocations of hviske_transcribe_chunk (frontend.c,
 * encoder.c, decoder.c), rounded up where a term is small. */
double hviske_chunk_bytes(const hviske_config *c, int64_t n, int beams, int cap)
{
    double E = c->d_model, C = c->sub_channels, H = c->n_heads, D = c->dec_dim, L = c->dec_layers;
    int64_t T0 = hviske_feature_frames(c, n), T1 = hviske_sub_len(T0), T2 = hviske_sub_len(T1);
    int64_t F1 = hviske_sub_len(c->n_mels), F2 = hviske_sub_len(F1);
    double t = (double)hviske_sub_len(T2), F3 = (double)hviske_sub_len(F2);
    double keys = cap > t ? cap : t, rows = beams > 16 ? beams : 16;   /* the prompt (<= 16) or the beams */
    ac_attn_opts enc = {.heads = c->n_heads, .kv_heads = c->n_heads, .head_dim = c->d_model / c->n_heads};
    ac_attn_opts dec = {.heads = c->dec_heads, .kv_heads = c->dec_heads, .head_dim = c->dec_dim / c->dec_heads};
    double front = (double)n + 1 + (double)T0 * c->n_mels;
    double sub = (double)T1 * F1 * (9 + C) + 2.0 * T2 * F2 * C + 2 * t * F3 * C + t * E;
    double encoder = 4 * t * E + 11 * t * E + t * c->ff_dim + H * t * t + 2 * t * t +
                     (double)ac_attention_scratch(&enc, (size_t)t, (size_t)t) + t * D;
    double decoder = 3 * L * beams * cap * D + 2 * t * D * (1 + L) + 3 * rows * D + c->vocab +
                     (double)ac_attention_scratch(&dec, (size_t)rows, (size_t)keys) + 4 * rows * (D + c->dec_inner);
    return (front + sub + encoder + decoder) * sizeof(float);
}

ac_status hviske_check_chunk(const hviske_config *c, int64_t n, int beams, int cap)
{
    int64_t frames = hviske_sub_len(hviske_sub_len(hviske_sub_len(hviske_feature_frames(c, n))));
    if (frames > c->pos_max)
        return ac_error(AC_ERR_UNSUPPORTED, "audio chunk of %.1f s (%lld encoder frames) exceeds pos_emb_max_len %d",
                        (double)n / c->sample_rate, (long long)frames, c->pos_max);
    double need = hviske_chunk_bytes(c, n, beams, cap);
    if (need > HVISKE_MAX_CHUNK_BYTES)
        return ac_error(AC_ERR_UNSUPPORTED, "audio chunk of %.1f s with %d beams needs %.1f GB of scratch (limit %.0f GB)",
                        (double)n / c->sample_rate, beams, need / GB, HVISKE_MAX_CHUNK_BYTES / GB);
    return AC_OK;
}
