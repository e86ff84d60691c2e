/* HTTP to the Hub through libcurl: the endpoint and token from the
 * environment, bounded answers, timeouts, retries with backoff on 5xx and
 * network errors, and one wording for every status the Hub answers. */
#ifndef AC_HUB_HTTP_H
#define AC_HUB_HTTP_H

#include <stdint.h>
#include <stdio.h>

#include "audioc.h"

enum { HUB_ETAG = 160, HUB_URL = 8192 };

typedef struct {
    long status;
    char etag[HUB_ETAG];          /* ETag, without W/ and quotes */
    char linked_etag[HUB_ETAG];   /* X-Linked-Etag: an LFS file's SHA-256 */
    char commit[64];              /* X-Repo-Commit */
    char location[HUB_URL];       /* Location of a redirect */
    char message[256];            /* X-Error-Message */
    int64_t length;               /* Content-Length, -1 unknown */
    int64_t linked_size;          /* X-Linked-Size, -1 unknown */
} hub_reply;

/* $HF_ENDPOINT without a trailing '/', or https://huggingface.co. */
const char *hub_endpoint(char buf[HUB_URL]);

/* The URL-escaped form of S ('/' kept when KEEP_SLASH) appended to OUT. */
ac_status hub_url_append(char out[HUB_URL], const char *s, int keep_slash);

/* GET URL following redirects into *BODY (NUL-terminated, free()), at most
 * MAX bytes. WHAT names the request in messages. *STATUS: the HTTP status
 * of the answer, 0 when none came (the network failed). */
ac_status hub_http_get(const char *url, const char *what, size_t max, char **body, size_t *n, long *status);

/* HEAD URL, redirects not followed (a redirect's headers are the answer). */
ac_status hub_http_head(const char *url, const char *what, hub_reply *rep);

/* GET URL following redirects, appending to F (which holds *HAVE bytes
 * already: asked for with Range) until it holds TOTAL bytes; resumes after
 * a broken connection. Shows progress under LABEL on a terminal. */
ac_status hub_http_download(const char *url, const char *what, FILE *f, int64_t *have, int64_t total,
                            const char *label);

#endif
