/* The voice endpoints: POST /v1/audio/speech (OpenAI's JSON body: text in
 * a reference voice), GET /v1/audio/voices (the --voice references) and
 * POST /v1/audio/conversions (multipart: a recording along one of Vevo2's
 * routes). Requests are checked on the connection's thread; the model work
 * runs on a queue worker, as transcription does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "speech.h"

/* response_format: the names, what ac_audio_encode calls them, the Content-Type */
static const char *const formats[] = {"wav", "flac", "pcm", "mp3", "opus"};
static const char *const types[] = {"audio/wav", "audio/flac", "audio/pcm", "audio/mpeg", "audio/ogg"};
enum { N_FORMATS = sizeof formats / sizeof *formats };

typedef struct {
    const server_config *cfg;
    const served_model *model;
    int fmt, sse, emitted;
    const char *upload;          /* the source upload's name in messages, or NULL (speech from text) */
    ac_audio_input source, refs[3];   /* refs: target voice, style, prosody */
    ac_voice_options opt;
    char route[64];
    char text[];                 /* speech: the input, copied out of the body */
} voice_task;

/* ---- replies ------------------------------------------------------------- */

void endpoint_voices(job *j)
{
    const server_config *cfg = j->req->cfg;
    reply *r = &j->result;
    reply_body b;
    FILE *f = body_open(&b, r);
    if (!f) return;
    fputs("{\"object\":\"list\",\"data\":[", f);
    for (int i = 0; voice_at(cfg, i); i++) {
        const served_voice *v = voice_at(cfg, i);
        fputs(i ? ",{\"id\":" : "{\"id\":", f);
        json_string(f, v->id);
        fprintf(f, ",\"object\":\"voice\",\"duration\":%.3f,\"has_transcript\":%s}", (double)v->n / VOICE_RATE,
                v->transcript ? "true" : "false");
    }
    fputs("]}\n", f);
    body_close(&b, r, 200, "application/json");
}

static void push_event(job *j, const char *head, const char *body, size_t n, const char *tail)
{
    buffer b = {0};
    if (!buffer_add(&b, head, strlen(head)) && !buffer_add(&b, body, n) && !buffer_add(&b, tail, strlen(tail)))
        queue_push_event(j, b.data, b.len);
    buffer_free(&b);
}

/* N bytes of DATA in base64 (RFC 4648), NUL-terminated; NULL out of memory. */
static char *base64(const unsigned char *d, size_t n, size_t *len)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0) | (i + 2 < n ? d[i + 2] : 0);
        *o++ = abc[v >> 18 & 63];
        *o++ = abc[v >> 12 & 63];
        *o++ = i + 1 < n ? abc[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? abc[v & 63] : '=';
    }
    *o = 0;
    *len = (size_t)(o - out);
    return out;
}

/* A library error as an HTTP status: bad text, references or options are the client's. */
static void voice_error(reply *r, ac_status s, const voice_task *t)
{
    const char *msg = ac_last_error();
    /* what the message is about (after "route NAME: ", whose name may hold any word), and the fields
     * that name it: the conversion form's, the speech body's (where a source can only come with
     * another route, on /v1/audio/conversions) */
    static const char *const needles[] = {"min tokens", "prosody", "style", "target voice", "source", "word", "text",
                                          "route"};
    static const char *const form_names[] = {"min_tokens", "prosody_ref", "style_ref", "voice", "file", "text", "text",
                                             "route"};
    static const char *const speech_names[] = {"min_tokens", "prosody_voice", "style_voice", "voice", "route", "input",
                                               "input", "route"};
    const char *about = strncmp(msg, "route ", 6) == 0 && strchr(msg, ':') ? strchr(msg, ':') : msg;
    const char *param = NULL;
    size_t k = 0;
    for (; k < sizeof needles / sizeof *needles && !param; k++)
        if (strstr(about, needles[k])) param = (t->upload ? form_names : speech_names)[k];
    int about_upload = t->upload && param && strcmp(param, "file") == 0;
    int needs_source = !t->upload && param && strcmp(needles[k - 1], "source") == 0;
    if (s == AC_ERR_ARG || s == AC_ERR_FORMAT || s == AC_ERR_UNSUPPORTED)
        reply_error(r, 400, param, "%s%s%s%s%s", msg, about_upload ? " (the uploaded file '" : "",
                    about_upload ? t->upload : "", about_upload ? "')" : "",
                    needs_source ? ": this route converts a recording (POST /v1/audio/conversions)" : "");
    else reply_error(r, 500, NULL, "%s", msg);
}

/* ---- the work ---------------------------------------------------------- */

static int on_progress(const char *stage, int done, int total, void *user)
{
    (void)stage, (void)done, (void)total;
    return job_stopped(user) != 0;
}

/* Each text chunk as soon as it is vocoded: one delta event, the chunk encoded in the response format. */
static int on_audio(const float *x, int64_t n, int chunk, int n_chunks, void *user)
{
    job *j = user;
    voice_task *t = j->ctx;
    (void)chunk, (void)n_chunks;
    if (job_stopped(j)) return 1;
    if (!t->sse) return 0;
    void *data;
    size_t size, len;
    if (ac_audio_encode(formats[t->fmt], x, n, 1, VOICE_RATE, 1, &data, &size) != AC_OK) return 1;
    char *b64 = base64(data, size, &len);
    ac_free(data);
    if (!b64) return 1;
    push_event(j, "data: {\"type\":\"speech.audio.delta\",\"audio\":\"", b64, len, "\"}\n\n");
    free(b64);
    t->emitted = 1;
    return 0;
}

void endpoint_voice_run(job *j)
{
    voice_task *t = j->ctx;
    t->opt.on_progress = on_progress;
    t->opt.on_audio = on_audio;
    t->opt.user = j;
    ac_voice_result *res;
    ac_status s = t->upload ? ac_voice_convert(t->model->model, &t->source, &t->opt, &res)
                            : ac_voice_speak(t->model->model, t->opt.text, &t->opt, &res);
    if (s == AC_ERR_CANCELLED) {
        if (t->emitted) push_stop_event(j);
        return;
    }
    if (s) {
        voice_error(&j->result, s, t);
        /* once events have gone out the status is sent: the error goes in the stream */
        if (t->emitted) push_text_event(j, "error", "message", ac_last_error());
        return;
    }
    if (t->sse) {
        char done[160];
        int n = snprintf(done, sizeof done, "{\"type\":\"speech.audio.done\",\"duration\":%.3f,\"chunks\":%d}",
                         (double)res->n_samples / res->sample_rate, res->timings->chunks);
        push_event(j, "data: ", done, (size_t)n, "\n\n");
    } else {
        void *data;
        size_t size;
        if (ac_audio_encode(formats[t->fmt], res->samples, res->n_samples, 1, res->sample_rate, 1, &data, &size))
            reply_error(&j->result, 500, NULL, "%s", ac_last_error());
        else {
            buffer_free(&j->result.body);
            /* the library's buffer becomes the body: ac_free is free */
            j->result.body = (buffer){data, size, size};
            j->result.status = 200;
            j->result.content_type = types[t->fmt];
        }
    }
    ac_voice_result_free(res);
}

/* ---- checking a request ------------------------------------------------- */

static voice_task *new_task(job *j, size_t text_len, reply *r)
{
    voice_task *t = calloc(1, sizeof *t + text_len + 1);
    if (!t) {
        reply_error(r, 500, NULL, "out of memory");
        return NULL;
    }
    j->ctx = t;
    t->cfg = j->req->cfg;
    ac_voice_options_default(&t->opt);
    t->opt.max_seconds = t->cfg->max_speech_seconds;
    return t;
}

static int pick_model(voice_task *t, const char *id, reply *r)
{
    t->model = find_model(t->cfg, id && *id ? id : NULL, AC_TASK_VOICE);
    if (t->model) return 0;
    if (id && *id) reply_error(r, 404, "model", "no voice model '%s' (see GET /v1/models)", id);
    else reply_error(r, 400, "model", "no voice model is loaded: start the server with --model ID=VEVO2_PACKAGE");
    return -1;
}

static int pick_route(voice_task *t, const char *name, reply *r)
{
    const char *const *routes = ac_voice_routes(t->model->model);
    for (int i = 0; routes && routes[i]; i++)
        if (strcmp(routes[i], name) == 0) {
            snprintf(t->route, sizeof t->route, "%s", name);
            t->opt.route = t->route;
            return 0;
        }
    char list[512] = "";
    for (int i = 0; routes && routes[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", routes[i]);
    reply_error(r, 400, "route", "unknown route '%.64s': one of %s", name, list);
    return -1;
}

/* FORMAT (NULL: DEF) into t->fmt, if this build can write it. */
static int pick_format(voice_task *t, const char *format, const char *def, reply *r)
{
    const char *name = format && *format ? format : def;
    t->fmt = field_choice(name, formats, N_FORMATS);
    if (t->fmt < 0) {
        reply_error(r, 400, "response_format", "response_format '%.32s' is not one of wav, flac, pcm, mp3, opus",
                    name);
        return -1;
    }
    /* whether this build's libsndfile writes it: tried once per format, by the first request that asks */
    static _Atomic int writable[N_FORMATS];   /* 0 not tried, 1 yes, -1 no */
    if (!atomic_load(&writable[t->fmt])) {
        static const float blip[480];
        void *data;
        size_t size;
        int ok = ac_audio_encode(formats[t->fmt], blip, 480, 1, VOICE_RATE, 1, &data, &size) == AC_OK;
        if (ok) ac_free(data);
        atomic_store(&writable[t->fmt], ok ? 1 : -1);
    }
    if (atomic_load(&writable[t->fmt]) < 0) {
        reply_error(r, 400, "response_format", "response_format '%s': this build's libsndfile cannot write it",
                    name);
        return -1;
    }
    return 0;
}

static int pick_stream(voice_task *t, job *j, const char *v, reply *r)
{
    if (v && *v && strcmp(v, "sse") != 0 && strcmp(v, "audio") != 0) {
        reply_error(r, 400, "stream_format", "stream_format '%.32s' is not sse or audio", v);
        return -1;
    }
    t->sse = j->stream = v && strcmp(v, "sse") == 0;
    return 0;
}

/* IN as reference K of T (0 target voice, 1 style, 2 prosody). */
static void set_reference(voice_task *t, int k, ac_audio_input in)
{
    t->refs[k] = in;
    const ac_audio_input **dest[] = {&t->opt.target_voice, &t->opt.style_ref, &t->opt.prosody_ref};
    *dest[k] = &t->refs[k];
}

/* A configured voice as reference K of T. */
static int use_voice(voice_task *t, int k, const char *id, const char *param, reply *r)
{
    const served_voice *v = voice_find(t->cfg, id);
    if (!v) {
        reply_error(r, 404, param, "no voice '%.64s' (see GET /v1/audio/voices)", id);
        return -1;
    }
    set_reference(t, k, ac_input_pcm(v->pcm, v->n, 1, VOICE_RATE));
    /* its transcript makes the voice the style of speech from text, as --voice-text does */
    if (k == 0 && !t->opt.target_voice_text) t->opt.target_voice_text = v->transcript;
    if (k == 1 && !t->opt.style_text) t->opt.style_text = v->transcript;
    return 0;
}

int endpoint_speech_prepare(job *j, reply *r)
{
    const buffer *body = j->req->json;
    speech_request q;
    int bad = -1;
    if (speech_request_parse(body->data ? body->data : "", body->len, &q)) {
        reply_error(r, 400, q.param, "%s", q.message);
        goto out;
    }
    voice_task *t = new_task(j, strlen(q.input), r);
    if (!t) goto out;
    memcpy(t->text, q.input, strlen(q.input) + 1);
    t->opt = q.opt;
    t->opt.text = t->text;
    t->opt.max_seconds = t->cfg->max_speech_seconds;
    if (pick_model(t, q.model, r) || pick_route(t, q.route ? q.route : "zero_shot_tts", r) ||
        pick_format(t, q.response_format, "mp3", r) || pick_stream(t, j, q.stream_format, r) ||
        use_voice(t, 0, q.voice, "voice", r) || (q.style_voice && use_voice(t, 1, q.style_voice, "style_voice", r)) ||
        (q.prosody_voice && use_voice(t, 2, q.prosody_voice, "prosody_voice", r)))
        goto out;
    bad = 0;
out:
    speech_request_free(&q);
    return bad;
}

/* ---- conversions -------------------------------------------------------- */

/* A text field's value; NULL when absent or empty. */
static const char *text_field(const form *f, const char *name)
{
    const form_field *fl = form_get(f, name);
    return fl && !fl->is_file && fl->value.len ? fl->value.data : NULL;
}

/* Reference K from the form field NAME: an upload, or the id of a configured voice. */
static int form_reference(voice_task *t, const form *f, const char *name, int k, reply *r)
{
    const form_field *fl = form_get(f, name);
    if (!fl) return 0;
    if (!fl->is_file) return *fl->value.data ? use_voice(t, k, fl->value.data, name, r) : 0;
    if (!fl->value.len) {
        reply_error(r, 400, name, "the uploaded file '%s' (%s) is empty", fl->filename, name);
        return -1;
    }
    set_reference(t, k, ac_input_memory(fl->value.data, fl->value.len, fl->filename));
    return 0;
}

static int form_numbers(voice_task *t, const form *f, reply *r)
{
    const char *v = text_field(f, "speed");
    double d;
    if (v && field_number(v, 0.25, 4, 0, &d)) {
        reply_error(r, 400, "speed", "'speed' must be in [0.25, 4.0], not '%.32s'", v);
        return -1;
    }
    if (v) t->opt.speed = d;
    v = text_field(f, "pitch_shift");
    if (v && strcmp(v, "auto") == 0) {
        t->opt.use_pitch_shift = 1;
    } else if (v && strcmp(v, "none") == 0) {
        t->opt.pitch_mode = AC_PITCH_NONE;
    } else if (v) {
        if (field_number(v, -24, 24, 1, &d)) {
            reply_error(r, 400, "pitch_shift", "pitch_shift must be an integer in [-24, 24], auto or none, not '%.32s'",
                        v);
            return -1;
        }
        t->opt.use_pitch_shift = 1;
        t->opt.pitch_mode = AC_PITCH_FIXED;
        t->opt.pitch_shift = (int)d;
    }
    for (int i = 0; voice_number_name(i); i++) {
        const char *name = voice_number_name(i);
        char msg[200];
        if (!(v = text_field(f, name))) continue;
        if (field_number(v, -1e300, 1e300, 0, &d)) {
            reply_error(r, 400, name, "%s must be a number, not '%.32s'", name, v);
            return -1;
        }
        if (voice_number_set(&t->opt, i, d, msg, sizeof msg)) {
            reply_error(r, 400, name, "%s", msg);
            return -1;
        }
    }
    char msg[200];
    if (voice_numbers_check(&t->opt, msg, sizeof msg)) {
        reply_error(r, 400, "min_tokens", "%s", msg);
        return -1;
    }
    return 0;
}

int conversion_field_known(const char *name)
{
    static const char *const names[] = {"file", "model", "voice", "target_voice", "style_ref", "prosody_ref", "route",
                                        "text", "source_text", "style_text", "target_voice_text", "response_format",
                                        "stream_format", "pitch_shift", "speed"};
    return field_choice(name, names, sizeof names / sizeof *names) >= 0 || voice_number_find(name) >= 0;
}

int endpoint_conversion_prepare(job *j, reply *r)
{
    const form *f = j->req->form;
    voice_task *t = new_task(j, 0, r);
    if (!t) return -1;
    if (pick_model(t, text_field(f, "model"), r)) return -1;
    const form_field *src = form_get(f, "file");
    if (!src || !src->is_file || !src->value.len) {
        reply_error(r, 400, "file", src ? "the 'file' upload is empty or not a file" :
                    "no 'file' field: send the recording to convert as multipart/form-data field 'file'");
        return -1;
    }
    t->upload = src->filename[0] ? src->filename : "upload";
    t->source = ac_input_memory(src->value.data, src->value.len, t->upload);
    const char *route_name = text_field(f, "route");
    t->opt.text = text_field(f, "text");
    t->opt.source_text = text_field(f, "source_text");
    t->opt.style_text = text_field(f, "style_text");
    t->opt.target_voice_text = text_field(f, "target_voice_text");
    const form_field *voice = form_get(f, "voice");
    return pick_route(t, route_name ? route_name : "style_preserved_vc", r) ||
           pick_format(t, text_field(f, "response_format"), "wav", r) ||
           pick_stream(t, j, text_field(f, "stream_format"), r) ||
           form_reference(t, f, voice ? "voice" : "target_voice", 0, r) || form_reference(t, f, "style_ref", 1, r) ||
           form_reference(t, f, "prosody_ref", 2, r) || form_numbers(t, f, r)
               ? -1
               : 0;
}
