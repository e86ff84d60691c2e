/* Fuzz the multipart form reader (tools/audioc-server/form.c) behind
 * libmicrohttpd's post processor: the input's first byte picks the chunk
 * sizes (and plain or chunked transfer), its first line is the boundary,
 * the rest the body. The request goes to a daemon without threads over a
 * socket pair, one chunk per run of the daemon, so the post processor
 * sees the body in arbitrary pieces. */
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_BODY (1u << 20)

typedef struct {
    form *f;
    int bad;
} upload;

/* What the form promises about its fields. */
static void check_fields(const form *f)
{
    size_t total = 0;
    for (int i = 0; i < form_count(f); i++) {
        const form_field *fl = form_at(f, i);
        if (!fl || !memchr(fl->name, 0, sizeof fl->name) || !memchr(fl->filename, 0, sizeof fl->filename)) abort();
        if (fl->value.len && fl->value.data[fl->value.len] != 0) abort();   /* text fields read as C strings */
        if (!fl->is_file && fl->value.len > FORM_MAX_TEXT_FIELD) abort();
        if (form_get(f, fl->name) == NULL) abort();
        total += fl->value.len;
    }
    if (total > MAX_BODY) abort();
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *body, size_t *size, void **con_cls)
{
    upload *u = *con_cls;
    if (!u) {
        if (!(u = calloc(1, sizeof *u))) return MHD_NO;
        const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        u->f = form_new(c, MAX_BODY, len ? strtoull(len, NULL, 10) : 0);
        *con_cls = u;
        return MHD_YES;
    }
    if (*size) {
        if (!u->f || form_feed(u->f, body, *size)) u->bad = 1;
        *size = 0;
        return MHD_YES;
    }
    if (u->f) {
        const char *field;
        (void)form_too_large(u->f, &field);
        if (!u->bad) (void)form_finish(u->f);
        check_fields(u->f);
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(2, (void *)"ok", MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ok = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ok;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
    upload *u = *con_cls;
    if (!u) return;
    form_free(u->f);
    free(u);
    *con_cls = NULL;
}

static struct MHD_Daemon *daemon_(void)
{
    static struct MHD_Daemon *d;
    if (!d)
        d = MHD_start_daemon(MHD_USE_NO_LISTEN_SOCKET, 0, NULL, NULL, handle, NULL, MHD_OPTION_NOTIFY_COMPLETED,
                             completed, NULL, MHD_OPTION_END);
    if (!d) abort();
    return d;
}

/* Sends N bytes, running the daemon whenever the socket is full. */
static void send_run(struct MHD_Daemon *d, int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0) k = 0;
        p += k;
        n -= (size_t)k;
        MHD_run(d);
    }
}

static void drain(int fd)
{
    char buf[4096];
    while (recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0) {
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > MAX_BODY) return 0;
    struct MHD_Daemon *d = daemon_();
    unsigned seed = data[0];
    int chunked = seed & 1;
    const char *text = (const char *)data + 1, *end = (const char *)data + size;
    const char *nl = memchr(text, '\n', (size_t)(end - text));
    if (!nl || nl - text > 200) return 0;
    int blen = (int)(nl - text);
    const char *body = nl + 1;
    size_t body_len = (size_t)(end - body);

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) return 0;
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    struct sockaddr_in peer = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (MHD_add_connection(d, sv[1], (struct sockaddr *)&peer, sizeof peer) != MHD_YES) {
        close(sv[0]);
        close(sv[1]);
        return 0;
    }
    char head[512];
    int hn = snprintf(head, sizeof head, "POST /f HTTP/1.1\r\nHost: x\r\n"
                      "Content-Type: multipart/form-data; boundary=%.*s\r\n", blen, text);
    if (chunked) hn += snprintf(head + hn, sizeof head - (size_t)hn, "Transfer-Encoding: chunked\r\n\r\n");
    else hn += snprintf(head + hn, sizeof head - (size_t)hn, "Content-Length: %zu\r\n\r\n", body_len);
    send_run(d, sv[0], head, (size_t)hn);
    /* chunk sizes from an LCG on the seed: 1..64 bytes, or up to 4 KB */
    uint32_t r = seed * 2654435761u + 1;
    for (size_t off = 0; off < body_len;) {
        r = r * 1664525u + 1013904223u;
        size_t n = (r >> 8) % ((seed & 2) ? 4096 : 64) + 1;
        if (n > body_len - off) n = body_len - off;
        if (chunked) {
            char ch[32];
            int k = snprintf(ch, sizeof ch, "%zx\r\n", n);
            send_run(d, sv[0], ch, (size_t)k);
        }
        send_run(d, sv[0], body + off, n);
        if (chunked) send_run(d, sv[0], "\r\n", 2);
        drain(sv[0]);
        off += n;
    }
    if (chunked) send_run(d, sv[0], "0\r\n\r\n", 5);
    shutdown(sv[0], SHUT_WR);
    for (int i = 0; i < 64; i++) {
        MHD_run(d);
        drain(sv[0]);
    }
    close(sv[0]);
    for (int i = 0; i < 8; i++) MHD_run(d);   /* the daemon sees the close and frees the connection */
    return 0;
}
