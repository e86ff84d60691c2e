/* The JSON body of POST /v1/audio/speech: OpenAI's fields (model, input,
 * voice, response_format, speed, instructions, stream_format) and ours
 * (route, style_voice, prosody_voice and the numeric options of a voice
 * request). Every field is checked for its type and range here; which
 * models, voices and routes exist is the endpoint's business. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "speech.h"

/* ---- numeric options, shared with the conversion form ------------------ */

static const struct {
    const char *name;
    double lo, hi;
    int integer;
} numbers[] = {
    {"seed", 0, 2147483647, 1},        {"temperature", 0, 100, 0},     {"top_k", 0, 1 << 24, 1},
    {"top_p", 1e-6, 1, 0},             {"repetition_penalty", 1e-3, 100, 0},
    {"min_tokens", 0, 4096, 1},        {"max_tokens", 1, 4096, 1},     {"steps", 1, AC_VOICE_MAX_STEPS, 1},
    {"target_duration", 0.1, 120, 0},  {"reference_duration", 0.5, 60, 0},
};
enum { N_NUMBERS = sizeof numbers / sizeof *numbers };

int voice_number_find(const char *name)
{
    for (int i = 0; i < N_NUMBERS; i++)
        if (strcmp(name, numbers[i].name) == 0) return i;
    return -1;
}

const char *voice_number_name(int i) { return i >= 0 && i < N_NUMBERS ? numbers[i].name : NULL; }

int voice_number_set(ac_voice_options *o, int i, double v, char *msg, size_t n)
{
    if (!(v >= numbers[i].lo && v <= numbers[i].hi) || (numbers[i].integer && v != (double)(long long)v)) {
        if (numbers[i].integer)   /* whole bounds in full, not as 2.14748e+09 */
            snprintf(msg, n, "%s must be an integer in [%.0f, %.0f], not %.17g", numbers[i].name, numbers[i].lo,
                     numbers[i].hi, v);
        else snprintf(msg, n, "%s must be a number in [%g, %g], not %g", numbers[i].name, numbers[i].lo,
                      numbers[i].hi, v);
        return -1;
    }
    switch (i) {
    case 0: o->seed = (uint64_t)v; break;
    case 1: o->temperature = (float)v; break;
    case 2: o->top_k = (int)v; break;
    case 3: o->top_p = (float)v; break;
    case 4: o->repetition_penalty = (float)v; break;
    case 5: o->min_new_tokens = (int)v; break;
    case 6: o->max_new_tokens = (int)v; break;
    case 7: o->steps = (int)v; break;
    case 8: o->target_duration = v; break;
    default: o->reference_duration = v; break;
    }
    return 0;
}

int voice_numbers_check(const ac_voice_options *o, char *msg, size_t n)
{
    if (o->min_new_tokens > 0 && o->max_new_tokens > 0 && o->min_new_tokens > o->max_new_tokens) {
        snprintf(msg, n, "min_tokens %d is more than max_tokens %d", o->min_new_tokens, o->max_new_tokens);
        return -1;
    }
    return 0;
}

/* ---- the body ------------------------------------------------------------ */

__attribute__((format(printf, 3, 4))) static int fail(speech_request *r, const char *param, const char *fmt, ...)
{
    r->param = param;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
    return -1;
}

/* A string field into *OUT (a copy): 0, or -1 when it is not a string. */
static int take_string(speech_request *r, const cJSON *v, const char *name, char **out)
{
    if (cJSON_IsNull(v)) return 0;   /* as absent */
    if (!cJSON_IsString(v)) return fail(r, name, "'%s' must be a string", name);
    free(*out);
    *out = strdup(v->valuestring);
    return *out ? 0 : fail(r, NULL, "out of memory");
}

static int field(speech_request *r, const cJSON *v)
{
    static const char *const strings[] = {"model", "input", "response_format", "stream_format", "route",
                                          "style_voice", "prosody_voice"};
    char **dest[] = {&r->model, &r->input, &r->response_format, &r->stream_format, &r->route,
                     &r->style_voice, &r->prosody_voice};
    const char *name = v->string;
    for (size_t k = 0; k < sizeof strings / sizeof *strings; k++)
        if (strcmp(name, strings[k]) == 0) return take_string(r, v, strings[k], dest[k]);
    if (strcmp(name, "voice") == 0) {   /* a voice id, or OpenAI's custom voice object {"id": ...} */
        const cJSON *id = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "id") : v;
        if (cJSON_IsObject(v) && !cJSON_IsString(id)) return fail(r, "voice", "'voice' as an object needs an 'id' string");
        return take_string(r, id, "voice", &r->voice);
    }
    if (strcmp(name, "instructions") == 0) {
        if (cJSON_IsNull(v) || (cJSON_IsString(v) && !v->valuestring[0])) return 0;
        return fail(r, "instructions", "'instructions' are not supported: Vevo2 takes the way of speaking from a "
                    "style reference (style_voice), not from words");
    }
    if (strcmp(name, "speed") == 0) {
        if (cJSON_IsNull(v)) return 0;
        if (!cJSON_IsNumber(v)) return fail(r, "speed", "'speed' must be a number");
        r->opt.speed = v->valuedouble;
        return 0;
    }
    int i = voice_number_find(name);
    if (i < 0) {
        snprintf(r->field, sizeof r->field, "%s", name);
        return fail(r, r->field, FIELD_UNKNOWN, name);
    }
    if (cJSON_IsNull(v)) return 0;
    if (!cJSON_IsNumber(v)) return fail(r, numbers[i].name, "'%s' must be a number", numbers[i].name);
    return voice_number_set(&r->opt, i, v->valuedouble, r->message, sizeof r->message) ? (r->param = numbers[i].name, -1)
                                                                                      : 0;
}

static int hex4(const char *h, size_t left)
{
    int v = 0;
    for (int k = 0; k < 4; k++) {
        if ((size_t)k >= left) return -1;
        char c = h[k];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Whether a string of the N bytes of JSON holds a control character, raw
 * or escaped (as field_control sees them: a \u0000 would cut the value
 * short once decoded): 1 with the top-level field it is in copied to KEY. */
static int control_field(const char *b, size_t n, char *key, size_t kn)
{
    int depth = 0, in_str = 0, is_key = 0, expect_key = 0;
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)b[i];
        if (!in_str) {
            if (c == '{' || c == '[') expect_key = ++depth == 1 && c == '{';
            else if (c == '}' || c == ']') depth--;
            else if (c == ',' && depth == 1) expect_key = 1;
            else if (c == '"') {
                in_str = 1;
                start = i + 1;
                is_key = depth == 1 && expect_key;
                expect_key = 0;
            }
            continue;
        }
        int code = c;
        if (c == '\\' && i + 1 < n) {
            code = b[++i] == 'u' ? hex4(b + i + 1, n - i - 1) : 'x';
            if (b[i] == 'u') i += 4;
        } else if (c == '"') {
            in_str = 0;
            if (is_key) snprintf(key, kn, "%.*s", (int)(i - start < kn - 1 ? i - start : kn - 1), b + start);
            continue;
        }
        char one = (char)code;
        if (code >= 0 && code < 0x80 && field_control(&one, 1) == 0) {
            if (is_key) snprintf(key, kn, "%.*s", (int)(i - start < kn - 1 ? i - start : kn - 1), b + start);
            return 1;
        }
    }
    return 0;
}

int speech_request_parse(const char *body, size_t n, speech_request *r)
{
    memset(r, 0, sizeof *r);
    ac_voice_options_default(&r->opt);
    if (n > SPEECH_BODY_MAX) return fail(r, NULL, "the JSON body is larger than %u KB", SPEECH_BODY_MAX >> 10);
    if (control_field(body, n, r->field, sizeof r->field))
        return fail(r, r->field, FIELD_CONTROL, r->field);
    cJSON *root = cJSON_ParseWithLength(body, n);
    if (!root) return fail(r, NULL, "the body is not valid JSON: send a JSON object (Content-Type: application/json)");
    int bad = 0, count = 0;
    if (!cJSON_IsObject(root)) bad = fail(r, NULL, "the body must be a JSON object");
    for (const cJSON *v = root->child; !bad && v; v = v->next) {
        if (++count > 64) bad = fail(r, NULL, "the body has more than 64 fields");   /* bounds the check below */
        for (const cJSON *w = root->child; w != v && !bad; w = w->next)
            if (strcmp(w->string, v->string) == 0) bad = fail(r, NULL, "the field '%.64s' is given twice", v->string);
        if (!bad) bad = field(r, v);
    }
    cJSON_Delete(root);
    if (bad) return -1;
    if (!r->input) return fail(r, "input", "no 'input': give the text to say");
    if (!r->voice || !r->voice[0]) return fail(r, "voice", "no 'voice': give the id of a reference voice (see GET /v1/audio/voices)");
    if (voice_numbers_check(&r->opt, r->message, sizeof r->message)) return r->param = "min_tokens", -1;
    if (!(r->opt.speed >= 0.25 && r->opt.speed <= 4.0))
        return fail(r, "speed", "'speed' must be in [0.25, 4.0], not %g", r->opt.speed);
    return 0;
}

void speech_request_free(speech_request *r)
{
    char *s[] = {r->model, r->input, r->voice, r->response_format, r->stream_format, r->route, r->style_voice,
                 r->prosody_voice};
    for (size_t k = 0; k < sizeof s / sizeof *s; k++) free(s[k]);
    memset(r, 0, sizeof *r);
}
