/* audioc-server's multipart form reader behind a real libmicrohttpd daemon,
 * with the body cut into HTTP chunks at every possible place: the parser
 * reports a field in as many calls as the chunks make, and every field must
 * come out whole (the official OpenAI SDK streams uploads chunked, and
 * short fields were once lost that way). */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"
#include "test_util.h"

typedef struct {
    form *f;
    int bad;
} upload;

/* The fields as "name[;filename]=len:value" lines, into the reply. */
static void describe(const form *f, buffer *out)
{
    for (int i = 0; i < form_count(f); i++) {
        const form_field *fl = form_at(f, i);
        char head[512];
        int n = snprintf(head, sizeof head, "%s%s%s=%zu:", fl->name, fl->is_file ? ";" : "",
                         fl->is_file ? fl->filename : "", fl->value.len);
        buffer_add(out, head, (size_t)n);
        buffer_add(out, fl->value.data ? fl->value.data : "", fl->value.len);
        buffer_add(out, "\n", 1);
    }
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *data, size_t *size, void **con_cls)
{
    upload *u = *con_cls;
    if (!u) {
        u = calloc(1, sizeof *u);
        u->f = form_new(c, 1 << 20, 0);
        *con_cls = u;
        return MHD_YES;
    }
    if (*size) {
        if (!u->f || form_feed(u->f, data, *size)) u->bad = 1;
        *size = 0;
        return MHD_YES;
    }
    buffer out = {0};
    if (u->bad || !u->f || form_finish(u->f)) buffer_add(&out, "BAD\n", 4);
    else describe(u->f, &out);
    struct MHD_Response *r = MHD_create_response_from_buffer(out.len, out.data, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ok = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    buffer_free(&out);
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

static int port;

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* POSTs BODY as HTTP chunks that end at each offset of CUTS[0..ncuts)
 * (ascending, inside the body); returns the reply body (malloc'd) or NULL. */
static char *post_chunked(const char *body, size_t n, const size_t *cuts, int ncuts)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
        if (fd >= 0) close(fd);
        return NULL;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const char *head = "POST /f HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                       "Content-Type: multipart/form-data; boundary=BOUNDARY\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n";
    buffer req = {0};
    buffer_add(&req, head, strlen(head));
    size_t at = 0;
    for (int i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : n;
        char len[32];
        int k = snprintf(len, sizeof len, "%zx\r\n", end - at);
        buffer_add(&req, len, (size_t)k);
        buffer_add(&req, body + at, end - at);
        buffer_add(&req, "\r\n", 2);
        at = end;
    }
    buffer_add(&req, "0\r\n\r\n", 5);
    int ok = send_all(fd, req.data, req.len) == 0;
    buffer_free(&req);
    buffer resp = {0};
    char b[4096];
    ssize_t k;
    while (ok && (k = recv(fd, b, sizeof b, 0)) > 0) buffer_add(&resp, b, (size_t)k);
    close(fd);
    char *p = resp.data ? strstr(resp.data, "\r\n\r\n") : NULL;
    char *out = p ? strdup(p + 4) : NULL;
    buffer_free(&resp);
    return out;
}

static const char BODY[] =
    "--BOUNDARY\r\nContent-Disposition: form-data; name=\"response_format\"\r\n\r\nsrt\r\n"
    "--BOUNDARY\r\nContent-Disposition: form-data; name=\"language\"\r\n\r\nda\r\n"
    "--BOUNDARY\r\nContent-Disposition: form-data; name=\"temperature\"\r\n\r\n0\r\n"
    "--BOUNDARY\r\nContent-Disposition: form-data; name=\"prompt\"\r\n\r\n\r\n"
    "--BOUNDARY\r\nContent-Disposition: form-data; name=\"stream\"\r\n\r\ntrue\r\n"
    "--BOUNDARY\r\nContent-Disposition: form-data; name=\"timestamp_granularities[]\"\r\n\r\nword\r\n"
    "--BOUNDARY\r\nContent-Disposition: form-data; name=\"timestamp_granularities[]\"\r\n\r\nsegment\r\n"
    "--BOUNDARY\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n"
    "Content-Type: audio/wav\r\n\r\nRIFF\r\n--BOUND\r\n\r\nxy\r\n"
    "--BOUNDARY\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nhviske-tiny-da\r\n"
    "--BOUNDARY--\r\n";

static const char WANT[] = "response_format=3:srt\n"
                           "language=2:da\n"
                           "temperature=1:0\n"
                           "prompt=0:\n"
                           "stream=4:true\n"
                           "timestamp_granularities[]=4:word\n"
                           "timestamp_granularities[]=7:segment\n"
                           "file;a.wav=19:RIFF\r\n--BOUND\r\n\r\nxy\n"
                           "model=14:hviske-tiny-da\n";

static void check_cuts(const size_t *cuts, int ncuts, const char *what)
{
    char *got = post_chunked(BODY, sizeof BODY - 1, cuts, ncuts);
    CHECK(got && strcmp(got, WANT) == 0, "%s: got\n%s", what, got ? got : "(no reply)");
    free(got);
}

static void test_unsplit(void) { check_cuts(NULL, 0, "one chunk"); }

static void test_every_split(void)
{
    size_t n = sizeof BODY - 1;
    for (size_t k = 1; k < n; k++) {
        char what[64];
        snprintf(what, sizeof what, "cut at %zu", k);
        check_cuts(&k, 1, what);
    }
}

static void test_every_pair_of_splits_near_short_fields(void)
{
    /* two cuts anywhere in the first fields, the short ones */
    size_t span = (size_t)(strstr(BODY, "name=\"file\"") - BODY);
    for (size_t i = 1; i < span; i += 1)
        for (size_t j = i + 1; j < span; j += 7) {
            size_t cuts[2] = {i, j};
            char what[64];
            snprintf(what, sizeof what, "cuts at %zu, %zu", i, j);
            check_cuts(cuts, 2, what);
        }
}

static void test_byte_by_byte(void)
{
    size_t n = sizeof BODY - 1;
    size_t *cuts = malloc((n - 1) * sizeof *cuts);
    for (size_t k = 1; k < n; k++) cuts[k - 1] = k;
    check_cuts(cuts, (int)(n - 1), "one byte per chunk");
    free(cuts);
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL,
                                            NULL, handle, NULL, MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                                            MHD_OPTION_SOCK_ADDR,
                                            (struct sockaddr *)&(struct sockaddr_in){
                                                .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)},
                                            MHD_OPTION_END);
    CHECK(d != NULL, "the daemon starts");
    if (!d) return test_finish();
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    port = di->port;
    RUN(test_unsplit);
    RUN(test_every_split);
    RUN(test_every_pair_of_splits_near_short_fields);
    RUN(test_byte_by_byte);
    MHD_stop_daemon(d);
    return test_finish();
}
