/* audioc-server's endpoints for health, models, transcription and VAD
 * (endpoints.c); their rows are in routes.c. */
#ifndef AUDIOC_SERVER_ENDPOINTS_H
#define AUDIOC_SERVER_ENDPOINTS_H

#include "server.h"

/* GET /health, GET /v1/models, GET /v1/models/ID (J->req->id; 404 when unknown). */
void endpoint_health(job *j);
void endpoint_models(job *j);
void endpoint_model(job *j);
/* POST /v1/audio/transcriptions and /v1/audio/vad: check the form and ready J
 * (400/404 into R when it cannot run); the run makes the answer on a worker. */
int endpoint_transcription_prepare(job *j, reply *r);
/* The form fields each takes: OpenAI's (prompt, include[] and
 * chunking_strategy accepted and not acted on) and ours. */
int transcription_field_known(const char *name);
int vad_field_known(const char *name);
void endpoint_transcription_run(job *j);
int endpoint_vad_prepare(job *j, reply *r);
void endpoint_vad_run(job *j);

#endif
