/* Fuzz the server's admission of a request head (tools/audioc-server/
 * admit.c) against the real route table (routes.c): method, URL,
 * Authorization, Content-Length, Transfer-Encoding and Expect, each a line
 * of the input (an empty line: the header is absent), with and without an
 * API key. Checks what the answer promises. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "routes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const request_head *h, const char *key)
{
    server_config cfg = {.api_key = key, .max_upload_mb = 25};
    admission a;
    admit_head(h, &cfg, &a);
    static const int statuses[] = {0, 204, 400, 401, 404, 405, 413, 417};
    int known = 0;
    for (size_t i = 0; i < sizeof statuses / sizeof *statuses; i++) known |= a.status == statuses[i];
    if (!known || memchr(a.message, 0, sizeof a.message) == NULL) abort();
    if (a.status == 0 && !a.route) abort();
    if (a.route && (a.route < server_routes || a.route >= server_routes + n_server_routes)) abort();
    /* a prefix route (GET /v1/models/ID) has an id, an exact one (GET / too) none */
    size_t n = a.route ? strlen(a.route->path) : 0;
    if (a.route && (n > 1 && a.route->path[n - 1] == '/') != (a.id && *a.id)) abort();
    /* admitted to /v1/ with a key required: the key was sent */
    if (key && a.status == 0 && strncmp(h->url, "/v1/", 4) == 0 && (!h->authorization || !strstr(h->authorization, key)))
        abort();
    if (a.status == 0 && a.route->body != BODY_NONE && a.length > (25u << 20) + (64u << 10)) abort();
    if (a.status == 0 && a.route->body == BODY_JSON && a.length > a.route->body_max) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    const char *part[6] = {"", "", NULL, NULL, NULL, NULL};
    char *p = text;
    for (int i = 0; i < 6 && p; i++) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = 0;
        part[i] = *p || i < 2 ? p : NULL;
        p = nl ? nl + 1 : NULL;
    }
    request_head h = {part[0], part[1], part[2], part[3], part[4], part[5]};
    check(&h, NULL);
    check(&h, "s3cret");
    free(text);
    return 0;
}
