/* Hviske v6 (whisper_qwen packages) in the family table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/family.h"
#include "base/error.h"
#include "base/file.h"
#include "models/hviske_v6/hviske_v6.h"

/* Whether the config.json text TEXT (N bytes) is v6's: a look, not the
 * parse (the loader names what is wrong). */
static int v6_config(const char *text, size_t n)
{
    static const char key[] = "\"whisper_qwen\"";
    size_t k = sizeof key - 1;
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(text + i, key, k) == 0) return 1;
    return 0;
}

/* A folder whose config.json says model_type "whisper_qwen" (v5.3's says
 * cohere_asr and has tokenizer.model), its bare model.safetensors, told by
 * the projector and the decoder's tensors that only v6 has, or the ggml
 * runtime's GGUF: named hviske_asr_v6 by its package description, else
 * told by those tensors under "weights/" or by its embedded config.json. */
static int probe(const char *path, const ac_tensor_file *tf)
{
    if (tf) {
        const char *family = ac_tensor_file_meta(tf, "audiocpp.model_spec.family");
        if (family) return strcmp(family, "hviske_asr_v6") == 0;
        if (ac_tensor_file_find(tf, "proj.weight") && ac_tensor_file_find(tf, "llm.model.embed_tokens.weight"))
            return 1;
        if (ac_tensor_file_find(tf, "weights/proj.weight") &&
            ac_tensor_file_find(tf, "weights/llm.model.embed_tokens.weight"))
            return 1;
        const ac_embedded_file *e = ac_tensor_file_embedded(tf, "config.json");
        return e && v6_config((const char *)e->data, e->size);
    }
    if (!ac_dir_has(path, "config.json") || !ac_dir_has(path, "tokenizer.json")) return 0;
    char p[4200], *text;
    size_t n;
    snprintf(p, sizeof p, "%s/config.json", path);
    if (ac_read_file(p, 16u << 20, &text, &n)) {
        ac_error_clear();
        return 0;
    }
    int yes = v6_config(text, n);
    free(text);
    return yes;
}

static ac_status load(const char *path, const ac_load_options *o, void **m)
{
    return hv6_load(path, o->weights, (hv6_model **)m);
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
                      .timings = {.struct_size = sizeof(ac_asr_timings), .frontend = c->times.frontend,
                                  .encoder = c->times.encoder,
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

/* audioc quantize: the runtime's layout, the tensors under "weights/" and
 * the description naming that source (the folder's files are embedded as
 * they are). */
static ac_status pack(void *model, ac_pack *p)
{
    const hv6_model *m = model;
    AC_TRY(ac_pack_part(p, m->weights_path, m->gguf ? HV6_GGUF_NS : NULL, "weights"));
    return ac_pack_spec(p, "hviske_asr_v6",
                        "{\"family\": \"hviske_asr_v6\", \"sources\": [{\"format\": \"gguf\", \"tensors\": "
                        "{\"weights\": {\"source\": \"weights:\", \"prefix\": \"weights\"}}}]}");
}

/* A Hub repository of a package (syvai/hviske-v6): its folder's files. */
static const char *const hub_marks[] = {"config.json", "tokenizer.json", NULL};
static const char *const hub_unless[] = {"tokenizer.model", NULL}; /* v5.3's */
static const char *const hub_needs[] = {"config.json", "tokenizer.json", "model.safetensors", NULL};
static const char *const hub_wants[] = {"tokenizer_config.json", "generation_config.json", NULL};
static const ac_hub_files hub = {.marks = hub_marks, .unless = hub_unless, .needs = hub_needs, .wants = hub_wants};

const ac_family ac_family_hviske_v6 = {
    .name = "hviske_v6", .task = AC_TASK_ASR,
    .probe = probe, .load = load, .free = free_model, .rate = rate,
    .asr = &asr,
    .pack = pack,
    .hub = &hub,
};
