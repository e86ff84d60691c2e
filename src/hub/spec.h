/* A model named on the Hub: REPO[@REVISION][/SUBFOLDER or /FILE], REPO being
 * ORG/NAME, checked as the Hub checks names so that no part of it can
 * reach outside the cache or the endpoint's paths. */
#ifndef AC_HUB_SPEC_H
#define AC_HUB_SPEC_H

#include "audioc.h"

enum { HUB_PATH = 4096, HUB_REPO = 128, HUB_REV = 256 };

typedef struct {
    char repo[HUB_REPO];       /* ORG/NAME */
    char revision[HUB_REV];    /* "main" when not given */
    char sub[HUB_PATH];        /* "" or a relative folder or file */
} hub_spec;

/* Parses TEXT (without any "hf:"); AC_ERR_ARG naming TEXT and its fault. */
ac_status hub_spec_parse(const char *text, hub_spec *out);

/* Whether P is a safe relative path of a repository's file: not empty, no
 * leading '/', no "." or ".." part, no empty part, no backslash or control
 * character, at most HUB_PATH-1 bytes. */
int hub_path_ok(const char *p);

/* Whether REV is a commit hash (40 lowercase hex digits). */
int hub_is_commit(const char *rev);

#endif
