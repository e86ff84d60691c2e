/* The Hugging Face hub cache on disk, laid out as huggingface_hub lays it:
 *
 *   ROOT/models--ORG--NAME/blobs/ETAG            a file's bytes, named by its
 *                                                 ETag (an LFS file's SHA-256)
 *   ROOT/models--ORG--NAME/blobs/ETAG.incomplete  a download under way
 *   ROOT/models--ORG--NAME/snapshots/COMMIT/PATH  a relative link to the blob
 *   ROOT/models--ORG--NAME/refs/REVISION          the commit REVISION named
 *   ROOT/.locks/models--ORG--NAME/ETAG.lock        held while ETAG is written
 *
 * ROOT is $HF_HUB_CACHE, else $HF_HOME/hub, else
 * $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub. */
#ifndef AC_HUB_CACHE_H
#define AC_HUB_CACHE_H

#include "hub/spec.h"

typedef struct {
    char root[HUB_PATH];
    char folder[HUB_REPO + 16];  /* models--ORG--NAME */
    char dir[HUB_PATH];          /* ROOT/FOLDER */
    char repo[HUB_REPO];
} hub_repo;

ac_status hub_cache_open(const char *repo, hub_repo *r);

/* The commit REV names in the cache: REV itself when it is a commit hash
 * with a snapshot, else what refs/REV holds; AC_ERR_IO when unknown. */
ac_status hub_cache_commit(const hub_repo *r, const char *rev, char commit[41]);
ac_status hub_cache_write_ref(const hub_repo *r, const char *rev, const char *commit);

/* OUT = snapshots/COMMIT[/FILE] (FILE may be NULL or ""). */
ac_status hub_cache_snapshot(const hub_repo *r, const char *commit, const char *file, char out[HUB_PATH]);
/* OUT = blobs/ETAG SUFFIX, its folder made. */
ac_status hub_cache_blob(const hub_repo *r, const char *etag, const char *suffix, char out[HUB_PATH]);
/* Links snapshots/COMMIT/FILE to blobs/ETAG (replacing what was there). */
ac_status hub_cache_link(const hub_repo *r, const char *commit, const char *file, const char *etag);

/* Takes the lock of ETAG's blob (waits for another process holding it);
 * *FD to hand to hub_cache_unlock. */
ac_status hub_cache_lock(const hub_repo *r, const char *etag, int *fd);
void hub_cache_unlock(int fd);

/* Makes every folder of PATH up to its last '/'. */
ac_status hub_mkdirs(const char *path);

#endif
