/* Vevo2's routes (spec vevo2.md §3): what each runs and which reference
 * stands in for one the caller did not give. Upstream has no route names;
 * these and their defaults follow its demo script (spec §9 item 5). */
#ifndef AC_MODELS_VEVO2_ROUTES_H
#define AC_MODELS_VEVO2_ROUTES_H

#include <stdint.h>

#include "audioc.h"

typedef struct vevo2_route {
    const char *name;
    int ar;                 /* path A (AR then FM); else path S (FM on the source's tokens) */
    int use_prosody_code;   /* default */
    int use_pitch_shift;    /* default */
    int source_references;  /* the source stands in for the prosody and the timbre references */
    int source_style;       /* ... and for the style reference (editing) */
    int voice_style;        /* the target voice, when its transcript is given, is the style reference */
} vevo2_route;

/* The route called NAME; NULL (an error listing the routes) when none is. */
const vevo2_route *vevo2_route_find(const char *name);
/* The route names, NULL-terminated. */
const char *const *vevo2_route_names(void);

/* A clip of mono audio at the package's rate; N 0 when absent. */
typedef struct vevo2_clip {
    const float *x;
    int64_t n;
} vevo2_clip;

/* What a request gives: the source (the audio to convert, or the melody),
 * the target voice (the timbre), the style and prosody references. */
typedef struct vevo2_inputs {
    vevo2_clip source, voice, style, prosody;
    const char *text;        /* path A: what to say or sing */
    const char *style_text, *voice_text, *source_text;   /* what the style reference, voice, source say */
} vevo2_inputs;

/* The references route R uses, from IN as spec §3 selects them (prosody
 * only with USE_PROSODY), and the transcript of the audio that serves as
 * the style reference; a missing one the route needs is an error that
 * names it. */
typedef struct vevo2_refs {
    vevo2_clip source, timbre, style, prosody;
    const char *style_text;
} vevo2_refs;

ac_status vevo2_route_refs(const vevo2_route *r, const vevo2_inputs *in, int use_prosody, vevo2_refs *out);

#endif
