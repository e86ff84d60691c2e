/* audioc-server's voice side: the reference voices of --voice (voices.c),
 * the speech request's JSON body (speech_request.c) and the endpoints
 * /v1/audio/speech, /v1/audio/voices and /v1/audio/conversions (speech.c),
 * whose rows are in routes.c. */
#ifndef AUDIOC_SERVER_SPEECH_H
#define AUDIOC_SERVER_SPEECH_H

#include "server.h"

/* ---- reference voices (voices.c) --------------------------------------- */

typedef struct served_voice {
    char id[64];
    const char *path;
    const char *transcript;   /* NULL: none */
    float *pcm;               /* mono at VOICE_RATE, decoded at start-up */
    int64_t n;
} served_voice;

#define VOICE_RATE 24000   /* Vevo2's rate: references decoded once at it are not resampled per request */

/* --voice ID=PATH[:TRANSCRIPT] into CFG's voices: 0, or -1 with a message on stderr. */
int voice_add(server_config *cfg, const char *spec);
/* Decodes every voice (errors name the file); 0 or -1. */
int voices_load(server_config *cfg);
void voices_free(server_config *cfg);
/* The voice called ID, or NULL. */
const served_voice *voice_find(const server_config *cfg, const char *id);
/* The I-th voice in --voice order, or NULL past the last. */
const served_voice *voice_at(const server_config *cfg, int i);

/* ---- the numeric options of a voice request (speech_request.c) ---------- */

/* The index of the option called NAME (seed, temperature, top_k, top_p,
 * repetition_penalty, min_tokens, max_tokens, steps, target_duration,
 * reference_duration), or -1. */
int voice_number_find(const char *name);
/* The name of option I, or NULL past the last. */
const char *voice_number_name(int i);
/* Checks V against option I's range: 0, or -1 with the reason in MSG. */
int voice_number_set(ac_voice_options *o, int i, double v, char *msg, size_t n);
/* Checks the options together once all are set (min_tokens no more than
 * max_tokens): 0, or -1 with the reason in MSG (the field: min_tokens). */
int voice_numbers_check(const ac_voice_options *o, char *msg, size_t n);

/* ---- the body of POST /v1/audio/speech ----------------------------------- */

#define SPEECH_BODY_MAX (256u << 10)   /* the text is at most 64 KB; the rest is small */

typedef struct {
    char *model, *input, *voice, *response_format, *stream_format, *route, *style_voice, *prosody_voice;
    ac_voice_options opt;   /* the numeric options given */
    const char *param;      /* on failure: the field at fault (or NULL) */
    char field[64];         /* a field named by the body itself, as param points to */
    char message[320];
} speech_request;

/* Parses a JSON body of N bytes (OpenAI's fields plus ours) into R
 * (free with speech_request_free, also after a failure): 0, or -1 with
 * R->param and R->message. Pure: no models, no voices looked up. */
int speech_request_parse(const char *body, size_t n, speech_request *r);
void speech_request_free(speech_request *r);

/* ---- endpoints (speech.c) ------------------------------------------------- */

/* GET /v1/audio/voices. */
void endpoint_voices(job *j);
/* Check the request (the JSON body, the conversion's form) and ready J
 * (the error in R when it cannot run); endpoint_voice_run answers both on a worker. */
int endpoint_speech_prepare(job *j, reply *r);
int endpoint_conversion_prepare(job *j, reply *r);
/* The conversion form's fields: the recording, the references, the texts,
 * the formats and the numeric options (speed among them). */
int conversion_field_known(const char *name);
void endpoint_voice_run(job *j);

#endif
