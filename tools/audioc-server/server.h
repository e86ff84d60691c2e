/* audioc-server's core, which knows no endpoint by name: the configuration
 * (parsed in main.c), byte buffers, the multipart reader (form.c), form-field
 * values (fields.c), replies (reply.c), the work queue (queue.c), the
 * connection guard (guard.c) and the HTTP front (http.c). The endpoints
 * and the table that routes to them are in routes.h. */
#ifndef AUDIOC_SERVER_H
#define AUDIOC_SERVER_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

#include "audioc.h"

/* ---- the configuration ------------------------------------------------ */

typedef struct {
    char id[64];
    const char *path;
    ac_task task;
    const char *family;
    ac_model *model;   /* shared by all requests and workers */
    ac_weight_type weights;   /* its matrices' type (--model-weights, else --weights) */
    int weights_given;        /* by --model-weights */
} served_model;

typedef struct {
    const char *host;
    int port;
    int threads, workers, quick_workers, max_queue;
    long max_upload_mb;
    const char *api_key, *cors;
    int quiet;
    int no_vad;             /* transcriptions use no VAD unless a request says vad=true */
    int no_webui;           /* GET / and /web/ answer 404 (--no-webui) */
    int max_connections, max_per_client;   /* open connections in all, and from one address */
    double header_timeout;                 /* seconds for a request head (and the body's grace) */
    double min_upload_rate;                /* bytes per second a body must average after that */
    double shutdown_timeout;               /* seconds a graceful stop waits for requests in progress */
    long max_buffer_mb;                    /* upload bytes held in memory at once, all requests together */
    double max_speech_seconds;             /* the most audio one voice request may make (0: no limit) */
    double request_timeout;                /* seconds of work one request may take (0: no limit) */
    int lenient_voices;                    /* a --voice that cannot work is left out with a warning */
    served_model *models;
    int n_models;
    ac_weight_type weights;                /* --weights: the type of every model's matrices */
    const char **model_weights;            /* the --model-weights ID=TYPE given, applied once all models are known */
    int n_model_weights;
    struct served_voice *voices;           /* the --voice references (the voice module's, speech.h) */
    int n_voices;
} server_config;

/* The model called ID for TASK, or the first of that task when ID is NULL. */
const served_model *find_model(const server_config *cfg, const char *id, ac_task task);

/* ---- a growable byte buffer ------------------------------------------ */

typedef struct {
    char *data;
    size_t len, cap;
} buffer;

int buffer_add(buffer *b, const void *p, size_t n);   /* 0, or -1 out of memory */
int buffer_reserve(buffer *b, size_t cap);            /* room for CAP bytes in all */
void buffer_free(buffer *b);

/* ---- multipart/form-data fields ---------------------------------------- */

typedef struct {
    char name[64];
    char filename[256];
    buffer value;
    int is_file;
} form_field;

typedef struct form form;
/* NULL when the content type is not multipart/form-data with a boundary.
 * EXPECT_BYTES: the body's length when known (0: not), to size a file field once. */
form *form_new(void *connection, size_t max_bytes, size_t expect_bytes);
/* Feeds body bytes; -1 when they are not valid multipart or too large. */
int form_feed(form *f, const char *data, size_t n);
/* Ends the body; -1 when it was incomplete. */
int form_finish(form *f);
/* 0, or why the body was refused: over the byte budget, or a text field
 * (named in *FIELD) over FORM_MAX_TEXT_FIELD bytes. */
enum { FORM_BODY_TOO_LARGE = 1, FORM_FIELD_TOO_LARGE = 2 };
#define FORM_MAX_TEXT_FIELD (64u << 10) /* non-file fields are short */
int form_too_large(const form *f, const char **field);
/* The first field called NAME, or NULL. */
const form_field *form_get(const form *f, const char *name);
/* Fields in body order (repeated names, as `timestamp_granularities[]`, each once). */
int form_count(const form *f);
/* The bytes of field values read in all. */
size_t form_bytes(const form *f);
const form_field *form_at(const form *f, int i);
void form_free(form *f);

/* ---- text field values (fields.c) ----------------------------------------- */

/* true/1/yes or false/0/no/empty (any case): 0, or -1 for anything else. */
int field_bool(const char *v, int *out);
/* A number in [LO, HI] (an integer when INTEGER; trailing spaces allowed): 0 or -1. */
int field_number(const char *v, double lo, double hi, int integer, double *out);
/* The index of V among the N NAMES, or -1. */
int field_choice(const char *v, const char *const *names, int n);
/* The offset of the first control character among the N bytes of V (NUL,
 * DEL and C0 but tab, line feed and carriage return), or -1: no text field
 * of any endpoint takes one (a NUL would cut the value short). */
int field_control(const char *v, size_t n);
/* The one answer of every endpoint to a field it does not take, and to a
 * text field holding a control character (at offset AT of V). */
#define FIELD_UNKNOWN "unknown field '%.64s': this endpoint does not take it (see the API reference)"
#define FIELD_CONTROL "the field '%.64s' holds a control character: text fields take printable text, tabs and line breaks only"
struct reply;
void field_unknown(struct reply *r, const char *name);
void field_has_control(struct reply *r, const char *name, const char *v, int at);

/* ---- responses (reply.c) ---------------------------------------------- */

typedef struct reply {
    int status;
    const char *content_type;
    buffer body;
    const char *const *headers;   /* more headers: name, value pairs ending in NULL (not freed), or NULL */
} reply;

/* A reply body written with stdio: body_open (NULL after a 500 into R),
 * then body_close makes it R's body with STATUS and TYPE. */
typedef struct {
    FILE *f;
    char *mem;
    size_t len;
} reply_body;
FILE *body_open(reply_body *b, reply *r);
void body_close(reply_body *b, reply *r, int status, const char *type);

/* An OpenAI-shaped error: {"error": {"message", "type", "param", "code"}}. */
void reply_error(reply *r, int status, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- jobs: the work of a request --------------------------------------- */

/* What a request hands its endpoint: the configuration, and what it sent. */
typedef struct {
    const server_config *cfg;
    const char *id;            /* what follows a prefix route's path (GET /v1/models/ID), else "" */
    const form *form;          /* the fields of a multipart body, else NULL */
    const buffer *json;        /* a JSON body as received, else NULL */
    const char *if_none_match; /* the If-None-Match header, or NULL */
    const char *accept_encoding;   /* the Accept-Encoding header, or NULL */
} request_ctx;

/* A request's work: answered at once on the connection's thread, or queued
 * for a bounded pool of workers. */
typedef struct job job;
struct job {
    void (*run)(job *j);       /* runs on a worker: the route's respond */
    const request_ctx *req;    /* the request it answers (lives as long as the job) */
    void *ctx;                 /* the endpoint's state, from malloc: freed with the request */
    int state;                 /* JOB_QUEUED, JOB_RUNNING, JOB_DONE (under the queue lock) */
    atomic_int cancelled;      /* JOB_CLIENT_GONE, JOB_STOPPED or JOB_DEADLINE: stop at the next chance */
    double deadline;           /* when its work must stop (ac_now seconds; 0: never), set as it starts */
    reply result;
    /* server-sent events, appended by the worker while it runs */
    buffer events;
    int stream;                /* answer with the events (set when prepared) */
    int quick;                 /* short work: a quick worker may take it (set before it is queued) */
};
enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE };
enum { JOB_CLIENT_GONE = 1, JOB_STOPPED = 2, JOB_DEADLINE = 3 };   /* why a job was cancelled */

/* Starts WORKERS workers for any job and QUICK_WORKERS for quick jobs
 * only; each first runs WARM_UP(ARG) (WARM_UP may be NULL), and this
 * returns when all have. A job's work may take TIMEOUT seconds (0: no
 * limit) from when it starts. */
int queue_start(int workers, int quick_workers, int threads_per_worker, int max_queue, double timeout,
                void (*warm_up)(void *arg), void *arg);
/* Why J's work must stop (a JOB_ reason), or 0 to go on: the endpoints'
 * progress callbacks ask this between steps. Past its deadline it is
 * cancelled with JOB_DEADLINE. */
int job_stopped(job *j);
/* What a stopped job's client is told (into OUT, N bytes): why it was stopped (REASON a JOB_ reason). */
void job_stop_message(int reason, char *out, size_t n);
/* Seconds a client refused with 503 should wait before it tries again:
 * about the time the queue ahead needs, from the work done so far. */
int queue_retry_after(void);
/* 0, or -1 when the queue is full. */
int queue_submit(job *j);
/* Whether a job submitted now would be refused (a hint: others may come first). */
int queue_full(void);
/* Waits until J's state is at least WANT (or, with EVENTS, until it has
 * events: *EVENTS says whether it has), or the timeout (seconds) passes;
 * returns the state. */
int queue_wait(job *j, int want, int *events, double timeout);
/* Appends to J's event stream and wakes its reader. */
void queue_push_event(job *j, const char *data, size_t n);
/* The event data: {"type": TYPE, KEY: TEXT} (TEXT as a JSON string; reply.c). */
void push_text_event(job *j, const char *type, const char *key, const char *text);
/* A stream's last event when its job was stopped (shutdown, deadline): an
 * error saying why, so that the client sees it did not end. */
void push_stop_event(job *j);
/* Copies up to MAX bytes of events from offset POS, waiting up to TIMEOUT
 * seconds for some; returns the count, 0 on timeout, -1 at the end. */
long queue_read_events(job *j, size_t pos, char *out, size_t max, double timeout);
/* Marks J finished (called by the worker, and for jobs that never ran). */
void queue_finish(job *j);
/* Asks the jobs running now to stop at their next chance: how many there were. */
int queue_cancel_running(void);
void queue_stop(void);

/* ---- the connection guard (guard.c) -------------------------------------- */

/* What a connection is doing: waiting for a request head (connected, or
 * kept alive after an answer), receiving a body, or being answered. */
enum { CONN_HEAD, CONN_BODY, CONN_WORK };
/* libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION callback; CLS is the server_config. */
void guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                  enum MHD_ConnectionNotificationCode code);
void guard_phase(struct MHD_Connection *c, int phase);
long guard_dropped(void);                               /* connections dropped so far */
/* Starts the watchdog that holds connections to CFG's deadlines. */
int guard_start(const server_config *cfg);
void guard_stop(void);

/* ---- the HTTP daemon ---------------------------------------------------- */

/* Serves CFG's host and port (the port bound in *BOUND_PORT): 0, -1 for a
 * bad host address, -2 when the daemon cannot start. */
int http_start(const server_config *cfg, int *bound_port);
/* Stops accepting: the listening socket is closed, so new clients are
 * refused at once; requests in progress go on. */
void http_quiesce(void);
/* Requests begun and not yet answered. */
int http_in_flight(void);
/* Closes every connection and stops. */
void http_stop(void);

#endif
