/* The route table: every endpoint of audioc-server is one row here, and
 * nowhere else. A new endpoint is its functions (endpoints.c, or a module
 * of its own as the voice side is) and a row. */
#include <stdint.h>

#include "endpoints.h"
#include "routes.h"
#include "speech.h"
#include "web.h"

/* About 30 s of 16 kHz 16-bit WAV (more of a compressed format): a
 * transcription of a second or so; every VAD is (milliseconds). */
#define QUICK_TRANSCRIPTION (1u << 20)

const route server_routes[] = {
    {.method = "GET", .path = "/", .body = BODY_NONE, .needs_key = 0, .lane = LANE_NOW, .respond = endpoint_page},
    {.method = "GET", .path = "/web/", .body = BODY_NONE, .needs_key = 0, .lane = LANE_NOW,
     .respond = endpoint_asset},
    {.method = "GET", .path = "/health", .body = BODY_NONE, .needs_key = 0, .lane = LANE_NOW,
     .respond = endpoint_health},
    {.method = "GET", .path = "/v1/models", .body = BODY_NONE, .needs_key = 1, .lane = LANE_NOW,
     .respond = endpoint_models},
    {.method = "GET", .path = "/v1/models/", .body = BODY_NONE, .needs_key = 1, .lane = LANE_NOW,
     .respond = endpoint_model},
    {.method = "POST", .path = "/v1/audio/transcriptions", .body = BODY_FORM, .body_max = BODY_MAX_UPLOAD,
     .needs_key = 1, .lane = LANE_QUEUE, .quick_body = QUICK_TRANSCRIPTION, .field_known = transcription_field_known,
     .prepare = endpoint_transcription_prepare,
     .respond = endpoint_transcription_run},
    {.method = "POST", .path = "/v1/audio/vad", .body = BODY_FORM, .body_max = BODY_MAX_UPLOAD, .needs_key = 1,
     .lane = LANE_QUEUE, .quick_body = SIZE_MAX, .field_known = vad_field_known, .prepare = endpoint_vad_prepare, .respond = endpoint_vad_run},
    {.method = "GET", .path = "/v1/audio/voices", .body = BODY_NONE, .needs_key = 1, .lane = LANE_NOW,
     .respond = endpoint_voices},
    {.method = "POST", .path = "/v1/audio/speech", .body = BODY_JSON, .body_max = SPEECH_BODY_MAX, .needs_key = 1,
     .lane = LANE_QUEUE, .prepare = endpoint_speech_prepare, .respond = endpoint_voice_run},
    {.method = "POST", .path = "/v1/audio/conversions", .body = BODY_FORM, .body_max = BODY_MAX_UPLOAD,
     .needs_key = 1, .lane = LANE_QUEUE, .field_known = conversion_field_known, .prepare = endpoint_conversion_prepare, .respond = endpoint_voice_run},
};
const int n_server_routes = sizeof server_routes / sizeof *server_routes;
