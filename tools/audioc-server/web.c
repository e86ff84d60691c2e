/* The web page: files compiled into the binary (web.h), answered with
 * their type, an ETag (a browser revalidates and gets 304 while they are
 * unchanged) and a strict Content-Security-Policy: everything comes from
 * this server, no inline script or style, no frames. */
#include <pthread.h>
#include <string.h>

#include "web.h"

#define CSP                                                                                                 \
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; media-src 'self' blob:; "     \
    "connect-src 'self' blob:; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

static const struct {
    const char *ext, *type;
} types[] = {{".html", "text/html; charset=utf-8"},
             {".css", "text/css; charset=utf-8"},
             {".js", "text/javascript; charset=utf-8"},
             {".svg", "image/svg+xml"}};

static const char *type_of(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        size_t e = strlen(types[i].ext);
        if (n > e && strcmp(name + n - e, types[i].ext) == 0) return types[i].type;
    }
    return "application/octet-stream";
}

/* The headers of every file but its ETag, which each row's list has first. */
#define WEB_HEADERS                                                                                         \
    "Cache-Control", "no-cache", "Content-Security-Policy", CSP, "X-Content-Type-Options", "nosniff",      \
        "Referrer-Policy", "no-referrer", NULL
enum { MAX_ASSETS = 32 };
static const char *headers[MAX_ASSETS][12];
static pthread_once_t headers_once = PTHREAD_ONCE_INIT;

static void make_headers(void)
{
    static const char *const rest[] = {WEB_HEADERS};
    for (int i = 0; i < n_web_assets && i < MAX_ASSETS; i++) {
        headers[i][0] = "ETag";
        headers[i][1] = web_assets[i].etag;
        memcpy(headers[i] + 2, rest, sizeof rest);
    }
}

/* Whether the If-None-Match header V names TAG (a list, or "*"). */
static int matches(const char *v, const char *tag)
{
    return v && (strcmp(v, "*") == 0 || strstr(v, tag) != NULL);
}

static void serve(job *j, const char *name)
{
    reply *r = &j->result;
    const request_ctx *q = j->req;
    for (int i = 0; i < n_web_assets && i < MAX_ASSETS && !q->cfg->no_webui; i++) {
        const web_asset *a = &web_assets[i];
        if (strcmp(a->name, name) != 0) continue;
        pthread_once(&headers_once, make_headers);
        r->headers = headers[i];
        r->content_type = type_of(name);
        if (matches(q->if_none_match, a->etag)) {
            r->status = 304;
            return;
        }
        buffer_free(&r->body);
        if (buffer_add(&r->body, a->data, a->size)) {
            reply_error(r, 500, NULL, "out of memory");
            return;
        }
        r->status = 200;
        return;
    }
    reply_error(r, 404, NULL, "no such endpoint: GET %s%s", name[0] && strcmp(name, "index.html") ? "/web/" : "/",
                strcmp(name, "index.html") ? name : "");
}

void endpoint_page(job *j) { serve(j, "index.html"); }

void endpoint_asset(job *j) { serve(j, j->req->id); }
