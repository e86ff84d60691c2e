/* Vevo2 packages in the family table: every route of speech and singing in a given voice. */
#include <stdio.h>
#include <string.h>

#include "api/family.h"
#include "base/progress.h"
#include "base/timing.h"
#include "models/vevo2/vevo2.h"

/* A package folder, or the ggml runtime's single GGUF file of one. */
static int probe(const char *path, const ac_tensor_file *tf) { return tf ? vevo2_probe_gguf(tf) : vevo2_probe(path); }

static ac_status load(const char *path, const ac_load_options *o, void **m)
{
    AC_TRY(vevo2_load(path, o->whisper, (vevo2_model **)m));
    ((vevo2_model *)*m)->weights = o->weights; /* its parts load on the first run */
    return AC_OK;
}

static void free_model(void *m) { vevo2_free(m); }
static int rate(const void *m) { return ((const vevo2_model *)m)->mel.sample_rate; }

/* The AR tokens and flow-matching steps on the terminal, and the caller's callbacks. */
typedef struct {
    const ac_voice_options *o;
    ac_progress bar;
    const char *stage;   /* the one the bar shows */
    char label[96];      /* long text: "chunk I of N (about S s left): " and the stage */
    double t0;           /* when the first chunk began */
    int chunk, n_chunks;
} relay;

static int on_progress(void *user, const char *stage, int done, int total)
{
    relay *r = user;
    if (strcmp(stage, "chunk") == 0) {   /* DONE chunks of TOTAL are spoken */
        if (!done) r->t0 = ac_now();
        r->chunk = done, r->n_chunks = total;
    }
    const char *label = strcmp(stage, "fm") == 0 ? "flow matching" : strcmp(stage, "ar") == 0 ? "AR tokens" : NULL;
    if (label && done == 1) {
        ac_progress_end(&r->bar);
        if (r->n_chunks > 1) {
            double left = r->chunk ? (ac_now() - r->t0) / r->chunk * (r->n_chunks - r->chunk) : -1;
            int k = snprintf(r->label, sizeof r->label, "chunk %d of %d", r->chunk + 1, r->n_chunks);
            if (left >= 0) k += snprintf(r->label + k, sizeof r->label - (size_t)k, " (about %.0f s left)", left);
            snprintf(r->label + k, sizeof r->label - (size_t)k, ": %s", label);
            label = r->label;
        }
        ac_progress_begin(&r->bar, label, total);
        r->stage = stage;
    }
    if (label && r->stage && strcmp(r->stage, stage) == 0) ac_progress_update(&r->bar, done);
    if (!label || done == total) {
        ac_progress_end(&r->bar);
        r->stage = NULL;
    }
    return r->o->on_progress && r->o->on_progress(stage, done, total, r->o->user);
}

static int on_audio(void *user, const float *wav, int64_t n, int chunk, int n_chunks)
{
    const ac_voice_options *o = ((relay *)user)->o;
    return o->on_audio && o->on_audio(wav, n, chunk, n_chunks, o->user);
}

static ac_status run(void *m, const ac_voice_clips *c, const ac_voice_options *o, ac_voice_result *out)
{
    const vevo2_route *route = vevo2_route_find(o->route ? o->route : "style_preserved_vc");
    if (!route) return AC_ERR_ARG;
    relay r = {.o = o};
    vevo2_options vo = vevo2_defaults(route);
    vo.use_prosody_code = o->use_prosody_code;
    vo.use_pitch_shift = o->pitch_mode == AC_PITCH_NONE ? 0 : o->use_pitch_shift;
    vo.pitch_mode = o->pitch_mode == AC_PITCH_FIXED ? VEVO2_PITCH_FIXED : VEVO2_PITCH_ESTIMATE;
    vo.pitch_shift = o->pitch_shift;
    vo.style_pitch_shift = o->style_pitch_shift;
    vo.target_duration = o->target_duration;
    vo.reference_duration = o->reference_duration;
    if (o->temperature >= 0) vo.sampler.temperature = o->temperature;
    if (o->top_k >= 0) vo.sampler.top_k = o->top_k;
    if (o->top_p >= 0) vo.sampler.top_p = o->top_p;
    if (o->repetition_penalty >= 0) vo.sampler.repetition_penalty = o->repetition_penalty;
    if (o->min_new_tokens >= 0) vo.sampler.min_new_tokens = o->min_new_tokens;
    if (o->max_new_tokens >= 0) vo.max_new_tokens = o->max_new_tokens;
    vo.max_seconds = o->max_seconds;
    vo.steps = o->steps;
    vo.speed = o->speed;
    vo.seed = o->seed;
    vo.noise = o->noise;
    vo.n_noise = o->n_noise;
    vo.progress = on_progress;
    vo.progress_user = &r;
    vo.on_audio = on_audio;
    vo.audio_user = &r;
    const vevo2_inputs in = {{c->source.x, c->source.n}, {c->voice.x, c->voice.n}, {c->style.x, c->style.n},
                             {c->prosody.x, c->prosody.n}, o->text, o->style_text, o->target_voice_text,
                             o->source_text};
    vevo2_output res;
    ac_status s = vevo2_run(m, &in, &vo, &res);
    ac_progress_end(&r.bar);
    const vevo2_timings *t = &res.t;
    out->samples = res.wav;
    out->n_samples = res.n;
    out->pitch_shift = res.shift;
    out->style_pitch_shift = res.style_shift;
    out->timings = (ac_voice_timings){.whisper = t->whisper, .pitch = t->pitch, .chroma = t->chroma,
                                      .tokenizer = t->tokenizer, .timbre_mel = t->timbre_mel, .fm = t->fm,
                                      .vocoder = t->vocoder, .fm_steps = t->fm_steps, .ar_prefill = t->ar_prefill,
                                      .ar_decode = t->ar_decode, .ar_tokens = t->ar_tokens, .chunks = t->chunks};
    return s;
}

static ac_status check_voice(const void *m, const ac_voice_clip *c)
{
    return vevo2_check_clip(c->x, c->n, rate(m), "target voice");
}

static const ac_voice_ops voice = {.run = run, .routes = vevo2_route_names, .check_voice = check_voice};
/* A Hub repository of the package (RMSnow/Vevo2): the weights and configs
 * each route reads, not the vocoder's discriminators (vocoder/model_1,
 * model_2) or training state; and the Whisper-medium encoder from
 * openai/whisper-medium (its Hugging Face folder, which the loader reads). */
#define FM "acoustic_modeling/fm_emilia101k_singnet7k_repa/"
#define AR "contentstyle_modeling/posttrained/"
static const char *const hub_marks[] = {FM "config.json", "vocoder/config.json", NULL};
static const char *const hub_needs[] = {FM "config.json",
                                        FM "model.safetensors",
                                        "tokenizer/contentstyle_fvq16384_12.5hz/model.safetensors",
                                        "tokenizer/prosody_fvq512_6.25hz/model.safetensors",
                                        "vocoder/config.json",
                                        "vocoder/model.safetensors",
                                        AR "config.json",
                                        AR "model.safetensors",
                                        NULL};
static const char *const hub_wants[] = {FM "whisper_stats.pt", FM "whisper_stats.safetensors", "tokenizer/*/*.json",
                                        AR "*.json", AR "*.txt", NULL};
static const char *const whisper_files[] = {"config.json", "model.safetensors", NULL};
static const ac_hub_files whisper_hub = {.needs = whisper_files};
static const ac_hub_files hub = {.marks = hub_marks, .needs = hub_needs, .wants = hub_wants,
                                 .companion = "openai/whisper-medium", .companion_files = &whisper_hub};
#undef FM
#undef AR

const ac_family ac_family_vevo2 = {
    .name = "vevo2", .task = AC_TASK_VOICE,
    .probe = probe, .load = load, .free = free_model, .rate = rate,
    .voice = &voice,
    .hub = &hub,
};
