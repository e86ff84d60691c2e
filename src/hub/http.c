#include "hub/http.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/progress.h"

enum { MAX_HEADERS = 256 * 1024, TRIES = 4, RESUMES = 16 };

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_failed;
static void global_init(void) { init_failed = curl_global_init(CURL_GLOBAL_DEFAULT) != 0; }

const char *hub_endpoint(char buf[HUB_URL])
{
    const char *e = getenv("HF_ENDPOINT");
    snprintf(buf, HUB_URL, "%s", e && *e ? e : "https://huggingface.co");
    size_t n = strlen(buf);
    while (n > 0 && buf[n - 1] == '/') buf[--n] = 0;
    return buf;
}

ac_status hub_url_append(char out[HUB_URL], const char *s, int keep_slash)
{
    size_t n = strlen(out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        int plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                    strchr("-._~", *c) || (keep_slash && *c == '/');
        if (n + 4 >= HUB_URL) return ac_error(AC_ERR_ARG, "%s: the URL is too long", s);
        n += (size_t)(plain ? snprintf(out + n, 2, "%c", *c) : snprintf(out + n, 4, "%%%02X", *c));
    }
    return AC_OK;
}

/* The token for the Hub: $HF_TOKEN, else the file huggingface-cli login
 * writes ($HF_TOKEN_PATH, $HF_HOME/token, ~/.cache/huggingface/token). */
static void read_token(char tok[512])
{
    tok[0] = 0;
    const char *e = getenv("HF_TOKEN");
    if (!e || !*e) e = getenv("HUGGING_FACE_HUB_TOKEN");
    if (e && *e) snprintf(tok, 512, "%s", e);
    else {
        char path[4200];
        const char *v;
        if ((v = getenv("HF_TOKEN_PATH")) && *v) snprintf(path, sizeof path, "%s", v);
        else if ((v = getenv("HF_HOME")) && *v) snprintf(path, sizeof path, "%s/token", v);
        else if ((v = getenv("XDG_CACHE_HOME")) && *v) snprintf(path, sizeof path, "%s/huggingface/token", v);
        else if ((v = getenv("HOME")) && *v) snprintf(path, sizeof path, "%s/.cache/huggingface/token", v);
        else return;
        FILE *f = fopen(path, "rb");
        if (!f) return;
        size_t n = fread(tok, 1, 511, f);
        fclose(f);
        tok[n] = 0;
    }
    size_t n = strlen(tok);
    while (n && (tok[n - 1] == '\n' || tok[n - 1] == '\r' || tok[n - 1] == ' ')) tok[--n] = 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)tok[i] <= ' ' || tok[i] == 0x7f) { /* never put a line break into a header */
            tok[0] = 0;
            return;
        }
}

typedef struct {
    hub_reply *rep;
    size_t header_bytes;
    int too_big;             /* headers or body beyond the bound */
    /* the body: into memory (BUF) or a file (F) */
    char *buf;
    size_t n, cap, max;      /* bytes held, allocated, allowed */
    FILE *f;
    int64_t *have, total;
    int64_t asked_from;      /* the first byte asked for (Range) */
    int64_t range_start;     /* of the answer's Content-Range, -1 none */
    int body_started;
    int bad_range;           /* the answer holds other bytes than those asked for */
    int write_error;         /* errno of a failed write */
    ac_progress *progress;
} transfer;

static void header_value(char *dst, size_t size, const char *v, size_t n)
{
    while (n && (v[0] == ' ' || v[0] == '\t')) v++, n--;
    while (n && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' ')) n--;
    if (n >= size) n = size - 1;
    memcpy(dst, v, n);
    dst[n] = 0;
}

static void etag_value(char *dst, const char *v, size_t n)
{
    char t[HUB_ETAG];
    header_value(t, sizeof t, v, n);
    const char *s = t;
    if (strncmp(s, "W/", 2) == 0) s += 2;
    size_t l = strlen(s);
    if (l >= 2 && s[0] == '"' && s[l - 1] == '"') s++, l -= 2;
    snprintf(dst, HUB_ETAG, "%.*s", (int)l, s);
}

static size_t on_header(char *p, size_t size, size_t count, void *user)
{
    transfer *t = user;
    size_t n = size * count;
    t->header_bytes += n;
    if (t->header_bytes > MAX_HEADERS) {
        t->too_big = 1;
        return 0;
    }
    hub_reply *r = t->rep;
    if (n > 5 && strncmp(p, "HTTP/", 5) == 0) { /* a new answer (after a redirect): forget the last */
        *r = (hub_reply){.length = -1, .linked_size = -1};
        t->range_start = -1;
        const char *sp = memchr(p, ' ', n);
        if (sp && (size_t)(sp - p) + 4 <= n) r->status = strtol(sp + 1, NULL, 10);
        return n;
    }
    const char *colon = memchr(p, ':', n);
    if (!colon) return n;
    size_t k = (size_t)(colon - p), vn = n - k - 1;
    const char *v = colon + 1;
    char num[32];
#define IS(name) (k == strlen(name) && strncasecmp(p, name, k) == 0)
    if (IS("ETag")) etag_value(r->etag, v, vn);
    else if (IS("X-Linked-Etag")) etag_value(r->linked_etag, v, vn);
    else if (IS("X-Repo-Commit")) header_value(r->commit, sizeof r->commit, v, vn);
    else if (IS("Location")) header_value(r->location, sizeof r->location, v, vn);
    else if (IS("X-Error-Message")) header_value(r->message, sizeof r->message, v, vn);
    else if (IS("Content-Range")) {
        header_value(num, sizeof num, v, vn);
        long long x;
        t->range_start = sscanf(num, "bytes %lld-", &x) == 1 && x >= 0 ? x : -2;
    }
    else if (IS("Content-Length") || IS("X-Linked-Size")) {
        header_value(num, sizeof num, v, vn);
        char *end;
        errno = 0;
        long long x = strtoll(num, &end, 10);
        int64_t val = (num[0] && !*end && !errno && x >= 0) ? x : -1;
        if (IS("Content-Length")) r->length = val;
        else r->linked_size = val;
    }
#undef IS
    return n;
}

static size_t on_body(char *p, size_t size, size_t count, void *user)
{
    transfer *t = user;
    size_t n = size * count;
    long st = t->rep->status;
    if (t->f) {
        if (st != 200 && st != 206) return n; /* an error page: never into the file */
        if (!t->body_started) {
            t->body_started = 1;
            if (st == 206 && t->range_start != t->asked_from) {
                t->bad_range = 1;
                return 0;
            }
            if (st == 200 && *t->have > 0) { /* Range ignored: the whole file comes, from its first byte */
                if (fflush(t->f) || ftruncate(fileno(t->f), 0) || fseeko(t->f, 0, SEEK_SET)) {
                    t->write_error = errno ? errno : EIO;
                    return 0;
                }
                *t->have = 0;
            }
        }
        if (t->total >= 0 && *t->have + (int64_t)n > t->total) {
            t->too_big = 1;
            return 0;
        }
        if (fwrite(p, 1, n, t->f) != n) {
            t->write_error = errno ? errno : EIO;
            return 0;
        }
        *t->have += (int64_t)n;
        if (t->progress) ac_progress_bytes(t->progress, (double)*t->have);
        return n;
    }
    if (t->n + n > t->max) {
        t->too_big = 1;
        return 0;
    }
    if (t->n + n + 1 > t->cap) {
        size_t cap = t->cap * 2 > t->n + n + 1 ? t->cap * 2 : t->n + n + 1;
        char *b = realloc(t->buf, cap);
        if (!b) {
            t->write_error = ENOMEM;
            return 0;
        }
        t->buf = b;
        t->cap = cap;
    }
    memcpy(t->buf + t->n, p, n);
    t->n += n;
    t->buf[t->n] = 0;
    return n;
}

static double timeout_s(void)
{
    const char *e = getenv("AUDIOC_HUB_TIMEOUT");
    double v = e && *e ? atof(e) : 0;
    return v > 0 ? v : 60;
}

static CURL *easy(const char *url, transfer *t, struct curl_slist **hdr, int follow)
{
    pthread_once(&init_once, global_init);
    if (init_failed) return NULL;
    CURL *c = curl_easy_init();
    if (!c) return NULL;
    char tok[512], auth[600];
    read_token(tok);
    *hdr = NULL;
    if (tok[0]) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", tok);
        *hdr = curl_slist_append(*hdr, auth);
    }
    long secs = timeout_s() < 1 ? 1 : (long)timeout_s();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, *hdr);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "audioc/" AUDIOC_VERSION);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, secs < 30 ? secs : 30L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L); /* a server that stops sending */
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, secs);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, (long)follow);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, t);
    return c;
}

/* The message for an HTTP status STATUS of WHAT at URL. */
static ac_status status_error(const char *what, const char *url, const hub_reply *r)
{
    const char *m = r->message[0] ? r->message : NULL;
    char extra[300] = "";
    if (m) snprintf(extra, sizeof extra, " (the Hub says: %s)", m);
    switch (r->status) {
    case 401:
    case 403:
        return ac_error(AC_ERR_IO,
                        "%s: access refused (HTTP %ld)%s: the repository is gated or private; accept its terms on "
                        "its page on the Hub and set HF_TOKEN (or run huggingface-cli login)",
                        what, r->status, extra);
    case 404: return ac_error(AC_ERR_IO, "%s: not found (HTTP 404): no such repository, revision or file%s", what, extra);
    case 416: return ac_error(AC_ERR_IO, "%s: the server refused the byte range asked for (HTTP 416)", what);
    default: return ac_error(AC_ERR_IO, "%s: HTTP %ld from %s%s", what, r->status, url, extra);
    }
}

static int transient_status(long s) { return s == 429 || (s >= 500 && s <= 599); }

static int transient_curl(CURLcode rc)
{
    return rc == CURLE_COULDNT_CONNECT || rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_PARTIAL_FILE ||
           rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR || rc == CURLE_GOT_NOTHING || rc == CURLE_COULDNT_RESOLVE_HOST;
}

static void backoff(int attempt)
{
    const char *e = getenv("AUDIOC_HUB_BACKOFF");
    double base = e && *e ? atof(e) : 1.0; /* seconds before the first retry; doubled after each */
    double s = base * (double)(1 << attempt);
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* A curl failure of WHAT as a message. */
static ac_status curl_error(const char *what, const char *url, CURLcode rc, const transfer *t, const char *eb)
{
    if (t->bad_range)
        return ac_error(AC_ERR_FORMAT, "%s: %s answered with other bytes than the range asked for", what, url);
    if (t->too_big && t->header_bytes > MAX_HEADERS)
        return ac_error(AC_ERR_FORMAT, "%s: refused the answer of %s: its headers are too large", what, url);
    if (t->too_big) return ac_error(AC_ERR_FORMAT, "%s: the server sent more than expected from %s", what, url);
    if (t->write_error == ENOSPC) return ac_error(AC_ERR_IO, "%s: the disk is full", what);
    if (t->write_error) return ac_error(AC_ERR_IO, "%s: cannot write: %s", what, strerror(t->write_error));
    if (rc == CURLE_OUT_OF_MEMORY) /* what libcurl answers to a header beyond its 100 KB */
        return ac_error(AC_ERR_FORMAT, "%s: refused the answer of %s: a header is too large", what, url);
    if (rc == CURLE_OPERATION_TIMEDOUT)
        return ac_error(AC_ERR_IO, "%s: %s stalled: nothing came for %g s (AUDIOC_HUB_TIMEOUT)", what, url,
                        timeout_s());
    if (rc == CURLE_TOO_MANY_REDIRECTS) return ac_error(AC_ERR_IO, "%s: too many redirects from %s", what, url);
    if (rc == CURLE_PARTIAL_FILE)
        return ac_error(AC_ERR_IO, "%s: the connection to %s ended before the whole answer came", what, url);
    return ac_error(AC_ERR_IO, "%s: %s (%s)", what, eb[0] ? eb : curl_easy_strerror(rc), url);
}

/* One request with retries; T's reply holds the answer. */
static ac_status perform(const char *url, const char *what, transfer *t, int follow, int head)
{
    for (int attempt = 0;; attempt++) {
        struct curl_slist *hdr;
        *t->rep = (hub_reply){.length = -1, .linked_size = -1};
        t->header_bytes = 0, t->too_big = 0, t->n = 0;
        if (t->buf) t->buf[0] = 0;
        CURL *c = easy(url, t, &hdr, follow);
        if (!c) return ac_error(AC_ERR_NOMEM, "%s: libcurl could not start", what);
        char eb[CURL_ERROR_SIZE] = "";
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, eb);
        if (head) curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
        if (t->max) curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)t->max);
        CURLcode rc = curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &t->rep->status);
        curl_easy_cleanup(c);
        curl_slist_free_all(hdr);
        int retry = attempt + 1 < TRIES && (rc == CURLE_OK ? transient_status(t->rep->status) : transient_curl(rc));
        if (retry && !t->too_big) {
            backoff(attempt);
            continue;
        }
        if (rc == CURLE_FILESIZE_EXCEEDED) t->too_big = 1;
        if (rc != CURLE_OK) return curl_error(what, url, rc, t, eb);
        return AC_OK;
    }
}

ac_status hub_http_get(const char *url, const char *what, size_t max, char **body, size_t *n, long *status)
{
    *body = NULL;
    *n = 0;
    hub_reply rep;
    transfer t = {.rep = &rep, .max = max, .cap = 1 << 16, .buf = malloc(1 << 16)};
    if (!t.buf) return ac_error(AC_ERR_NOMEM, "out of memory");
    t.buf[0] = 0;
    ac_status s = perform(url, what, &t, 1, 0);
    *status = rep.status;
    if (s == AC_OK && rep.status != 200) s = status_error(what, url, &rep);
    if (s) {
        free(t.buf);
        return s;
    }
    *body = t.buf;
    *n = t.n;
    return AC_OK;
}

ac_status hub_http_head(const char *url, const char *what, hub_reply *rep)
{
    transfer t = {.rep = rep};
    AC_TRY(perform(url, what, &t, 0, 1));
    if (rep->status >= 400) return status_error(what, url, rep);
    if (rep->status != 200 && (rep->status < 300 || rep->status > 308))
        return ac_error(AC_ERR_IO, "%s: unexpected HTTP %ld from %s", what, rep->status, url);
    return AC_OK;
}

ac_status hub_http_download(const char *url, const char *what, FILE *f, int64_t *have, int64_t total,
                            const char *label)
{
    ac_progress prog;
    ac_progress_begin(&prog, label, (double)total);
    ac_status s = AC_OK;
    int resumes = 0; /* tries that brought bytes before the connection broke */
    for (int attempt = 0; *have < total || total < 0; attempt++) {
        hub_reply rep;
        transfer t = {.rep = &rep, .f = f, .have = have, .total = total, .asked_from = *have, .progress = &prog};
        struct curl_slist *hdr;
        rep = (hub_reply){.length = -1, .linked_size = -1};
        CURL *c = easy(url, &t, &hdr, 1);
        if (!c) {
            s = ac_error(AC_ERR_NOMEM, "%s: libcurl could not start", what);
            break;
        }
        char eb[CURL_ERROR_SIZE] = "", range[64];
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, eb);
        if (*have > 0) {
            snprintf(range, sizeof range, "%lld-", (long long)*have);
            curl_easy_setopt(c, CURLOPT_RANGE, range);
        }
        int64_t before = *have;
        CURLcode rc = curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &rep.status);
        curl_easy_cleanup(c);
        curl_slist_free_all(hdr);
        if (rc == CURLE_OK && rep.status != 200 && rep.status != 206) {
            if (transient_status(rep.status) && attempt + 1 < TRIES) {
                backoff(attempt);
                continue;
            }
            s = status_error(what, url, &rep);
            break;
        }
        if (rc == CURLE_OK && total < 0) break;
        if (rc == CURLE_OK && *have < total) rc = CURLE_PARTIAL_FILE; /* the answer ended early */
        if (rc != CURLE_OK) {
            /* resume after a cut connection: TRIES in a row that bring nothing, or
             * RESUMES that bring something, before giving up (the next run resumes) */
            int moved = *have > before;
            if (!t.too_big && !t.write_error && !t.bad_range && transient_curl(rc) &&
                (moved ? resumes++ < RESUMES : attempt + 1 < TRIES)) {
                if (moved) attempt = -1;
                else backoff(attempt);
                if (fflush(f) == 0) continue;
            }
            s = curl_error(what, url, rc, &t, eb);
            if (rc == CURLE_PARTIAL_FILE && !t.too_big && !t.bad_range)
                s = ac_error(AC_ERR_IO, "%s: the download broke off at %lld of %lld bytes (%s); run again to resume",
                             what, (long long)*have, (long long)total, url);
            else if (rc == CURLE_OPERATION_TIMEDOUT)
                ac_error_prefix(s, "%s: %lld of %lld bytes came; run again to resume", what, (long long)*have,
                                (long long)total);
            break;
        }
    }
    ac_progress_end(&prog);
    if (s == AC_OK && fflush(f) != 0)
        s = ac_error(AC_ERR_IO, "%s: %s", what, errno == ENOSPC ? "the disk is full" : strerror(errno));
    return s;
}
