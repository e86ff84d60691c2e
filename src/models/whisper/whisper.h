/* The Whisper audio encoder (OpenAI Whisper, spec vevo2.md §4.1 steps 2-5):
 * a model module that families call (Vevo2's content-style features).
 *
 * 16 kHz audio, padded or cut to the 30 s window, becomes Whisper's log-mel
 * [2*n_ctx][n_mels]; conv1 + GELU, conv2 (stride 2) + GELU, the stored
 * positional table, pre-LN blocks of multi-head attention (no key bias)
 * and an exact-GELU MLP, then ln_post give [n_ctx][d].
 *
 * The weights come in three forms (spec §2.0), told apart by the loader:
 * OpenAI's torch.save file (medium.pt: "dims" + "model_state_dict"), a
 * Hugging Face folder (config.json + model.safetensors, names
 * "model.encoder.*"), or a folder with model.safetensors in OpenAI's names
 * and config.json {"audio_encoder": dims}. Decoder tensors are ignored. */
#ifndef AC_MODELS_WHISPER_H
#define AC_MODELS_WHISPER_H

#include <stddef.h>

#include "audio/mel.h"
#include "audioc.h"
#include "base/arena.h"
#include "base/trace.h"
#include "io/config.h"
#include "io/weights.h"
#include "tensor/mat.h"

#define WHISPER_RATE 16000
#define WHISPER_HOP 160     /* 10 ms frames */
#define WHISPER_N_FFT 400

/* Which names the weights carry. */
typedef enum { WHISPER_NAMES_OPENAI, WHISPER_NAMES_HF } whisper_names;

typedef struct whisper_config {
    int n_mels, n_ctx, d, heads, layers, ffn;
    whisper_names names;
    /* Rotary positions instead of the stored table (Hviske v6): RoPE
     * (NEOX pairs i, i + rope_dim/2) on the first rope_dim channels of
     * each head of q and k, base rope_theta; 0: the absolute table. */
    int rope_dim;
    float rope_theta;
} whisper_config;

/* OpenAI's dims (medium.pt's "dims", the port's "audio_encoder"): n_mels,
 * n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer; the MLP is 4x
 * the state, as OpenAI's model builds it. OBJ is the dims object, WHERE
 * its name in messages. */
ac_status whisper_config_parse(const ac_config *c, const cJSON *obj, const char *where, whisper_config *out);
/* Hugging Face's WhisperConfig (the root of config.json): d_model,
 * encoder_layers, encoder_attention_heads, encoder_ffn_dim, num_mel_bins,
 * max_source_positions. */
ac_status whisper_config_parse_hf(const ac_config *c, const cJSON *obj, const char *where, whisper_config *out);
/* A WhisperConfig of a rotary encoder (Hviske v6's "whisper" object): the
 * keys above (max_source_positions optional) and encoder_rotary_dim, with
 * the base ROPE_THETA read by the caller. */
ac_status whisper_config_parse_rotary(const ac_config *c, const cJSON *obj, const char *where, float rope_theta,
                                      whisper_config *out);

typedef struct whisper_block {
    const float *attn_ln_w, *attn_ln_b, *bq, *bv, *bo, *mlp_ln_w, *mlp_ln_b, *b_fc1, *b_fc2;
    ac_mat wq, wk, wv, wo, fc1, fc2;
} whisper_block;

typedef struct whisper_encoder {
    whisper_config cfg;
    ac_weights *weights;
    ac_mat conv1_w, conv2_w;          /* [cout][cin*3] in the stored type, for ac_conv1d_mat */
    const float *conv1_b, *conv2_b;
    const float *pos;                 /* [n_ctx][d]; NULL with rotary positions */
    whisper_block *block;
    const float *ln_post_w, *ln_post_b;
    int owns_weights;
    int attn_bf16;                    /* the family's choice: attention's tiles on bf16 operands
                                         when the layers are BF16 (docs/models/hviske_v6.md) */
    float window[WHISPER_N_FFT];      /* periodic Hann */
    float *mel_fb;                    /* [n_mels][n_fft/2+1], Slaney */
    ac_melbank mel;                   /* over mel_fb */
} whisper_encoder;

/* PATH is medium.pt (or any torch.save file of that layout), a
 * model.safetensors with config.json beside it, or a folder holding
 * config.json + model.safetensors (either form), else one .pt file. Its
 * matrices are held in TYPE (ac_weights_set_type), conv1 kept as stored. */
ac_status whisper_encoder_load(const char *path, ac_weight_type type, whisper_encoder **out);
/* The safetensors forms over weights W opened by the caller (a part of a
 * GGUF package) and their config.json CONFIG; both are taken (freed on
 * error too). */
ac_status whisper_encoder_load_from(ac_weights *w, ac_config *config, whisper_encoder **out);
/* The encoder over tensors of W that the caller keeps (a package holding
 * more than the encoder): CFG's names under the namespace NS ("" for
 * none; "model." is the Hugging Face folder's), held in W's type under
 * the rule of whisper_encoder_load. W must outlive the encoder; its
 * namespace and name table are left cleared. */
ac_status whisper_encoder_shared(ac_weights *w, const whisper_config *cfg, const char *ns, whisper_encoder **out);
void whisper_encoder_free(whisper_encoder *m);

/* Samples of the window (30 s for n_ctx 1500) and its log-mel frames. */
size_t whisper_window_samples(const whisper_config *c);
size_t whisper_mel_frames(const whisper_config *c);

/* MEL[whisper_mel_frames][n_mels] (time-major) of X[N] 16 kHz mono, padded
 * with zeros or cut to the window: log10 of the clamped mel power of the
 * reflect-centred STFT, its last frame dropped, floored 8 below the
 * maximum, (x + 4) / 4. */
ac_status whisper_logmel(const whisper_encoder *m, const float *x, size_t n, float *mel);
/* The same over a window of FRAMES frames (FRAMES * WHISPER_HOP samples)
 * instead of the model's 30 s. */
ac_status whisper_logmel_frames(const whisper_encoder *m, const float *x, size_t n, size_t frames, float *mel);

/* OUT[n_ctx][d] = the encoder over MEL[2*n_ctx][n_mels]; scratch from A.
 * TRACE (may be NULL) receives "conv" (the convolutions' output plus the
 * positions) and "layer" per block, each f32 [n_ctx][d]. */
ac_status whisper_encode(const whisper_encoder *m, const float *mel, const ac_trace *trace, ac_arena *a,
                         float *out);
/* The same over MEL[FRAMES][n_mels] of any even length: OUT[FRAMES/2][d].
 * With the absolute table FRAMES is at most 2*n_ctx (its first rows). */
ac_status whisper_encode_frames(const whisper_encoder *m, const float *mel, size_t frames, const ac_trace *trace,
                                ac_arena *a, float *out);
/* whisper_logmel then whisper_encode. */
ac_status whisper_encode_audio(const whisper_encoder *m, const float *x, size_t n, const ac_trace *trace,
                               ac_arena *a, float *out);

/* Feature normalization stats (Vevo2's whisper_stats: mean, std [d]). */
typedef struct whisper_stats {
    int dim;
    float *mean, *std;
} whisper_stats;

/* whisper_stats.pt (torch.save of {"mean", "std"}) or
 * whisper_stats.safetensors: two vectors of DIM values (DIM 0: as stored),
 * every std finite and non-zero. */
ac_status whisper_stats_load(const char *path, int dim, whisper_stats **out);
/* The same from weights W opened by the caller (taken: freed here). */
ac_status whisper_stats_load_from(ac_weights *w, int dim, whisper_stats **out);
void whisper_stats_free(whisper_stats *s);

/* FEAT[T][d] from the encoder output ENC[n_ctx][d]: its first T frames,
 * the last repeated past n_ctx (spec §9 item 10), then (f - mean) / std
 * per channel when STATS is given. */
ac_status whisper_features(const whisper_config *c, const float *enc, int T, const whisper_stats *stats, float *feat);

#endif
