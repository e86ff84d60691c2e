/* Hviske v6 (config.json model_type "whisper_qwen"; docs/models/hviske_v6.md):
 * the Whisper encoder with partial rotary positions (models/whisper), 4
 * encoder frames stacked, RMSNorm and a linear projector into the input
 * rows of a Qwen3 decoder (models/qwen2) that writes byte-level BPE ids.
 *
 * A chunk of at most 30 s: log-mel over the waveform padded to whole
 * seconds (at least 2), the encoder, the projector, the valid rows kept;
 * the prompt [audio rows] [style tokens] <|im_start|> prefilled in one
 * pass, then greedy or beam search (nn/decode) with the style tokens
 * barred, at most 8 tokens a second + 12. Longer audio is cut at silences
 * into chunks of at most 28 s. */
#ifndef AC_MODELS_HVISKE_V6_H
#define AC_MODELS_HVISKE_V6_H

#include <stdint.h>

#include "audio/reader.h"
#include "base/arena.h"
#include "base/trace.h"
#include "io/weights.h"
#include "models/qwen2/qwen2.h"
#include "models/whisper/whisper.h"
#include "nn/decode.h"
#include "text/bpe.h"

#define HV6_RATE 16000
#define HV6_MAX_CHUNK 480000     /* 30 s: the longest chunk the model hears */
#define HV6_SPLIT_CHUNK 448000   /* 28 s: the chunks of longer audio */

enum { HV6_CASED, HV6_NOCASE, HV6_PUNC, HV6_NOPUNC, HV6_N_STYLE };

typedef struct hv6_config {
    whisper_config enc;      /* "whisper", rotary (root rope_theta) */
    qwen2_config dec;        /* "qwen" (Qwen3; the head is always the embedding) */
    int stack;               /* encoder frames per audio row */
    int bos, eos, pad;       /* bos_token_id ends the prompt; eos_token_id ends the text */
    int style[HV6_N_STYLE];  /* style_tokens: <|cased|> <|nocase|> <|punc|> <|nopunc|> */
} hv6_config;

/* The GGUF namespace of the package's tensors (the runtime's tensor
 * source "weights", whose names are model.safetensors'). */
#define HV6_GGUF_NS "weights/"

typedef struct hv6_model {
    hv6_config cfg;
    ac_weights *weights;     /* model.safetensors or the GGUF, shared by the parts */
    char weights_path[4200]; /* the file WEIGHTS was opened from */
    int gguf;                /* it is a GGUF, its tensors under HV6_GGUF_NS */
    whisper_encoder *enc;
    const float *norm;       /* [stack * d] projector RMSNorm */
    ac_mat proj;             /* [hidden][stack * d] */
    qwen2_model *dec;
    ac_bpe *tok;
} hv6_model;

/* config.json's text (FILE names it in messages). */
ac_status hv6_config_parse(const char *text, size_t len, const char *file, hv6_config *cfg);
/* The key of style token I in style_tokens ("<|cased|>" ...). */
const char *hv6_style_key(int i);

/* PATH: a package folder (config.json, tokenizer.json, model.safetensors),
 * its model.safetensors, or the ggml runtime's single GGUF file (those
 * files embedded, the tensors under "weights/"); its matrices held in TYPE
 * under the rule of docs/models/hviske_v6.md. */
ac_status hv6_load(const char *path, ac_weight_type type, hv6_model **out);
void hv6_free(hv6_model *m);

/* Seconds spent per stage of a chunk. */
typedef struct hv6_times {
    double frontend, encoder, prefill, decode;
} hv6_times;

/* Frames of a chunk of N samples: VALID = ceil(n / hop), the log-mel
 * FRAMES = max(200, VALID rounded up to whole seconds). */
void hv6_frames(int64_t n, int64_t *valid, int64_t *frames);

/* The audio rows of a chunk X[N] (1 <= N <= 30 s): *ROWS [*N_ROWS][hidden]
 * from arena A. TRACE (may be NULL) receives "mel" [frames][n_mels],
 * the encoder's "conv" and "layer"s, "encoder" [frames/2][d] and
 * "tokens" (every projected row, valid or not). TIMES (may be NULL) gets
 * the front end's and the encoder's (with the projector's) seconds. */
ac_status hv6_audio_rows(const hv6_model *m, const float *x, int64_t n, const ac_trace *trace, ac_arena *a,
                         float **rows, int *n_rows, hv6_times *times);

/* The options of one chunk. CASED and PUNCTUATED: 1, 0, or -1 (unset);
 * the style tokens go into the prompt only when both are set. */
typedef struct hv6_options {
    int cased, punctuated;
    int beams;               /* 1: greedy */
    float length_penalty;
    int max_tokens;          /* the cap is min(max_tokens, ceil(n / 2000) + 12) */
    const ac_trace *trace;
} hv6_options;

hv6_options hv6_defaults(void);

typedef struct hv6_chunk {
    char *text;              /* detokenized, repeats collapsed */
    int *tokens;
    int n_tokens;
    double logprob;
    int steps;
    hv6_times times;
} hv6_chunk;

/* The ids after the audio rows ROWS[n_rows] (teacher-forcing tests reach
 * the decoder through hv6_prompt and qwen2_forward_embeds), and the search
 * after them (TIMES, may be NULL: the prefill's and the steps' seconds). */
ac_status hv6_prompt(const hv6_model *m, const hv6_options *o, int *ids, int *n);
ac_status hv6_decode(const hv6_model *m, const float *rows, int n_rows, int64_t n_samples, const hv6_options *o,
                     ac_arena *a, ac_decode_result *out, hv6_times *times);
/* The text of IDS: byte-level BPE without the special tokens (ids no token
 * has are dropped), then runs of a repeated 1-4 word group cut to 3. */
ac_status hv6_text(const hv6_model *m, const int *ids, int n, char **text);

/* One chunk X[N] from samples to text, in arena A (reset between the
 * encoder and the decoder: X must not lie in it). */
ac_status hv6_transcribe_chunk(const hv6_model *m, const float *x, int64_t n, const hv6_options *o, ac_arena *a,
                               hv6_chunk *out);
void hv6_chunk_free(hv6_chunk *c);

/* Receives the chunk of samples [FROM, TO); may take C's text and tokens. */
typedef ac_status (*hv6_chunk_fn)(void *user, int64_t from, int64_t to, hv6_chunk *c);

/* The stream R (16 kHz mono), only the spans [spans[2i], spans[2i+1])
 * when N_SPANS > 0: each span (or the whole stream) read, cut into chunks
 * (one when at most 30 s, else at silences into chunks of at most 28 s),
 * each transcribed (STEP reset per chunk) and handed to EMIT in order. */
ac_status hv6_transcribe_stream(const hv6_model *m, ac_audio_reader *r, const int64_t *spans, size_t n_spans,
                                const hv6_options *o, ac_arena *call, ac_arena *step, hv6_chunk_fn emit, void *user,
                                int64_t *n_read);

#endif
