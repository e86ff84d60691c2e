/* Fuzz the server's reader of POST /v1/audio/speech bodies
 * (tools/audioc-server/speech_request.c) on any bytes: it answers 0 or -1,
 * says what went wrong, and what it accepts keeps its promises. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "speech.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    speech_request r;
    int rc = speech_request_parse((const char *)data, size, &r);
    if (rc != 0 && rc != -1) abort();
    if (!memchr(r.message, 0, sizeof r.message)) abort();
    if (rc < 0 && !r.message[0]) abort();
    if (rc == 0) {
        const ac_voice_options *o = &r.opt;
        if (!r.input || !r.voice || !r.voice[0] || !(o->speed >= 0.25 && o->speed <= 4.0)) abort();
        if (o->steps < 1 || o->steps > 1000 || o->max_new_tokens == 0 || o->max_new_tokens > 4096 ||
            o->top_p == 0 || o->top_p > 1 || o->temperature > 100 || o->target_duration < 0 ||
            o->target_duration > 120)
            abort();
    }
    speech_request_free(&r);
    return 0;
}
