/* Fuzz what audio.c reads from a Hub: the file list's JSON (every name it
 * accepts must be a plain relative path), and model names as given to
 * "hf:" and audioc pull. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hub/listing.h"
#include "hub/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hub_listing l;
    if (hub_listing_parse((const char *)data, size, "fuzz", &l) == AC_OK) {
        for (size_t i = 0; i < l.n; i++)
            if (!hub_path_ok(l.files[i]) || strstr(l.files[i], "..") == l.files[i]) abort();
        if (!hub_is_commit(l.commit)) abort();
        hub_listing_free(&l);
    }
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    hub_spec s;
    if (hub_spec_parse(text, &s) == AC_OK) {
        if (strstr(s.repo, "..") || strchr(s.revision, '/') || (s.sub[0] && !hub_path_ok(s.sub))) abort();
    }
    free(text);
    return 0;
}
