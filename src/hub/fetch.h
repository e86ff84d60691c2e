/* Files of a repository at a commit into the cache, and the listing that
 * names them; the network is used only when not offline. */
#ifndef AC_HUB_FETCH_H
#define AC_HUB_FETCH_H

#include "hub/cache.h"
#include "hub/listing.h"

/* Offline: $HF_HUB_OFFLINE is 1/true/yes/on, or hub_set_offline(1) (which
 * returns the setting it replaces). */
int hub_set_offline(int offline);
int hub_offline(void);

/* The file list of SPEC's repository at its revision into *L, and the
 * commit in L->commit: from the Hub (recording refs/REVISION), or offline
 * (or when the Hub does not answer at all) from the cache's snapshot of
 * that revision. */
ac_status hub_list(const hub_spec *spec, const hub_repo *r, hub_listing *l);

/* FILE of R at COMMIT into the cache (nothing to do when the snapshot has
 * it): downloaded into blobs/ETAG.incomplete under the blob's lock,
 * resumed from what an earlier try left, its size and (an LFS file) its
 * SHA-256 checked, then renamed to blobs/ETAG and linked from the snapshot.
 * A bad download is deleted and named. Offline, a missing file is an error
 * that names it. */
ac_status hub_fetch(const hub_repo *r, const char *commit, const char *file);

#endif
