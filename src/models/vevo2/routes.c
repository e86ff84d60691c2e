/* The route table and the reference fallbacks of spec vevo2.md §3. */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "models/vevo2/routes.h"

/* name, ar, prosody, pitch, source-refs, source-style, voice-style: one
 * list for the table and its names (constant data, which any thread may
 * read: names filled in on first use raced between two requests) */
#define ROUTE_LIST(X)                                  \
    X(zero_shot_tts,            1, 0, 0, 0, 0, 1)      \
    X(text_to_singing,          1, 0, 0, 0, 0, 1)      \
    X(svs,                      1, 0, 0, 0, 0, 1)      \
    X(style_preserved_vc,       0, 0, 1, 0, 0, 0)      \
    X(style_preserved_svc,      0, 0, 1, 0, 0, 0)      \
    X(style_converted_vc,       1, 1, 0, 1, 0, 0)      \
    X(style_converted_svc,      1, 1, 1, 1, 0, 0)      \
    X(editing,                  1, 1, 0, 1, 1, 0)      \
    X(singing_style_conversion, 1, 1, 1, 1, 0, 0)      \
    X(humming_to_singing,       1, 1, 1, 0, 0, 0)      \
    X(instrument_to_singing,    1, 1, 1, 0, 0, 0)
#define ROUTE_ROW(name, ...) {#name, __VA_ARGS__},
#define ROUTE_NAME(name, ...) #name,

static const vevo2_route ROUTES[] = {ROUTE_LIST(ROUTE_ROW)};
static const char *const NAMES[] = {ROUTE_LIST(ROUTE_NAME) NULL};
#define N_ROUTES (sizeof ROUTES / sizeof *ROUTES)

const char *const *vevo2_route_names(void) { return NAMES; }

const vevo2_route *vevo2_route_find(const char *name)
{
    char list[512] = "";
    for (size_t i = 0; i < N_ROUTES; i++) {
        if (strcmp(ROUTES[i].name, name) == 0) return &ROUTES[i];
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", ROUTES[i].name);
    }
    ac_error(AC_ERR_ARG, "unknown route \"%s\" (the routes: %s)", name, list);
    return NULL;
}

static const vevo2_clip *first(const vevo2_clip *a, const vevo2_clip *b)
{
    return a->n ? a : b;
}

ac_status vevo2_route_refs(const vevo2_route *r, const vevo2_inputs *in, int use_prosody, vevo2_refs *out)
{
    memset(out, 0, sizeof *out);
    static const vevo2_clip none;
    if (!r->ar) {
        if (!in->source.n) return ac_error(AC_ERR_ARG, "route %s: no source audio to convert", r->name);
        if (!in->voice.n) return ac_error(AC_ERR_ARG, "route %s: no target voice given", r->name);
        out->source = in->source;
        out->timbre = in->voice;
        return AC_OK;
    }
    /* the prosody: the given reference, else the source (the melody or the speech whose delivery is kept) */
    if (r->source_style && !in->source.n) return ac_error(AC_ERR_ARG, "route %s: no source audio to edit", r->name);
    const vevo2_clip *prosody = first(&in->prosody, &in->source);
    if (use_prosody && !prosody->n)
        return ac_error(AC_ERR_ARG, "route %s: the prosody code needs a prosody reference (or a source)", r->name);
    const vevo2_clip *ref = use_prosody ? prosody : &none;
    /* the style: the given reference, else the prosody's audio (editing), else the target voice when its
     * transcript is known (speech from text: the AR continues the voice's own tokens after its words) */
    const int voice_known = in->voice_text && *in->voice_text;
    const vevo2_clip *style = in->style.n          ? &in->style
                              : r->source_style    ? prosody
                              : r->voice_style && voice_known ? &in->voice
                                                   : &none;
    /* the timbre: the target voice, else the audio the route reads the rest from */
    const vevo2_clip *timbre = in->voice.n ? &in->voice : r->source_references ? prosody : &in->source;
    if (!timbre->n) return ac_error(AC_ERR_ARG, "route %s: no target voice given", r->name);
    out->source = in->source;
    out->timbre = *timbre;
    out->style = *style;
    out->prosody = *ref;
    out->style_text = style == &in->style ? in->style_text : style == &in->voice ? in->voice_text
                    : style->n ? in->source_text : NULL;
    return AC_OK;
}
