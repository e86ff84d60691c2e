/* The families this build runs: one entry each (family.c lists them), with
 * the task's operations. The task drivers (asr.c, vad.c) reach a family
 * only through its entry, so adding a family is a new entry and its
 * adapter file (family_<name>.c), not a change to the drivers. */
#ifndef AC_API_FAMILY_H
#define AC_API_FAMILY_H

#include "audio/reader.h"
#include "base/mem.h"
#include "api/scratch.h"
#include "io/tensor_file.h"

/* A word of a chunk: seconds from the chunk's start. */
typedef struct {
    char *text;
    double start, end;
} ac_asr_chunk_word;

/* A finished piece of a transcription. The driver takes TEXT, TOKENS and
 * the words' texts (WORDS itself stays the family's). */
typedef struct {
    int64_t start, end;    /* samples at the model's rate */
    char *text;
    int *tokens;
    int n_tokens;
    double avg_logprob;
    ac_asr_timings timings;
    ac_asr_chunk_word *words;   /* with word_timestamps */
    int n_words;
} ac_asr_chunk;

typedef ac_status (*ac_asr_emit_fn)(void *user, ac_asr_chunk *chunk);

typedef struct {
    /* Transcribes the stream R (mono, at the model's rate), only the spans
     * [spans[2i], spans[2i+1]) when N_SPANS > 0 (ascending samples), cut
     * into chunks as the family does; calls EMIT for each chunk in order.
     * *N_READ: the samples read from R. */
    ac_status (*transcribe)(const void *model, ac_audio_reader *r, const int64_t *spans, size_t n_spans,
                            const ac_asr_options *o, ac_scratch *scratch, ac_asr_emit_fn emit, void *user,
                            int64_t *n_read);
    /* AC_ERR_ARG, naming what is wrong, unless the model can run with O
     * (e.g. its language); NULL when any options will do. */
    ac_status (*check)(const void *model, const ac_asr_options *o);
} ac_asr_ops;

typedef struct {
    /* A stream of mono audio at the model's rate; appends probabilities. */
    ac_status (*stream_new)(const void *model, void **stream);
    ac_status (*feed)(void *stream, const float *pcm, size_t n, ac_floatvec *probs);
    ac_status (*finish)(void *stream, ac_floatvec *probs);
    void (*stream_free)(void *stream);
    /* Speech segments (in samples at the model's rate) of N_SAMPLES of
     * audio, and the padding O asks for added to them in place (pad NULL:
     * the family has none). */
    ac_status (*speech)(const void *model, const float *probs, size_t n_probs, int64_t n_samples,
                        const ac_vad_options *o, ac_vad_segment **out, size_t *n_out);
    void (*pad)(ac_vad_segment *v, size_t n, const ac_vad_options *o, int64_t n_samples);
    int (*hop)(const void *model);   /* samples per probability */
} ac_vad_ops;

/* Decoded audio of a voice request, mono at the model's rate; N 0 when not given. */
typedef struct {
    const float *x;
    int64_t n;
} ac_voice_clip;

typedef struct {
    ac_voice_clip source, voice, style, prosody;
} ac_voice_clips;

typedef struct {
    /* The route of O on the clips C into OUT: its samples, pitch shifts
     * and timings (the driver adds the decoding time). The model loads
     * what the call needs on first use, hence not const. */
    ac_status (*run)(void *model, const ac_voice_clips *c, const ac_voice_options *o, ac_voice_result *out,
                     ac_voice_timings *timings);
    const char *const *(*routes)(void);
    /* Whether the clip serves as a target voice (its length, not silent). */
    ac_status (*check_voice)(const void *model, const ac_voice_clip *c);
} ac_voice_ops;

/* The files of a family's package in a Hub repository (relative to the
 * repository or its subfolder): MARKS tell the family (as its probe does)
 * unless one of UNLESS is there too (another family's mark: a v5.3 Hviske
 * repository may hold a tokenizer.json beside its tokenizer.model), NEEDS
 * are the files its loader reads (each must be there), WANTS are
 * patterns of files fetched when present (fnmatch, '*' within one folder).
 * Nothing else is fetched: not the training files or discriminators a
 * repository may also hold, nor pytorch_model.bin beside model.safetensors.
 * COMPANION is a repository the family runs with (Vevo2's Whisper-medium),
 * fetched with COMPANION_FILES and given as ac_load_options.whisper. */
typedef struct ac_hub_files {
    const char *const *marks, *const *unless, *const *needs, *const *wants;
    const char *companion;
    const struct ac_hub_files *companion_files;
} ac_hub_files;

/* A model written as one GGUF file (audioc quantize, api/quantize.c).
 * Which tensors a type converts is the rule the family's loader applies
 * (ac_weights_keep), recorded as the model loads; a family's pack op adds
 * only what the file holds besides: */
typedef struct ac_pack ac_pack;
/* The tensors of the weights file FILE (a path its loader opened; a
 * folder: every file in it), or those under the namespace NS of the GGUF
 * FILE (NS NULL for a folder's files), are the part KEY: written as
 * "KEY/<name>" and listed in audiocpp.tensor_sources. KEY NULL leaves
 * them out of the file. */
ac_status ac_pack_part(ac_pack *p, const char *file, const char *ns, const char *key);
/* The file at PATH embedded as NAME (unless a file of that name is already). */
ac_status ac_pack_file(ac_pack *p, const char *name, const char *path);
/* The package description: audiocpp.model_spec.family and .json. */
ac_status ac_pack_spec(ac_pack *p, const char *family, const char *json);

typedef struct ac_family {
    const char *name;
    ac_task task;
    /* Whether PATH holds this family: a folder (TF NULL), or a tensor file
     * already opened as TF. Looks, does not load. */
    int (*probe)(const char *path, const ac_tensor_file *tf);
    ac_status (*load)(const char *path, const ac_load_options *o, void **model);
    void (*free)(void *model);
    int (*rate)(const void *model);   /* the sample rate it runs at */
    const ac_asr_ops *asr;            /* AC_TASK_ASR */
    const ac_vad_ops *vad;            /* AC_TASK_VAD */
    const ac_voice_ops *voice;        /* AC_TASK_VOICE */
    const ac_hub_files *hub;          /* its files in a Hub repository */
    /* audioc quantize: loads what the model loads on first use, and says
     * what its GGUF holds besides the tensors and the package folder's
     * other files (ac_pack_*). NULL: one weights file, nothing more. */
    ac_status (*pack)(void *model, ac_pack *p);
} ac_family;

extern const ac_family ac_family_silero_vad, ac_family_marblenet_vad, ac_family_hviske_asr, ac_family_hviske_v6,
    ac_family_vevo2;

struct ac_model {
    const ac_family *family;
    void *impl;               /* the family's model, read-only once loaded */
    ac_scratch_pool scratch;  /* per calling thread, reused by its calls */
};

/* The family of PATH (a local folder or file), and in RESOLVED[SIZE] the
 * path its loader takes: PATH itself, or the GGUF file a folder holds
 * when no family reads the folder as it is. */
ac_status ac_family_probe(const char *path, const ac_family **out, char *resolved, size_t size);

/* The I-th family of the table, NULL past its end. */
const ac_family *ac_family_at(int i);

/* A model path "hf:REPO[@REVISION][/SUBFOLDER|/FILE]" made local (api/hub.c): the
 * family's files fetched into the Hub cache or found there; *LOCAL is the
 * snapshot folder, *WHISPER (NULL when none) the companion's (free both). */
ac_status ac_hub_model(const char *path, char **local, char **whisper);
/* As ac_hub_model for the files matching PATTERNS only (a tokenizer's). */
ac_status ac_hub_files_only(const char *path, const char *const *patterns, char **local);

/* AC_ERR_ARG unless MODEL is a model of TASK; WHAT names the caller. */
ac_status ac_model_check_task(const ac_model *model, ac_task task, const char *what);

/* Whether DIR holds a file NAME. */
int ac_dir_has(const char *dir, const char *name);

#endif
