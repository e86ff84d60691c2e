/* The decision on a request head, before any body byte is read: the route
 * (looked up in the route table), the method, the API key, Expect and
 * Content-Length against the route's body limit. Pure (no connection, no
 * state), so that it can be fuzzed; the busy checks (queue, upload budget)
 * stay with the caller. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "routes.h"

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

size_t route_body_max(const route *r, const server_config *cfg)
{
    return r->body_max != BODY_MAX_UPLOAD ? r->body_max : (size_t)cfg->max_upload_mb << 20;
}

/* The row for URL (an exact path, or a prefix with an id after it, in *ID), or NULL. */
static const route *find_route(const char *url, const char **id)
{
    for (int i = 0; i < n_server_routes; i++) {
        const route *r = &server_routes[i];
        size_t n = strlen(r->path);
        int prefix = n > 1 && r->path[n - 1] == '/';   /* "/" is the page, not a prefix of every path */
        if (prefix ? strncmp(url, r->path, n) == 0 && url[n] : strcmp(url, r->path) == 0) {
            *id = prefix ? url + n : "";
            return r;
        }
    }
    return NULL;
}

void admit_head(const request_head *h, const server_config *cfg, admission *a)
{
    memset(a, 0, sizeof *a);
    /* any body makes an early answer close the connection (the rest is not read) */
    unsigned long long n = 0;
    int bad_length = h->content_length && parse_length(h->content_length, &n);
    a->length = bad_length ? 0 : n;
    a->has_body = n > 0 || bad_length || h->transfer_encoding;
    const char *url = h->url, *method = h->method;
    const route *r = a->route = find_route(url, &a->id);
    if (!r) {
        refuse(a, 404, NULL, "no such endpoint: %s %s", method, url);
        return;
    }
    if (strcmp(method, "OPTIONS") == 0) {   /* a CORS preflight, on a real route only */
        a->status = 204;
        return;
    }
    int head_of_get = strcmp(method, "HEAD") == 0 && strcmp(r->method, "GET") == 0;
    if (strcmp(method, r->method) != 0 && !head_of_get) {
        refuse(a, 405, NULL, "%s %s: use %s", method, url, r->method);
        return;
    }
    if (r->needs_key && !authorized(h->authorization, cfg->api_key)) {
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
    size_t max = route_body_max(r, cfg);
    if (r->body == BODY_JSON && n > max) refuse(a, 413, NULL, "the JSON body is larger than %zu KB", max >> 10);
    if (r->body == BODY_FORM && n > max + FORM_FRAMING_MAX)
        refuse(a, 413, "file", "the upload is larger than the limit of %zu MB", max >> 20);
}
