/* audioc-server's route table: a row per endpoint, saying how its request
 * is admitted, read and answered. The core (http.c, admit.c) looks a
 * request up here and follows the row's fields; the endpoints behind the
 * rows (endpoints.c, speech.c) are named only in routes.c. */
#ifndef AUDIOC_SERVER_ROUTES_H
#define AUDIOC_SERVER_ROUTES_H

#include "server.h"

typedef enum { BODY_NONE, BODY_JSON, BODY_FORM } body_kind;
/* Where the answer is made: at once on the connection's thread, or by a
 * queue worker (refused with 503 before the body when the queue is full). */
typedef enum { LANE_NOW, LANE_QUEUE } lane;

#define BODY_MAX_UPLOAD 0                /* a body limit of --max-upload-mb */
#define FORM_FRAMING_MAX (64u << 10)     /* a multipart body's boundaries and part headers */

typedef struct {
    const char *method;        /* GET (which also answers HEAD) or POST */
    const char *path;          /* ending in '/' (but "/"): a prefix, and the rest of the URL is the request's id */
    body_kind body;
    size_t body_max;           /* bytes of JSON, or of form fields; BODY_MAX_UPLOAD */
    int needs_key;             /* refused with 401 without the API key, when one is set */
    lane lane;
    /* LANE_QUEUE: a request whose body is at most this many bytes is quick
     * work (a quick worker may take it: it never waits behind long jobs); 0: never */
    size_t quick_body;
    /* Whether a form field called NAME is one the endpoint takes (NULL: no form);
     * the core refuses any other with 400 naming it. */
    int (*field_known)(const char *name);
    /* Checks the request (J->req) and readies J: 0, or -1 with the refusal in R. NULL: nothing to check. */
    int (*prepare)(job *j, reply *r);
    /* Answers into J->result (and J's events when J->stream). */
    void (*respond)(job *j);
} route;

extern const route server_routes[];
extern const int n_server_routes;

/* The route's body limit in bytes under CFG. */
size_t route_body_max(const route *r, const server_config *cfg);

/* ---- admission of a request head (admit.c) -------------------------------- */

/* The head as received; a header is NULL when absent. */
typedef struct {
    const char *method, *url;
    const char *authorization, *content_length, *transfer_encoding, *expect;
} request_head;

typedef struct {
    const route *route;      /* NULL: no such endpoint */
    const char *id;          /* what follows a prefix route's path, else "" */
    int status;              /* 0: go on; 204: a CORS preflight; else refused with MESSAGE */
    const char *param;       /* the field an error is about, or NULL */
    char message[320];
    unsigned long long length;   /* Content-Length (0 when absent or bad) */
    int has_body;            /* a body follows (an early answer closes the connection) */
} admission;

/* The decision on H under CFG (its API key and upload limit); the busy
 * checks (queue, upload budget) are the caller's. */
void admit_head(const request_head *h, const server_config *cfg, admission *a);

#endif
