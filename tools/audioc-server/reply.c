/* Answers: bodies written with stdio, OpenAI-shaped errors, and the text
 * events of a streamed answer. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "server.h"

FILE *body_open(reply_body *b, reply *r)
{
    *b = (reply_body){0};
    b->f = open_memstream(&b->mem, &b->len);
    if (!b->f) reply_error(r, 500, NULL, "out of memory");
    return b->f;
}

void body_close(reply_body *b, reply *r, int status, const char *type)
{
    if (fclose(b->f) != 0) {
        free(b->mem);
        reply_error(r, 500, NULL, "out of memory");
        return;
    }
    buffer_free(&r->body);
    r->body = (buffer){b->mem, b->len, b->len + 1};
    r->status = status;
    r->content_type = type;
}

void reply_error(reply *r, int status, const char *param, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *type = status >= 500 ? "server_error" : "invalid_request_error";
    const char *code = status == 401 ? "invalid_api_key"
                       : status == 404 ? (param && strcmp(param, "model") == 0 ? "model_not_found" : "not_found")
                       : status == 405 ? "method_not_allowed"
                       : status == 413 ? "file_too_large"
                       : status == 503 ? "server_busy"
                                       : NULL;
    reply_body b = {0};
    FILE *f = b.f = open_memstream(&b.mem, &b.len);
    if (!f) {   /* still answer with the status */
        buffer_free(&r->body);
        r->status = status;
        r->content_type = "application/json";
        return;
    }
    fputs("{\"error\":{\"message\":", f);
    json_string(f, msg);
    fprintf(f, ",\"type\":\"%s\",\"param\":", type);
    if (param) json_string(f, param);
    else fputs("null", f);
    fputs(",\"code\":", f);
    if (code) fprintf(f, "\"%s\"", code);
    else fputs("null", f);
    fputs("}}\n", f);
    body_close(&b, r, status, "application/json");
}

void push_text_event(job *j, const char *type, const char *key, const char *text)
{
    char *mem = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&mem, &len);
    if (!f) return;
    fprintf(f, "data: {\"type\":\"%s\",\"%s\":", type, key);
    json_string(f, text);
    fputs("}\n\n", f);
    if (fclose(f) == 0) queue_push_event(j, mem, len);
    free(mem);
}

void push_stop_event(job *j)
{
    int why = atomic_load(&j->cancelled);
    if (!why || why == JOB_CLIENT_GONE) return;   /* nobody reads it */
    char msg[200];
    job_stop_message(why, msg, sizeof msg);
    push_text_event(j, "error", "message", msg);
}

void field_unknown(reply *r, const char *name)
{
    reply_error(r, 400, name, FIELD_UNKNOWN, name);
}

void field_has_control(reply *r, const char *name, const char *v, int at)
{
    reply_error(r, 400, name, FIELD_CONTROL " (byte 0x%02x at offset %d)", name, (unsigned char)v[at], at);
}
