/* Vevo2 packages in the family table: every route of speech and singing in a given voice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/family.h"
#include "base/error.h"
#include "base/log.h"
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

/* ---- its GGUF (audioc quantize) ---------------------------------------- */

static int is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The Whisper encoder's config.json when it is not the GGUF's own: in its
 * folder, or beside its weights file; "" for OpenAI's medium.pt (its dims
 * are in the pickle, and the GGUF layout carries a config.json). */
static void whisper_config_file(const vevo2_paths *p, char *out, size_t n)
{
    struct stat sb;
    out[0] = 0;
    if (stat(p->whisper, &sb) == 0 && S_ISDIR(sb.st_mode)) snprintf(out, n, "%s/config.json", p->whisper);
    else {
        const char *slash = strrchr(p->whisper, '/');
        snprintf(out, n, "%.*s/config.json", slash ? (int)(slash - p->whisper) : 1, slash ? p->whisper : ".");
    }
    if (!is_file(out)) out[0] = 0;
}

/* Each part's tensors under its description name, every file the loader
 * reads named in the description, Whisper's config embedded where the
 * package folder does not hold it. */
static ac_status pack(void *model, ac_pack *pk)
{
    vevo2_model *m = model;
    AC_TRY(vevo2_load_conversion(m));
    AC_TRY(vevo2_load_ar(m));
    const vevo2_paths *p = &m->paths;
    const char *folder_file[VEVO2_N_PARTS] = {
        [VEVO2_PART_CONTENT_STYLE] = p->content_style, [VEVO2_PART_PROSODY] = p->prosody,
        [VEVO2_PART_AR] = p->ar_dir, [VEVO2_PART_FM] = p->fm_weights, [VEVO2_PART_STATS] = p->whisper_stats,
        [VEVO2_PART_VOCODER] = p->vocoder_weights, [VEVO2_PART_WHISPER] = p->whisper,
    };
    char wcfg[VEVO2_PATH + 16] = "";
    int has_whisper = 1;
    if (!p->whisper_in_gguf) {
        whisper_config_file(p, wcfg, sizeof wcfg);
        has_whisper = wcfg[0] != 0;
        if (!has_whisper)
            ac_warn("%s carries no config.json: the GGUF is written without the Whisper encoder (give --whisper "
                    "when running it, or quantize with a whisper-medium folder)", p->whisper);
        else AC_TRY(ac_pack_file(pk, vevo2_file_default(VEVO2_FILE_WHISPER_CONFIG), wcfg));
    }
    for (int i = 0; i < VEVO2_N_PARTS; i++) {
        const char *key = i == VEVO2_PART_WHISPER && !has_whisper ? NULL : vevo2_part_key((vevo2_part)i);
        if (p->gguf_file && (i != VEVO2_PART_WHISPER || p->whisper_in_gguf))
            AC_TRY(ac_pack_part(pk, p->gguf, p->ns[i], key));
        else AC_TRY(ac_pack_part(pk, folder_file[i], NULL, key));
    }
    cJSON *root = cJSON_CreateObject(), *sources = cJSON_AddArrayToObject(root, "sources");
    cJSON *src = cJSON_CreateObject(), *roots = cJSON_AddObjectToObject(src, "roots");
    cJSON_AddItemToArray(sources, src);
    cJSON_AddStringToObject(src, "format", "gguf");
    cJSON_AddStringToObject(roots, "model", ".");
    cJSON_AddStringToObject(roots, "weights", "$gguf");
    cJSON *files = cJSON_AddObjectToObject(src, "files"), *tensors = cJSON_AddObjectToObject(src, "tensors");
    for (int i = 0; i < VEVO2_N_FILES; i++) {
        const char *rel = p->gguf_file ? p->file[i] : vevo2_file_default((vevo2_file)i);
        char full[2 * VEVO2_PATH + 8];
        snprintf(full, sizeof full, "%s/%s", p->dir, rel);
        int there = p->gguf_file ? vevo2_embedded(p, (vevo2_file)i) != NULL : is_file(full);
        if (i == VEVO2_FILE_WHISPER_CONFIG && !p->whisper_in_gguf) {
            rel = vevo2_file_default(VEVO2_FILE_WHISPER_CONFIG);
            there = has_whisper;
        }
        if (!there) continue;
        snprintf(full, sizeof full, "model:%s", rel);
        cJSON_AddStringToObject(files, vevo2_file_key((vevo2_file)i), full);
    }
    for (int i = 0; i < VEVO2_N_PARTS; i++) {
        if (i == VEVO2_PART_WHISPER && !has_whisper) continue;
        cJSON *t = cJSON_AddObjectToObject(tensors, vevo2_part_key((vevo2_part)i));
        cJSON_AddStringToObject(t, "source", "weights:");
        cJSON_AddStringToObject(t, "prefix", vevo2_part_key((vevo2_part)i));
    }
    cJSON_AddNumberToObject(root, "schema_version", 1);
    cJSON_AddStringToObject(root, "family", "vevo2");
    char *json = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!json) return ac_error(AC_ERR_NOMEM, "out of memory");
    ac_status s = ac_pack_spec(pk, "vevo2", json);
    cJSON_free(json);
    return s;
}
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

static ac_status run(void *m, const ac_voice_clips *c, const ac_voice_options *o, ac_voice_result *out,
                     ac_voice_timings *timings)
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
    *timings = (ac_voice_timings){.whisper = t->whisper, .pitch = t->pitch, .chroma = t->chroma,
                                      .tokenizer = t->tokenizer, .timbre_mel = t->timbre_mel, .fm = t->fm,
                                      .vocoder = t->vocoder, .fm_steps = t->fm_steps, .ar_prefill = t->ar_prefill,
                                      .ar_decode = t->ar_decode, .ar_tokens = t->ar_tokens, .chunks = t->chunks,
                                      .parts = t->parts};
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
    .pack = pack,
};
