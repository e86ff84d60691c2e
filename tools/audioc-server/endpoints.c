/* The API: health, the model list, transcription (OpenAI's multipart
 * fields plus beam_size, vad and stream) and VAD. Requests are checked on
 * the connection's thread; the model work runs on a queue worker. */
#include <stdlib.h>
#include <string.h>

#include "endpoints.h"
#include "json_out.h"
#include "transcript_out.h"
#include "vad_out.h"

typedef enum { FMT_JSON, FMT_TEXT, FMT_SRT, FMT_VTT, FMT_VERBOSE_JSON } format;

typedef struct {
    const served_model *model;
    const form_field *file;
    format fmt;
    int stream, emitted;
    char language[32];
    ac_asr_options asr;
    ac_vad_options vad;
    int probs;
    int words;    /* timestamp_granularities has "word" */
} task;

/* ---- models --------------------------------------------------------------- */

const served_model *find_model(const server_config *cfg, const char *id, ac_task kind)
{
    for (int i = 0; i < cfg->n_models; i++) {
        const served_model *m = &cfg->models[i];
        if (m->task == kind && (!id || strcmp(m->id, id) == 0)) return m;
    }
    return NULL;
}

void endpoint_health(job *j)
{
    reply *r = &j->result;
    buffer_add(&r->body, "{\"status\":\"ok\"}\n", 16);
    r->status = 200;
    r->content_type = "application/json";
}

/* A model object as OpenAI's /v1/models lists it, plus family and task
 * (and a voice model's routes). */
static void write_model(FILE *f, const served_model *m)
{
    fputs("{\"id\":", f);
    json_string(f, m->id);
    fprintf(f, ",\"object\":\"model\",\"created\":0,\"owned_by\":\"audio.c\",\"family\":\"%s\",\"task\":\"%s\"",
            m->family, ac_task_name(m->task));
    const char *const *routes = m->task == AC_TASK_VOICE ? ac_voice_routes(m->model) : NULL;
    if (routes) {
        fputs(",\"routes\":[", f);
        for (int i = 0; routes[i]; i++) {
            if (i) fputc(',', f);
            json_string(f, routes[i]);
        }
        fputc(']', f);
    }
    fputc('}', f);
}

void endpoint_models(job *j)
{
    const server_config *cfg = j->req->cfg;
    reply *r = &j->result;
    reply_body b;
    FILE *f = body_open(&b, r);
    if (!f) return;
    fputs("{\"object\":\"list\",\"data\":[", f);
    for (int i = 0; i < cfg->n_models; i++) {
        if (i) fputc(',', f);
        write_model(f, &cfg->models[i]);
    }
    fputs("]}\n", f);
    body_close(&b, r, 200, "application/json");
}

void endpoint_model(job *j)
{
    const server_config *cfg = j->req->cfg;
    const char *id = j->req->id;
    reply *r = &j->result;
    for (int i = 0; i < cfg->n_models; i++) {
        if (strcmp(cfg->models[i].id, id) != 0) continue;
        reply_body b;
        FILE *f = body_open(&b, r);
        if (!f) return;
        write_model(f, &cfg->models[i]);
        fputc('\n', f);
        body_close(&b, r, 200, "application/json");
        return;
    }
    reply_error(r, 404, "model", "no model '%s' (see GET /v1/models)", id);
}

/* ---- form fields -------------------------------------------------------- */

static const char *text_field(const form *f, const char *name)
{
    const form_field *fl = form_get(f, name);
    return fl && !fl->is_file ? fl->value.data : NULL;
}

static int bool_field(const form *f, const char *name, int *out, reply *r)
{
    const char *v = text_field(f, name);
    if (!v || !field_bool(v, out)) return 0;
    reply_error(r, 400, name, "%s must be true or false, not '%s'", name, v);
    return -1;
}

static int number_field(const form *f, const char *name, double lo, double hi, int integer, double *out, reply *r)
{
    const char *v = text_field(f, name);
    if (!v || !*v || !field_number(v, lo, hi, integer, out)) return 0;
    reply_error(r, 400, name, "%s must be %s in [%g, %g], not '%s'", name, integer ? "an integer" : "a number", lo,
                hi, v);
    return -1;
}

/* The audio upload and the model; fills T or R. */
static int common_fields(const request_ctx *q, ac_task kind, task *t, reply *r)
{
    const form *f = q->form;
    const char *id = text_field(f, "model");
    t->model = find_model(q->cfg, id && *id ? id : NULL, kind);
    if (!t->model) {
        if (id && *id) reply_error(r, 404, "model", "no %s model '%s' (see GET /v1/models)",
                                   kind == AC_TASK_VAD ? "VAD" : "transcription", id);
        else reply_error(r, 400, "model", "no %s model is loaded", kind == AC_TASK_VAD ? "VAD" : "transcription");
        return -1;
    }
    t->file = form_get(f, "file");
    if (!t->file) {
        reply_error(r, 400, "file", "no 'file' field: send the audio as multipart/form-data field 'file'");
        return -1;
    }
    if (t->file->value.len == 0) {
        reply_error(r, 400, "file", "the uploaded file '%s' is empty", t->file->filename);
        return -1;
    }
    return 0;
}

/* An error of the library as an HTTP status: bad audio or options are the client's. */
static void library_error(reply *r, ac_status s, const char *filename)
{
    const char *msg = ac_last_error();
    if (s == AC_ERR_FORMAT || s == AC_ERR_UNSUPPORTED)
        reply_error(r, 400, "file", "%s (the uploaded file '%s')", msg, filename);
    else if (s == AC_ERR_ARG) reply_error(r, 400, strstr(msg, "language") ? "language" : NULL, "%s", msg);
    else reply_error(r, 500, NULL, "%s", msg);
}

/* ---- transcription ------------------------------------------------------ */

/* A delta event: the segment's text and its times in seconds (beyond
 * OpenAI's fields, so that a client can show them as they come). */
static void push_delta(job *j, const char *text, double start, double end)
{
    char *mem = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&mem, &len);
    if (!f) return;
    fputs("data: {\"type\":\"transcript.text.delta\",\"delta\":", f);
    json_string(f, text);
    fprintf(f, ",\"start\":%.3f,\"end\":%.3f}\n\n", start, end);
    if (fclose(f) == 0) queue_push_event(j, mem, len);
    free(mem);
}

/* The done event: the text, and with a response_format other than json
 * the answer it would have had without stream (verbose_json as an object,
 * text, srt and vtt as a string), so that one run gives both. */
static void push_done(job *j, const char *text, const reply *r, format fmt)
{
    char *mem = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&mem, &len);
    if (!f) return;
    fputs("data: {\"type\":\"transcript.text.done\",\"text\":", f);
    json_string(f, text);
    if (fmt != FMT_JSON && r->status == 200 && r->body.data) {
        fputs(",\"response\":", f);
        if (fmt == FMT_VERBOSE_JSON) {
            size_t n = r->body.len;
            while (n && r->body.data[n - 1] == '\n') n--;
            fwrite(r->body.data, 1, n, f);
        } else {
            json_string(f, r->body.data);
        }
    }
    fputs("}\n\n", f);
    if (fclose(f) == 0) queue_push_event(j, mem, len);
    free(mem);
}

static int on_segment(const ac_asr_segment *g, void *user)
{
    job *j = user;
    task *t = j->ctx;
    if (job_stopped(j)) return 1;
    if (t->stream && g->text[0]) {
        int nospace = !strcmp(t->language, "ja") || !strcmp(t->language, "zh");
        size_t n = strlen(g->text) + 2;
        char *d = malloc(n);
        if (!d) return 1;
        snprintf(d, n, "%s%s", t->emitted && !nospace ? " " : "", g->text);
        push_delta(j, d, g->start, g->end);
        free(d);
        t->emitted = 1;
    }
    return 0;
}

void endpoint_transcription_run(job *j)
{
    task *t = j->ctx;
    ac_asr_options o = t->asr;
    o.on_segment = on_segment;
    o.user = j;
    ac_asr_result *res;
    ac_audio_input in = ac_input_memory(t->file->value.data, t->file->value.len, NULL);
    ac_status s = ac_asr_transcribe(t->model->model, &in, &o, &res);
    if (s == AC_ERR_CANCELLED) {
        if (t->stream && t->emitted) push_stop_event(j);
        return;
    }
    if (s) {
        library_error(&j->result, s, t->file->filename);
        /* once events have gone out the status is sent: the error goes in the stream */
        if (t->stream && t->emitted) push_text_event(j, "error", "message", ac_last_error());
        return;
    }
    reply_body b;
    FILE *f = body_open(&b, &j->result);
    if (f) {
        static const transcript_format as[] = {TRANSCRIPT_JSON, TRANSCRIPT_TEXT, TRANSCRIPT_SRT, TRANSCRIPT_VTT,
                                               TRANSCRIPT_VERBOSE_JSON};
        static const char *const types[] = {"application/json", "text/plain; charset=utf-8",
                                            "application/x-subrip; charset=utf-8", "text/vtt; charset=utf-8",
                                            "application/json"};
        transcript_meta m = {NULL, t->language, t->asr.temperature, 1, t->words, 0, 0};
        transcript_write(f, as[t->fmt], res, &m);
        const char *type = types[t->fmt];
        body_close(&b, &j->result, 200, type);
    }
    if (t->stream) push_done(j, res->text, &j->result, t->fmt);
    ac_asr_result_free(res);
}

/* J's task with its model and upload; NULL (the error in R) when they are missing. */
static task *new_task(job *j, ac_task kind, reply *r)
{
    task *t = calloc(1, sizeof *t);
    if (!t) {
        reply_error(r, 500, NULL, "out of memory");
        return NULL;
    }
    j->ctx = t;
    ac_asr_options_default(&t->asr);
    ac_vad_options_default(&t->vad);
    return common_fields(j->req, kind, t, r) ? NULL : t;
}

/* timestamp_granularities[] (repeated, as the SDKs send it): "segment"
 * (always given) and "word" (sets *WORDS). */
static int granularities(const form *f, int *words, reply *r)
{
    for (int i = 0; i < form_count(f); i++) {
        const form_field *fl = form_at(f, i);
        if (strcmp(fl->name, "timestamp_granularities[]") != 0 && strcmp(fl->name, "timestamp_granularities") != 0)
            continue;
        const char *v = fl->is_file ? "" : fl->value.data;
        if (strcmp(v, "word") == 0) *words = 1;
        else if (strcmp(v, "segment") != 0) {
            reply_error(r, 400, "timestamp_granularities", "timestamp_granularities: '%s' is not word or segment", v);
            return -1;
        }
    }
    return 0;
}

int transcription_field_known(const char *name)
{
    static const char *const names[] = {"file", "model", "language", "prompt", "response_format", "temperature",
                                        "timestamp_granularities[]", "timestamp_granularities", "stream", "include[]",
                                        "chunking_strategy", "beam_size", "vad"};
    return field_choice(name, names, sizeof names / sizeof *names) >= 0;
}

int vad_field_known(const char *name)
{
    static const char *const names[] = {"file", "model", "threshold", "min_speech_ms", "min_silence_ms",
                                        "speech_pad_ms", "probs"};
    return field_choice(name, names, sizeof names / sizeof *names) >= 0;
}

/* OpenAI's fields a transcription takes and does not act on: the answer
 * says so in a Warning header (the JSON answer has no room for it). */
static const char *const IGNORED[] = {"prompt", "include[]", "chunking_strategy"};
static const char *const IGNORED_WARNING[] = {
    "Warning", "299 audioc \"prompt, include[] and chunking_strategy are accepted for OpenAI compatibility and not "
    "used\"", NULL};

static int any_ignored(const form *f)
{
    for (size_t i = 0; i < sizeof IGNORED / sizeof *IGNORED; i++) {
        const char *v = text_field(f, IGNORED[i]);
        if (v && *v) return 1;
    }
    return 0;
}

int endpoint_transcription_prepare(job *j, reply *r)
{
    const form *f = j->req->form;
    task *t = new_task(j, AC_TASK_ASR, r);
    if (!t) return -1;
    if (any_ignored(f)) j->result.headers = IGNORED_WARNING;
    const char *v = text_field(f, "response_format");
    static const char *const names[] = {"json", "text", "srt", "vtt", "verbose_json"};
    t->fmt = FMT_JSON;
    if (v && *v) {
        int k = field_choice(v, names, 5);
        if (k < 0) {
            reply_error(r, 400, "response_format", "response_format '%s' is not one of json, text, srt, vtt, "
                        "verbose_json", v);
            return -1;
        }
        t->fmt = (format)k;
    }
    v = text_field(f, "language");
    snprintf(t->language, sizeof t->language, "%s", v && *v ? v : "da");
    t->asr.language = t->language;
    double temp = 0, beams = 0; /* 0: the model's default */
    const served_model *vad_model = find_model(j->req->cfg, NULL, AC_TASK_VAD);
    int vad = vad_model && !j->req->cfg->no_vad;
    if (number_field(f, "temperature", 0, 2, 0, &temp, r) || number_field(f, "beam_size", 1, 16, 1, &beams, r) ||
        bool_field(f, "vad", &vad, r) || bool_field(f, "stream", &t->stream, r))
        return -1;
    if (temp > 0 && beams > 1) {
        reply_error(r, 400, "beam_size", "sampling (temperature > 0) works with beam_size 1 only");
        return -1;
    }
    if (granularities(f, &t->words, r)) return -1;
    t->asr.word_timestamps = t->words;
    j->stream = t->stream;
    t->asr.temperature = (float)temp;
    t->asr.beam_size = (int)beams;
    if (vad) {
        if (!vad_model) {
            reply_error(r, 400, "vad", "vad=true needs a VAD model: start the server with --model ID=VAD_WEIGHTS");
            return -1;
        }
        t->asr.vad = vad_model->model;
    }
    return 0;
}

/* ---- voice activity ----------------------------------------------------- */

void endpoint_vad_run(job *j)
{
    task *t = j->ctx;
    ac_vad_result *res;
    ac_audio_input in = ac_input_memory(t->file->value.data, t->file->value.len, NULL);
    ac_status s = ac_vad_run(t->model->model, &in, &t->vad, &res);
    if (s) {
        library_error(&j->result, s, t->file->filename);
        return;
    }
    reply_body b;
    FILE *f = body_open(&b, &j->result);
    if (f) {
        vad_write_json(f, "model", t->model->id, t->model->family, res, t->probs);
        body_close(&b, &j->result, 200, "application/json");
    }
    ac_vad_result_free(res);
}

int endpoint_vad_prepare(job *j, reply *r)
{
    const form *f = j->req->form;
    task *t = new_task(j, AC_TASK_VAD, r);
    if (!t) return -1;
    double th = t->vad.threshold, speech = t->vad.min_speech_ms, silence = t->vad.min_silence_ms,
           pad = t->vad.speech_pad_ms;
    if (number_field(f, "threshold", 0, 1, 0, &th, r) || number_field(f, "min_speech_ms", 0, 86400000, 1, &speech, r) ||
        number_field(f, "min_silence_ms", 0, 86400000, 1, &silence, r) ||
        number_field(f, "speech_pad_ms", 0, 86400000, 1, &pad, r) || bool_field(f, "probs", &t->probs, r))
        return -1;
    t->vad.threshold = (float)th;
    t->vad.min_speech_ms = (int)speech;
    t->vad.min_silence_ms = (int)silence;
    t->vad.speech_pad_ms = (int)pad;
    t->vad.keep_probs = t->probs;
    return 0;
}
