/* The HTTP front on libmicrohttpd (one thread per connection): each request
 * is admitted by its row of the route table (admit.c), its body read as the
 * row says (a multipart form, or JSON, within the row's limit and the upload
 * budget), and answered by the row's endpoint: at once, or by a queue worker,
 * plain or as server-sent events. CORS headers on every answer. A client
 * that goes away cancels its job. Knows no endpoint by name. */
#include <microhttpd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "routes.h"

typedef struct {
    const route *route;   /* NULL: no such endpoint */
    request_ctx ctx;      /* what the endpoint sees: the configuration, the id, the body */
    struct MHD_Connection *conn;
    const char *method, *url;
    double t0;
    form *form;
    buffer json;        /* the body of a BODY_JSON route */
    int bad_body, has_body;
    int preflight;      /* a CORS preflight (OPTIONS) */
    int over_budget;    /* a chunked upload outgrew the buffer budget: its rest is dropped */
    size_t reserved;    /* bytes of the buffer budget it holds */
    reply early;        /* an answer decided before the body was read */
    job job;
    int submitted;
    int streaming;      /* its events are being sent */
} request;

static atomic_int in_flight;   /* requests begun and not yet completed */
static atomic_size_t buffered; /* upload bytes reserved by requests, against --max-buffer-mb */

/* Reserves N more bytes of the upload budget for Q; 0 when they do not fit. */
static int budget_take(request *q, size_t n)
{
    size_t budget = (size_t)q->ctx.cfg->max_buffer_mb << 20, cur = atomic_load(&buffered);
    do {
        if (n > budget || cur > budget - n) return 0;
    } while (!atomic_compare_exchange_weak(&buffered, &cur, cur + n));
    q->reserved += n;
    return 1;
}

/* S for a log line: bytes outside printable ASCII (a newline that would
 * forge a line, escape sequences) and backslashes as \xHH, cut to N-1. */
static const char *log_safe(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; *s && k + 5 < n; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c < 0x7f && c != '\\') out[k++] = (char)c;
        else k += (size_t)snprintf(out + k, n - k, "\\x%02x", c);
    }
    out[k] = 0;
    return out;
}

static void log_request(const request *q, int status)
{
    char method[64], url[512];
    if (!q->ctx.cfg->quiet)
        fprintf(stderr, "%s %s %d %.3f s\n", log_safe(q->method, method, sizeof method),
                log_safe(q->url, url, sizeof url), status, ac_now() - q->t0);
}

static void add_common_headers(const request *q, struct MHD_Response *resp, const char *type)
{
    const char *cors = q->ctx.cfg->cors;
    if (type) MHD_add_response_header(resp, "Content-Type", type);
    if (cors) {
        MHD_add_response_header(resp, "Access-Control-Allow-Origin", cors);
        MHD_add_response_header(resp, "Vary", "Origin");
    }
}

static enum MHD_Result send_reply(request *q, reply *r)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(r->body.len, r->body.data ? r->body.data : (void *)"", MHD_RESPMEM_MUST_COPY);
    if (!resp) return MHD_NO;
    add_common_headers(q, resp, r->content_type);
    for (const char *const *h = r->headers; h && *h; h += 2) MHD_add_response_header(resp, h[0], h[1]);
    /* an answer before the body was read: the rest of the body is not read, so the connection cannot go on */
    if (q->has_body && r == &q->early) MHD_add_response_header(resp, "Connection", "close");
    /* a busy or stopping server: when to try again (or, behind a balancer, elsewhere) */
    char retry[16];
    if (r->status == 503) {
        snprintf(retry, sizeof retry, "%d", queue_retry_after());
        MHD_add_response_header(resp, "Retry-After", retry);
    }
    if (r->status == 405 && q->route) {
        char allow[32];
        snprintf(allow, sizeof allow, "%s, OPTIONS", q->route->method);
        MHD_add_response_header(resp, "Allow", allow);
    }
    if (q->preflight) {
        MHD_add_response_header(resp, "Access-Control-Allow-Methods", "GET, POST, OPTIONS");
        MHD_add_response_header(resp, "Access-Control-Allow-Headers", "Authorization, Content-Type");
        MHD_add_response_header(resp, "Access-Control-Max-Age", "86400");
    }
    enum MHD_Result ok = MHD_queue_response(q->conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    log_request(q, r->status);
    buffer_free(&r->body);
    return ok;
}

static const char *header(struct MHD_Connection *c, const char *name)
{
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* First sight of a request: its route, and whether it is refused before
 * its body (into q->early). */
static void admit(request *q, const char *url, const char *method)
{
    const server_config *cfg = q->ctx.cfg;
    request_head h = {method, url, header(q->conn, "Authorization"), header(q->conn, "Content-Length"),
                      header(q->conn, "Transfer-Encoding"), header(q->conn, "Expect")};
    admission a;
    admit_head(&h, cfg, &a);
    q->route = a.route;
    q->ctx.id = a.id;
    q->has_body = a.has_body;
    q->preflight = a.status == 204;
    if (q->preflight) q->early.status = 204;
    else if (a.status) reply_error(&q->early, a.status, a.param, "%s", a.message);
    if (a.status) return;
    /* refused before a byte of the body is read: a full queue, or a full upload budget */
    if (q->route->lane == LANE_QUEUE && queue_full()) {
        reply_error(&q->early, 503, NULL, "the server is busy: %d requests are waiting; try again later", cfg->max_queue);
        return;
    }
    if (q->route->body == BODY_NONE) return;
    if (!budget_take(q, (size_t)a.length)) {
        reply_error(&q->early, 503, NULL, "the server is busy receiving other uploads (%ld MB at most at once); "
                    "try again later", cfg->max_buffer_mb);
        return;
    }
    if (q->route->body == BODY_JSON) {
        q->ctx.json = &q->json;
        return;
    }
    q->ctx.form = q->form = form_new(q->conn, route_body_max(q->route, cfg), (size_t)a.length);
    if (!q->form)
        reply_error(&q->early, 400, NULL, "the body must be multipart/form-data (with a boundary)");
}

/* Appends bytes of a JSON body: -1 when they would pass the route's limit. */
static int json_feed(request *q, const char *data, size_t n)
{
    size_t max = route_body_max(q->route, q->ctx.cfg);
    if (n > max || q->json.len > max - n) return -1;
    return buffer_add(&q->json, data, n);
}

static int client_gone(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) return 0;
    struct pollfd p = {.fd = ci->connect_fd, .events = POLLIN | POLLRDHUP};
    if (poll(&p, 1, 0) <= 0) return 0;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return 1;
    char b;
    return recv(ci->connect_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

static ssize_t read_events(void *cls, uint64_t pos, char *buf, size_t max)
{
    request *q = cls;
    long n = queue_read_events(&q->job, (size_t)pos, buf, max, 1.0);
    if (n < 0) return MHD_CONTENT_READER_END_OF_STREAM;
    if (n == 0 && client_gone(q->conn)) return MHD_CONTENT_READER_END_WITH_ERROR;
    return n;
}

static enum MHD_Result start_stream(request *q)
{
    struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, read_events, q, NULL);
    if (!resp) return MHD_NO;
    add_common_headers(q, resp, "text/event-stream");
    MHD_add_response_header(resp, "Cache-Control", "no-cache");
    for (const char *const *h = q->job.result.headers; h && *h; h += 2) MHD_add_response_header(resp, h[0], h[1]);
    enum MHD_Result ok = MHD_queue_response(q->conn, 200, resp);
    MHD_destroy_response(resp);
    log_request(q, 200);
    q->streaming = 1;
    return ok;
}

/* Whether the multipart body came in whole and within the limits (else the error in R). */
static int form_checked(request *q, reply *r)
{
    const char *field;
    int too_large = form_too_large(q->form, &field);
    if (too_large == FORM_BODY_TOO_LARGE) {
        reply_error(r, 413, "file", "the upload is larger than the limit of %zu MB",
                    route_body_max(q->route, q->ctx.cfg) >> 20);
        return -1;
    }
    if (too_large == FORM_FIELD_TOO_LARGE) {
        if (strcmp(field, "file") == 0)
            reply_error(r, 400, field, "the 'file' part has no filename, so it is a text field, and text fields are "
                        "limited to %u KB: send the audio as a file upload (with a filename)", FORM_MAX_TEXT_FIELD >> 10);
        else reply_error(r, 400, field, "the form field '%s' is longer than %u KB", field, FORM_MAX_TEXT_FIELD >> 10);
        return -1;
    }
    int finished = form_finish(q->form) == 0;
    if (q->bad_body || !finished) {
        reply_error(r, 400, NULL, "the multipart/form-data body is malformed or incomplete");
        return -1;
    }
    /* the one field policy: names the endpoint takes, text without control characters */
    for (int i = 0; i < form_count(q->form); i++) {
        const form_field *fl = form_at(q->form, i);
        int at = fl->is_file ? -1 : field_control(fl->value.data ? fl->value.data : "", fl->value.len);
        if (q->route->field_known && !q->route->field_known(fl->name)) {
            field_unknown(r, fl->name);
            return -1;
        }
        if (at >= 0) {
            field_has_control(r, fl->name, fl->value.data, at);
            return -1;
        }
    }
    return 0;
}

/* The body is in: check it, queue the job, wait for its answer. */
static enum MHD_Result run_job(request *q)
{
    const server_config *cfg = q->ctx.cfg;
    reply r = {0};
    if (q->over_budget) {
        reply_error(&r, 503, NULL, "the server is busy receiving other uploads (%ld MB at most at once); "
                    "try again later", cfg->max_buffer_mb);
        return send_reply(q, &r);
    }
    if (q->route->body == BODY_JSON && q->bad_body) {
        reply_error(&r, 413, NULL, "the JSON body is larger than %zu KB", route_body_max(q->route, cfg) >> 10);
        return send_reply(q, &r);
    }
    if (q->route->body == BODY_FORM && form_checked(q, &r)) return send_reply(q, &r);
    if (q->route->prepare && q->route->prepare(&q->job, &r)) return send_reply(q, &r);
    q->job.run = q->route->respond;
    size_t body = q->form ? form_bytes(q->form) : q->json.len;
    q->job.quick = q->route->quick_body && body <= q->route->quick_body;
    if (queue_submit(&q->job)) {
        reply_error(&r, 503, NULL, "the server is busy: %d requests are waiting; try again later", cfg->max_queue);
        return send_reply(q, &r);
    }
    q->submitted = 1;
    int has_events = 0;
    for (;;) {
        int state = queue_wait(&q->job, JOB_DONE, q->job.stream ? &has_events : NULL, 0.1);
        if (state == JOB_DONE || has_events) break;
        if (!atomic_load(&q->job.cancelled) && client_gone(q->conn)) atomic_store(&q->job.cancelled, JOB_CLIENT_GONE);
    }
    if (atomic_load(&q->job.cancelled) == JOB_CLIENT_GONE) {
        log_request(q, 499);
        return MHD_NO;   /* nobody to answer; the job is waited for when the request is freed */
    }
    int why = atomic_load(&q->job.cancelled);
    if ((why == JOB_STOPPED || why == JOB_DEADLINE) && !has_events) {
        char msg[200];
        job_stop_message(why, msg, sizeof msg);
        reply_error(&r, 503, NULL, "%s", msg);
        return send_reply(q, &r);
    }
    if (has_events) return start_stream(q);
    if (!q->job.result.status) reply_error(&q->job.result, 503, NULL, "the server is shutting down");
    return send_reply(q, &q->job.result);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    request *q = *con_cls;
    if (!q) {
        if (!(q = calloc(1, sizeof *q))) return MHD_NO;
        atomic_fetch_add(&in_flight, 1);
        *con_cls = q;
        q->ctx.cfg = cls;
        q->job.req = &q->ctx;
        q->conn = c;
        q->method = method;
        q->url = url;
        q->t0 = ac_now();
        q->ctx.if_none_match = header(c, "If-None-Match");
        q->ctx.accept_encoding = header(c, "Accept-Encoding");
        admit(q, url, method);
        /* a refusal is answered at once, before any body is read: the
         * connection is closed after it (see send_reply) */
        if (q->early.status) return send_reply(q, &q->early);
        guard_phase(c, q->has_body ? CONN_BODY : CONN_WORK);
        return MHD_YES;
    }
    if (*upload_size) {
        /* a body without Content-Length takes its budget as it comes */
        if (!header(c, "Content-Length") && !q->over_budget && !budget_take(q, *upload_size)) q->over_budget = 1;
        if (q->form && !q->bad_body && !q->over_budget && form_feed(q->form, upload, *upload_size)) q->bad_body = 1;
        if (q->ctx.json && !q->bad_body && !q->over_budget && json_feed(q, upload, *upload_size)) q->bad_body = 1;
        *upload_size = 0;
        return MHD_YES;
    }
    guard_phase(c, CONN_WORK);
    if (q->route->lane == LANE_QUEUE) return run_job(q);
    q->route->respond(&q->job);
    return send_reply(q, &q->job.result);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    request *q = *con_cls;
    if (!q) return;
    if (q->submitted) {
        /* a stream cut short by its client (the job is stopped below): logged again as 499 */
        if (q->streaming && toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && toe != MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN)
            log_request(q, 499);
        atomic_store(&q->job.cancelled, JOB_CLIENT_GONE);
        while (queue_wait(&q->job, JOB_DONE, NULL, 1.0) != JOB_DONE) {
        }
    }
    form_free(q->form);
    buffer_free(&q->json);
    atomic_fetch_sub(&buffered, q->reserved);
    buffer_free(&q->early.body);
    buffer_free(&q->job.result.body);
    buffer_free(&q->job.events);
    free(q->job.ctx);
    free(q);
    *con_cls = NULL;
    atomic_fetch_sub(&in_flight, 1);
    guard_phase(c, CONN_HEAD);   /* kept alive: the next head is due within the timeout */
}

static struct MHD_Daemon *daemon_;

/* libmicrohttpd's own messages. A client that hangs up is logged once by
 * log_request (as 499); the daemon's lines for the same event (the answer
 * refused because nobody waits for it, a body that cannot be sent) would
 * read as faults, and are left out. */
static void daemon_log(void *cls, const char *fmt, va_list ap)
{
    static const char *const hang_ups[] = {"Application reported internal error", "Failed to send",
                                           "application reported error generating data"};
    (void)cls;
    for (size_t k = 0; k < sizeof hang_ups / sizeof *hang_ups; k++)
        if (strstr(fmt, hang_ups[k])) return;
    fputs("audioc-server: ", stderr);
    vfprintf(stderr, fmt, ap);
}

int http_start(const server_config *cfg, int *bound_port)
{
    const char *host = cfg->host;
    int port = cfg->port;
    struct sockaddr_storage sa = {0};
    /* ITC lets the daemon stop accepting while requests finish (http_quiesce) */
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC;
    if (strchr(host, ':')) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&sa;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1) return -1;
        flags |= MHD_USE_IPv6;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&sa;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)port);
        if (inet_pton(AF_INET, host, &a->sin_addr) != 1) return -1;
    }
    daemon_ = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, handle, (void *)cfg,
                               MHD_OPTION_EXTERNAL_LOGGER, daemon_log, NULL,   /* first: it takes every message */
                               MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                               MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                               MHD_OPTION_NOTIFY_CONNECTION, guard_notify, (void *)cfg,
                               /* the guard keeps max_connections by dropping; this hard limit only has to
                                * leave room for newcomers while dropped connections are still closing,
                                * which lags on a loaded machine */
                               MHD_OPTION_CONNECTION_LIMIT, (unsigned)(4 * cfg->max_connections + 64),
                               MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)cfg->max_per_client,
                               MHD_OPTION_CONNECTION_TIMEOUT, 120u,
                               MHD_OPTION_END);
    if (!daemon_) return -2;
    if (guard_start(cfg)) {
        MHD_stop_daemon(daemon_);
        daemon_ = NULL;
        return -2;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
    *bound_port = di ? di->port : port;
    return 0;
}

static MHD_socket listen_fd = MHD_INVALID_SOCKET;

void http_quiesce(void)
{
    if (!daemon_ || listen_fd != MHD_INVALID_SOCKET) return;
    listen_fd = MHD_quiesce_daemon(daemon_);
    if (listen_fd != MHD_INVALID_SOCKET) close(listen_fd);   /* ours now: new clients are refused, not queued */
}

int http_in_flight(void) { return atomic_load(&in_flight); }

void http_stop(void)
{
    if (daemon_) MHD_stop_daemon(daemon_);
    daemon_ = NULL;
    guard_stop();
    listen_fd = MHD_INVALID_SOCKET;
}
