/* Hviske ASR (cohere_asr packages) in the family table. */
#include <stdlib.h>
#include <string.h>

#include "api/family.h"
#include "base/error.h"
#include "models/hviske_asr/longform.h"

/* A package folder (config.json beside tokenizer.model; the loader checks
 * the rest and names what is wrong), a GGUF package that embeds its config,
 * or the package's bare model.safetensors (the loader then asks for the folder). */
static int probe(const char *path, const ac_tensor_file *tf)
{
    if (!tf) return ac_dir_has(path, "config.json") && ac_dir_has(path, "tokenizer.model");
    /* a GGUF whose package description names another family is not ours */
    const char *family = ac_tensor_file_meta(tf, "audiocpp.model_spec.family");
    if (family && strcmp(family, "cohere_asr") != 0) return 0;
    return ac_tensor_file_embedded(tf, "config.json") || ac_tensor_file_find(tf, "encoder_decoder_proj.weight");
}

static ac_status load(const char *path, const ac_load_options *o, void **m)
{
    return hviske_load(path, o->weights, (hviske_model **)m);
}
static void free_model(void *m) { hviske_free(m); }
static int rate(const void *m) { return ((const hviske_model *)m)->cfg.sample_rate; }

typedef struct {
    ac_asr_emit_fn emit;
    void *user;
} relay;

static ac_status on_chunk(void *user, int64_t from, int64_t to, hviske_chunk_result *c)
{
    relay *r = user;
    ac_asr_chunk_word *w = c->n_words ? malloc((size_t)c->n_words * sizeof *w) : NULL;
    if (c->n_words && !w) return ac_error(AC_ERR_NOMEM, "out of memory");
    for (int i = 0; i < c->n_words; i++) {
        w[i] = (ac_asr_chunk_word){c->words[i].text, c->words[i].start, c->words[i].end};
        c->words[i].text = NULL;
    }
    ac_asr_chunk k = {from, to, c->text, c->tokens, c->n_tokens,
                      c->n_tokens ? c->logprob / (c->n_tokens + 1) : c->logprob,
                      {sizeof(ac_asr_timings), c->t_frontend, c->t_encoder, c->t_prefill, c->t_decode, c->steps},
                      w, c->n_words};
    c->text = NULL;
    c->tokens = NULL;
    ac_status s = r->emit(r->user, &k);
    free(w);
    return s;
}

static ac_status transcribe(const void *m, ac_audio_reader *r, const int64_t *spans, size_t n_spans,
                            const ac_asr_options *o, ac_scratch *scratch, ac_asr_emit_fn emit, void *user,
                            int64_t *n_read)
{
    ac_decode_options d = ac_decode_defaults();
    d.max_new_tokens = o->max_new_tokens, d.min_new_tokens = o->min_new_tokens;
    d.beam_size = o->beam_size > 0 ? o->beam_size : 1, d.length_penalty = o->length_penalty;
    d.temperature = o->temperature, d.top_k = o->top_k, d.top_p = o->top_p, d.seed = o->seed;
    hviske_options ho = {.language = o->language, .punctuation = o->punctuation, .dummy_prefix = o->prompt_prefix,
                         .word_timestamps = o->word_timestamps, .decode = d};
    relay rl = {emit, user};
    return hviske_transcribe_stream(m, r, spans, n_spans, &ho, &scratch->call, &scratch->step, on_chunk, &rl, n_read);
}

/* The prompt the options make holds pieces the model has: its language first. */
static ac_status check(const void *m, const ac_asr_options *o)
{
    int ids[16], n;
    return hviske_prompt(m, o->language, o->punctuation, o->prompt_prefix, ids, &n);
}

static const ac_asr_ops asr = {.transcribe = transcribe, .check = check};

/* A Hub repository of a package (syvai/hviske-v5.3): its folder's files. */
static const char *const hub_marks[] = {"config.json", "tokenizer.model", NULL};
static const char *const hub_needs[] = {"config.json", "tokenizer.model", "model.safetensors", NULL};
static const char *const hub_wants[] = {"generation_config.json", "preprocessor_config.json", "tokenizer_config.json",
                                        "special_tokens_map.json", NULL};
static const ac_hub_files hub = {.marks = hub_marks, .needs = hub_needs, .wants = hub_wants};

const ac_family ac_family_hviske_asr = {
    .name = "hviske_asr", .task = AC_TASK_ASR,
    .probe = probe, .load = load, .free = free_model, .rate = rate,
    .asr = &asr,
    .hub = &hub,
};
