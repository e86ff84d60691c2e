/* A repository's file list at one commit, from the Hub's answer to
 * GET /api/models/REPO/revision/REV ({"sha": ..., "siblings": [{"rfilename":
 * ...}, ...]}), or from a snapshot folder of the cache. Untrusted: every
 * name is checked to be a plain relative path. */
#ifndef AC_HUB_LISTING_H
#define AC_HUB_LISTING_H

#include <stddef.h>

#include "audioc.h"

enum { HUB_MAX_FILES = 100000, HUB_MAX_LISTING = 32 << 20 };

typedef struct {
    char commit[41];
    char **files;
    size_t n;
} hub_listing;

/* Parses N bytes of JSON; AC_ERR_FORMAT naming WHAT and the fault. */
ac_status hub_listing_parse(const char *json, size_t n, const char *what, hub_listing *out);
/* The regular files under DIR (links followed), as relative paths. */
ac_status hub_listing_scan(const char *dir, hub_listing *out);
int hub_listing_has(const hub_listing *l, const char *file);
void hub_listing_free(hub_listing *l);

#endif
