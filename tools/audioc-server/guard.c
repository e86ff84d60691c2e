/* The connection guard: every connection is watched from accept to close,
 * so slow or idle clients cannot hold the server. A connection must send a
 * whole request head within --header-timeout seconds (of connecting, or of
 * its previous answer when kept alive), and a body at --min-upload-rate on
 * average after that grace. When all --max-connections are taken, a new
 * client takes the place of the slowest sender (see make_room). Dropping is a shutdown() of our own duplicate of the socket:
 * libmicrohttpd's thread for it sees the end and closes it as usual, and the
 * duplicate keeps the socket from being reused under us meanwhile.
 *
 * The duplicate also gives a lingering close: a client whose upload was
 * refused from its head (401, 404, 413, ...) is still sending when the
 * connection ends, and closing a socket with unread bytes resets it, which
 * can destroy the answer before the client reads it. So a connection that
 * was not dropped is half-closed (our FIN after the answer) and its
 * incoming bytes are read and thrown away until the client closes too: for
 * at most LINGER_S seconds, and while bytes keep coming (LINGER_IDLE_S). */
#include <errno.h>
#include <linux/tcp.h>   /* struct tcp_info with tcpi_bytes_received */
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"

typedef struct watched watched;
struct watched {
    watched *prev, *next;
    int fd;              /* our duplicate of the connection's socket */
    int phase;           /* CONN_HEAD, CONN_BODY, CONN_WORK */
    double since;        /* when the phase began */
    unsigned long long bytes_at_phase;   /* the TCP byte count when the phase began */
    int dropped;
};

#define LINGER_S 30.0
#define LINGER_IDLE_S 2.0
#define MAX_LINGER 256   /* more closing at once are closed at once */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static watched *head;
static int count, stopping, started;
static struct {
    int fd;
    double until, idle_until;
} linger[MAX_LINGER];
static int n_linger;   /* added under the lock; removed only by the watchdog */
static pthread_t watchdog;
static atomic_long dropped_total;

static void drop(watched *w)
{
    if (w->dropped) return;
    w->dropped = 1;
    shutdown(w->fd, SHUT_RDWR);
    atomic_fetch_add(&dropped_total, 1);
}

/* Bytes the peer has sent on FD so far, from the kernel's TCP counters
 * (libmicrohttpd reads the request head before we see anything of it). */
static unsigned long long bytes_received(int fd)
{
    struct tcp_info ti;
    socklen_t n = sizeof ti;
    memset(&ti, 0, sizeof ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &n) != 0) return 0;
    return ti.tcpi_bytes_received;
}

/* Whether W has outstayed its phase at time NOW under CFG's deadlines. */
static int overdue(const watched *w, double now, const server_config *cfg)
{
    double t = now - w->since, grace = cfg->header_timeout;
    if (w->phase == CONN_HEAD) return t > grace;
    if (w->phase == CONN_BODY)
        return t > grace && (double)(bytes_received(w->fd) - w->bytes_at_phase) < cfg->min_upload_rate * (t - grace);
    return 0;
}

/* Reads and drops what a lingering socket has; whether it is finished
 * (the client closed, or an error). */
static int drain(int fd)
{
    char buf[16384];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) continue;
        return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
    }
}

/* Every 0.2 s: drops the connections that outstayed their phase; in
 * between, drains the lingering sockets. ARG: the server_config. */
static void *watch(void *arg)
{
    const server_config *cfg = arg;
    struct pollfd p[MAX_LINGER];
    double next_check = 0;
    for (;;) {
        pthread_mutex_lock(&lock);
        if (stopping) {
            for (int i = 0; i < n_linger; i++) close(linger[i].fd);
            n_linger = 0;
            pthread_mutex_unlock(&lock);
            return NULL;
        }
        double now = ac_now();
        if (now >= next_check) {
            for (watched *w = head; w; w = w->next)
                if (!w->dropped && overdue(w, now, cfg)) drop(w);
            next_check = now + 0.2;
        }
        nfds_t n = (nfds_t)n_linger;
        for (nfds_t i = 0; i < n; i++) p[i] = (struct pollfd){.fd = linger[i].fd, .events = POLLIN | POLLRDHUP};
        pthread_mutex_unlock(&lock);
        if (n) poll(p, n, 50);
        else usleep(50 * 1000);
        now = ac_now();
        pthread_mutex_lock(&lock);
        for (nfds_t i = n; i-- > 0;) {   /* from the end: later entries stay in place */
            int done = (p[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) || now > linger[i].until ||
                       now > linger[i].idle_until;
            if (p[i].revents & POLLIN) {
                done |= drain(p[i].fd);
                linger[i].idle_until = now + LINGER_IDLE_S;
            }
            if (!done) continue;
            close(linger[i].fd);
            linger[i] = linger[--n_linger];
        }
        pthread_mutex_unlock(&lock);
    }
}

/* A new connection over the limit: the slowest sender makes room (the
 * oldest of equals), else the newcomer, which has had no time to send yet.
 * A sender's speed is the bytes it sent in its phase over the time it has
 * been in it (at least RATE_FLOOR_S, so a client that has just sent its
 * whole head is fast): idle and trickling connections go first, a client
 * whose request is already here goes last. Uploads are candidates only
 * after their first second and below the minimum rate; connections being
 * answered never are. */
#define RATE_FLOOR_S 0.05

static void make_room(watched *newcomer, double now, const server_config *cfg)
{
    watched *slowest = NULL;
    double slowest_rate = 0;
    for (watched *w = head; w; w = w->next) {
        if (w == newcomer || w->dropped || w->phase == CONN_WORK) continue;
        double t = now - w->since;
        double rate = (double)(bytes_received(w->fd) - w->bytes_at_phase) / (t > RATE_FLOOR_S ? t : RATE_FLOOR_S);
        if (w->phase == CONN_BODY && (t < 1.0 || rate >= cfg->min_upload_rate)) continue;
        if (!slowest || rate < slowest_rate || (rate == slowest_rate && w->since < slowest->since)) {
            slowest = w;
            slowest_rate = rate;
        }
    }
    drop(slowest ? slowest : newcomer);
}

void guard_notify(void *cls, struct MHD_Connection *c, void **socket_context, enum MHD_ConnectionNotificationCode code)
{
    const server_config *cfg = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        watched *w = calloc(1, sizeof *w);
        if (!w || !ci || (w->fd = dup(ci->connect_fd)) < 0) {   /* cannot watch it: do not keep it */
            if (ci) shutdown(ci->connect_fd, SHUT_RDWR);
            free(w);
            *socket_context = NULL;
            return;
        }
        w->phase = CONN_HEAD;
        w->since = ac_now();
        pthread_mutex_lock(&lock);
        w->next = head;
        if (head) head->prev = w;
        head = w;
        if (++count > cfg->max_connections) make_room(w, w->since, cfg);
        pthread_mutex_unlock(&lock);
        *socket_context = w;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        watched *w = *socket_context;
        if (!w) return;
        pthread_mutex_lock(&lock);
        if (w->prev) w->prev->next = w->next;
        else head = w->next;
        if (w->next) w->next->prev = w->prev;
        count--;
        int lingers = !w->dropped && n_linger < MAX_LINGER;
        if (lingers) {
            shutdown(w->fd, SHUT_WR);
            linger[n_linger].fd = w->fd;
            linger[n_linger].idle_until = ac_now() + LINGER_IDLE_S;
            linger[n_linger++].until = ac_now() + LINGER_S;
        }
        pthread_mutex_unlock(&lock);
        if (!lingers) close(w->fd);
        free(w);
        *socket_context = NULL;
    }
}

static watched *watched_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

void guard_phase(struct MHD_Connection *c, int phase)
{
    watched *w = watched_of(c);
    if (!w) return;
    pthread_mutex_lock(&lock);
    w->phase = phase;
    w->since = ac_now();
    w->bytes_at_phase = bytes_received(w->fd);
    pthread_mutex_unlock(&lock);
}

long guard_dropped(void) { return atomic_load(&dropped_total); }

int guard_start(const server_config *cfg)
{
    stopping = 0;
    if (pthread_create(&watchdog, NULL, watch, (void *)cfg)) return -1;
    started = 1;
    return 0;
}

void guard_stop(void)
{
    if (!started) return;
    pthread_mutex_lock(&lock);
    stopping = 1;
    pthread_mutex_unlock(&lock);
    pthread_join(watchdog, NULL);
    started = 0;
}
