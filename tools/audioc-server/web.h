/* The web page audioc-server serves at GET / (web.c): the files of
 * tools/audioc-server/web/, compiled into the binary at build time
 * (cmake/embed_files.cmake writes the table web_assets.c). */
#ifndef AUDIOC_SERVER_WEB_H
#define AUDIOC_SERVER_WEB_H

#include <stddef.h>

#include "server.h"

typedef struct {
    const char *name;            /* the path under web/, as "app.js" */
    const unsigned char *data;
    size_t size;
    const char *etag;            /* a quoted hash of the bytes */
} web_asset;

extern const web_asset web_assets[];
extern const int n_web_assets;

/* GET /: the page (index.html). GET /web/NAME: the file NAME under web/.
 * Both 404 under --no-webui, and 304 when If-None-Match has the ETag. */
void endpoint_page(job *j);
void endpoint_asset(job *j);

#endif
