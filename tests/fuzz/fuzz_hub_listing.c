/* Fuzz what audio.c reads from a Hub: the file list's JSON (every name it
 * accepts must be a plain relative path), and model names as given to
 * "hf:" and audioc pull. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hub/listing.h"
#include "hub/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether P could reach outside the folder it is joined to. */
static int escapes(const char *p)
{
    if (p[0] == '/') return 1;
    for (const char *s = p;;) {
        size_t l = strcspn(s, "/");
        if ((l == 1 && s[0] == '.') || (l == 2 && s[0] == '.' && s[1] == '.')) return 1;
        if (!s[l]) return 0;
        s += l + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hub_listing l;
    if (hub_listing_parse((const char *)data, size, "fuzz", &l) == AC_OK) {
        for (size_t i = 0; i < l.n; i++)
            if (!hub_path_ok(l.files[i]) || escapes(l.files[i])) abort();
        if (!hub_is_commit(l.commit)) abort();
        hub_listing_free(&l);
    }
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    hub_spec s;
    if (hub_spec_parse(text, &s) == AC_OK) {
        if (escapes(s.repo) || strstr(s.repo, "..") || strchr(s.revision, '/') || escapes(s.revision) ||
            (s.sub[0] && escapes(s.sub)))
            abort();
    }
    free(text);
    return 0;
}
