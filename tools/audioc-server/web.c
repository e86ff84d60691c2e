/* The web page: files compiled into the binary (web.h), answered with
 * their type, an ETag (a browser revalidates and gets 304 while they are
 * unchanged), gzip-compressed for the clients that take it (compressed
 * once, on the first request), and a strict Content-Security-Policy:
 * everything comes from this server, no inline script or style, no frames. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

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

/* What every file is answered with, after its own ETag (and encoding). */
#define WEB_HEADERS                                                                                         \
    "Cache-Control", "no-cache", "Content-Security-Policy", CSP, "X-Content-Type-Options", "nosniff",      \
        "Referrer-Policy", "no-referrer", "Vary", "Accept-Encoding", NULL
enum { MAX_ASSETS = 32, N_HEADERS = 16 };

/* A file as sent: plain, or gzip-compressed when that is smaller. */
typedef struct {
    const unsigned char *data;
    size_t size;
    char etag[80];
    const char *headers[N_HEADERS];
} variant;

static variant plain[MAX_ASSETS], gzipped[MAX_ASSETS];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The gzip stream of N bytes at P into *OUT (malloc); its size, or 0 when it does not pay. */
static size_t gzip_of(const unsigned char *p, size_t n, unsigned char **out)
{
    z_stream z = {0};
    if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    size_t cap = deflateBound(&z, (uLong)n);
    unsigned char *buf = malloc(cap);
    z.next_in = (Bytef *)p;
    z.avail_in = (uInt)n;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    int done = buf && deflate(&z, Z_FINISH) == Z_STREAM_END;
    size_t size = z.total_out;
    deflateEnd(&z);
    if (!done || size > n - n / 10) {   /* not even a tenth smaller: send it as it is */
        free(buf);
        return 0;
    }
    *out = buf;
    return size;
}

static void fill(variant *v, const char *encoding)
{
    static const char *const rest[] = {WEB_HEADERS};
    int k = 0;
    v->headers[k++] = "ETag";
    v->headers[k++] = v->etag;
    if (encoding) {
        v->headers[k++] = "Content-Encoding";
        v->headers[k++] = encoding;
    }
    memcpy(v->headers + k, rest, sizeof rest);
}

static void prepare(void)
{
    for (int i = 0; i < n_web_assets && i < MAX_ASSETS; i++) {
        const web_asset *a = &web_assets[i];
        plain[i].data = a->data;
        plain[i].size = a->size;
        snprintf(plain[i].etag, sizeof plain[i].etag, "%s", a->etag);
        fill(&plain[i], NULL);
        unsigned char *z = NULL;
        size_t n = gzip_of(a->data, a->size, &z);
        if (!n) continue;
        gzipped[i].data = z;
        gzipped[i].size = n;
        /* another ETag for other bytes: the quoted hash with -gz inside the quotes */
        snprintf(gzipped[i].etag, sizeof gzipped[i].etag, "%.*s-gz\"", (int)strlen(a->etag) - 1, a->etag);
        fill(&gzipped[i], "gzip");
    }
}

/* Whether the If-None-Match header V names TAG (a list, or "*"). */
static int matches(const char *v, const char *tag)
{
    return v && (strcmp(v, "*") == 0 || strstr(v, tag) != NULL);
}

/* Whether Accept-Encoding V takes gzip (not refused with q=0). */
static int takes_gzip(const char *v)
{
    const char *g = v ? strstr(v, "gzip") : NULL;
    if (!g) return 0;
    for (g += 4; *g == ' '; g++) {
    }
    if (strncmp(g, ";q=", 3) != 0) return 1;   /* no weight */
    return strtod(g + 3, NULL) > 0;            /* q=0.5 takes it, q=0 refuses */
}

static void serve(job *j, const char *name)
{
    reply *r = &j->result;
    const request_ctx *q = j->req;
    for (int i = 0; i < n_web_assets && i < MAX_ASSETS && !q->cfg->no_webui; i++) {
        if (strcmp(web_assets[i].name, name) != 0) continue;
        pthread_once(&once, prepare);
        const variant *v = gzipped[i].data && takes_gzip(q->accept_encoding) ? &gzipped[i] : &plain[i];
        r->headers = v->headers;
        r->content_type = type_of(name);
        if (matches(q->if_none_match, v->etag)) {
            r->status = 304;
            return;
        }
        buffer_free(&r->body);
        if (buffer_add(&r->body, v->data, v->size)) {
            reply_error(r, 500, NULL, "out of memory");
            return;
        }
        r->status = 200;
        return;
    }
    reply_error(r, 404, NULL, "no such endpoint: GET %s%s", strcmp(name, "index.html") ? "/web/" : "/",
                strcmp(name, "index.html") ? name : "");
}

void endpoint_page(job *j) { serve(j, "index.html"); }

void endpoint_asset(job *j) { serve(j, j->req->id); }
