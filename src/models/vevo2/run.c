/* A Vevo2 request: the route's defaults, its references, and the path it
 * runs. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "models/vevo2/vevo2.h"

/* Words per text chunk: a chunk of this many is about 20 s of speech, well
 * inside the 500 tokens (40 s) the AR model makes at most. */
#define CHUNK_UNITS 60

vevo2_options vevo2_defaults(const vevo2_route *r)
{
    vevo2_options o = {.route = r, .use_prosody_code = -1, .use_pitch_shift = -1, .pitch_mode = VEVO2_PITCH_ESTIMATE,
                       .sampler = ac_sampler_defaults(), .max_new_tokens = 500, .chunk_units = CHUNK_UNITS,
                       .steps = 32, .speed = 1.0};
    /* what upstream passes to generate; the penalty is the package's (< 0 here) */
    o.sampler.temperature = 1.0f;
    o.sampler.top_k = 25;
    o.sampler.top_p = 0.8f;
    o.sampler.min_new_tokens = 15;
    o.sampler.repetition_penalty = -1;
    return o;
}

ac_status vevo2_run(vevo2_model *m, const vevo2_inputs *in, const vevo2_options *o, vevo2_output *out)
{
    memset(out, 0, sizeof *out);
    const vevo2_route *r = o->route;
    if (!r) return ac_error(AC_ERR_ARG, "no route given");
    if (o->steps < 1) return ac_error(AC_ERR_ARG, "steps %d: the flow matching needs at least one", o->steps);
    const int use_prosody = r->ar && (o->use_prosody_code < 0 ? r->use_prosody_code : o->use_prosody_code);
    const int use_pitch = o->use_pitch_shift < 0 ? r->use_pitch_shift : o->use_pitch_shift;
    if (o->target_duration < 0 || o->reference_duration < 0)
        return ac_error(AC_ERR_ARG, "a duration cannot be negative");
    if (o->target_duration > 0 && !use_prosody)
        return ac_error(AC_ERR_ARG, "route %s: a target duration stretches the prosody code, which is off", r->name);
    const double source_s = (double)in->source.n / m->mel.sample_rate / o->speed;
    if (!r->ar && o->max_seconds > 0 && source_s > o->max_seconds)
        return ac_error(AC_ERR_ARG, "the source would make %.0f s of audio, more than the limit of %.0f s", source_s,
                        o->max_seconds);
    vevo2_refs refs;
    AC_TRY(vevo2_route_refs(r, in, use_prosody, &refs));
    /* upstream trims the timbre clip before anything reads it */
    if (o->reference_duration > 0) {
        int64_t keep = (int64_t)(o->reference_duration * m->mel.sample_rate);
        if (keep < refs.timbre.n) refs.timbre.n = keep;
    }
    ac_status s = r->ar ? vevo2_speak(m, &refs, in->text, o, use_prosody, use_pitch, out)
                        : vevo2_convert(m, &refs, o, use_pitch, out);
    if (s) {   /* no audio with an error, whichever stage failed */
        free(out->wav);
        out->wav = NULL;
        out->n = 0;
    }
    return s;
}
