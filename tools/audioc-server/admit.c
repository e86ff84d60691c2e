/* The decision on a request head, before any body byte is read: the route,
 * the method, the API key, Expect and Content-Length. Pure (no connection,
 * no globals), so that it can be fuzzed; the busy checks (queue, upload
 * budget) stay with the caller. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "speech.h"

/* Whether A equals B, in a time that depends on their lengths only, not on
 * where they first differ (no guessing the key a byte at a time). */
static int equal_secret(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    unsigned char diff = na != nb;
    for (size_t i = 0; i < na; i++) diff |= (unsigned char)(a[i] ^ b[i % (nb ? nb : 1)]);
    return diff == 0 && nb > 0;
}

/* 'Authorization: Bearer KEY'; the scheme is case-insensitive (RFC 7235). */
static int authorized(const char *h, const char *key)
{
    if (!key) return 1;
    if (!h || strncasecmp(h, "Bearer ", 7) != 0) return 0;
    h += 7;
    while (*h == ' ') h++;
    return equal_secret(h, key);
}

/* Content-Length: decimal digits only (no sign, no spaces inside), no overflow. */
static int parse_length(const char *s, unsigned long long *out)
{
    unsigned long long n = 0;
    if (!*s) return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || n > (~0ull - 9) / 10) return -1;
        n = n * 10 + (unsigned long long)(*s - '0');
    }
    *out = n;
    return 0;
}

__attribute__((format(printf, 4, 5))) static void refuse(admission *a, int status, const char *param,
                                                         const char *fmt, ...)
{
    a->status = status;
    a->param = param;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->message, sizeof a->message, fmt, ap);
    va_end(ap);
}

void admit_head(const request_head *h, const char *api_key, size_t max_upload, admission *a)
{
    static const struct {
        const char *path, *method;
        route r;
    } routes[] = {{"/health", "GET", R_HEALTH},
                  {"/v1/models", "GET", R_MODELS},
                  {"/v1/audio/transcriptions", "POST", R_TRANSCRIPTION},
                  {"/v1/audio/vad", "POST", R_VAD},
                  {"/v1/audio/voices", "GET", R_VOICES},
                  {"/v1/audio/speech", "POST", R_SPEECH},
                  {"/v1/audio/conversions", "POST", R_CONVERSION}};
    memset(a, 0, sizeof *a);
    /* any body makes an early answer close the connection (the rest is not read) */
    unsigned long long n = 0;
    int bad_length = h->content_length && parse_length(h->content_length, &n);
    a->length = bad_length ? 0 : n;
    a->has_body = n > 0 || bad_length || h->transfer_encoding;
    const char *url = h->url, *method = h->method;
    int known = -1;
    for (int i = 0; i < (int)(sizeof routes / sizeof *routes); i++)
        if (strcmp(url, routes[i].path) == 0) known = i;
    if (known < 0 && strncmp(url, "/v1/models/", 11) == 0 && url[11]) known = 1;   /* /v1/models/ID */
    if (known < 0) {
        refuse(a, 404, NULL, "no such endpoint: %s %s", method, url);
        return;
    }
    if (strcmp(method, "OPTIONS") == 0) {   /* a CORS preflight, on a real route only */
        a->route = R_OPTIONS;
        a->status = 204;
        return;
    }
    a->route = known == 1 && url[10] ? R_MODEL : routes[known].r;
    if (strcmp(method, routes[known].method) != 0 && !(a->route <= R_MODEL && strcmp(method, "HEAD") == 0)) {
        refuse(a, 405, NULL, "%s %s: use %s", method, url, routes[known].method);
        return;
    }
    if (strncmp(url, "/v1/", 4) == 0 && !authorized(h->authorization, api_key)) {
        refuse(a, 401, NULL, "invalid or missing API key (send 'Authorization: Bearer KEY')");
        return;
    }
    /* RFC 7231 defines one expectation; libmicrohttpd answers it with 100 Continue */
    if (h->expect && strcasecmp(h->expect, "100-continue") != 0) {
        refuse(a, 417, NULL, "Expect: '%.100s' is not supported (only 100-continue)", h->expect);
        return;
    }
    if (bad_length) {
        refuse(a, 400, NULL, "Content-Length '%.40s' is not a number", h->content_length);
        return;
    }
    if (a->route == R_SPEECH && n > SPEECH_BODY_MAX)
        refuse(a, 413, NULL, "the JSON body is larger than %u KB", SPEECH_BODY_MAX >> 10);
    if (a->route <= R_MODEL || a->route == R_SPEECH) return;
    if (n > max_upload + (64u << 10))
        refuse(a, 413, "file", "the upload is larger than the limit of %zu MB", max_upload >> 20);
}
