/* Hviske v6 (whisper_qwen packages) in the family table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/family.h"
#include "base/error.h"
#include "base/file.h"
#include "models/hviske_v6/hviske_v6.h"

/* A folder whose config.json says model_type "whisper_qwen" (v5.3's says
 * cohere_asr and has tokenizer.model), or its bare model.safetensors,
 * told by the projector and the decoder's tensors that only v6 has. */
static int probe(const char *path, const ac_tensor_file *tf)
{
    if (tf) return ac_tensor_file_find(tf, "proj.weight") && ac_tensor_file_find(tf, "llm.model.embed_tokens.weight");
    if (!ac_dir_has(path, "config.json") || !ac_dir_has(path, "tokenizer.json")) return 0;
    char p[4200], *text;
    size_t n;
    snprintf(p, sizeof p, "%s/config.json", path);
    if (ac_read_file(p, 16u << 20, &text, &n)) {
        ac_error_clear();
        return 0;
    }
    /* a look, not the parse: the loader names what is wrong */
    int yes = strstr(text, "\"whisper_qwen\"") != NULL;
    free(text);
    return yes;
}

/* The folder, or the folder of its model.safetensors. */
static ac_status load(const char *path, const ac_load_options *o, void **m)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) return hv6_load(path, o->weights, (hv6_model **)m);
    char dir[4200];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    return hv6_load(dir, o->weights, (hv6_model **)m);
}
static void free_model(void *m) { hv6_free(m); }
static int rate(const void *m)
{
    (void)m;
    return HV6_RATE;
}

typedef struct {
    ac_asr_emit_fn emit;
    void *user;
} relay;

static ac_status on_chunk(void *user, int64_t from, int64_t to, hv6_chunk *c)
{
    relay *r = user;
    ac_asr_chunk k = {.start = from, .end = to, .text = c->text, .tokens = c->tokens, .n_tokens = c->n_tokens,
                      .avg_logprob = c->n_tokens ? c->logprob / (c->n_tokens + 1) : c->logprob,
                      .timings = {.frontend = c->times.frontend, .encoder = c->times.encoder,
                                  .prefill = c->times.prefill, .decode = c->times.decode, .decode_steps = c->steps}};
    c->text = NULL;
    c->tokens = NULL;
    return r->emit(r->user, &k);
}

/* The request's options as v6 takes them: --no-punctuation asks for
 * lower case without punctuation; otherwise the model formats by itself. */
static hv6_options options(const ac_asr_options *o)
{
    hv6_options h = hv6_defaults();
    if (!o->punctuation) h.cased = 0, h.punctuated = 0;
    h.beams = o->beam_size > 0 ? o->beam_size : h.beams;
    h.length_penalty = o->length_penalty;
    if (o->max_new_tokens < h.max_tokens) h.max_tokens = o->max_new_tokens;
    return h;
}

static ac_status check(const void *m, const ac_asr_options *o)
{
    (void)m;
    if (!o->language || strcmp(o->language, "da") != 0)
        return ac_error(AC_ERR_ARG, "language '%s' is not supported by this model (da)", o->language ? o->language : "");
    if (o->temperature > 0) return ac_error(AC_ERR_ARG, "hviske_v6 decodes by beam search or greedily, not by sampling");
    if (o->word_timestamps)
        return ac_error(AC_ERR_UNSUPPORTED, "hviske_v6 gives no word timestamps (its decoder has no cross-attention)");
    return AC_OK;
}

static ac_status transcribe(const void *m, ac_audio_reader *r, const int64_t *spans, size_t n_spans,
                            const ac_asr_options *o, ac_scratch *scratch, ac_asr_emit_fn emit, void *user,
                            int64_t *n_read)
{
    AC_TRY(check(m, o));
    hv6_options h = options(o);
    relay rl = {emit, user};
    return hv6_transcribe_stream(m, r, spans, n_spans, &h, &scratch->call, &scratch->step, on_chunk, &rl, n_read);
}

static const ac_asr_ops asr = {.transcribe = transcribe, .check = check};

const ac_family ac_family_hviske_v6 = {
    .name = "hviske_v6", .task = AC_TASK_ASR,
    .probe = probe, .load = load, .free = free_model, .rate = rate,
    .asr = &asr,
};
