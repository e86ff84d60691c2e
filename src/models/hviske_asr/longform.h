/* Hviske ASR over audio of any length: the stream is cut into chunks of at
 * most max_clip_s at the quietest point near the end (spec §5,
 * hviske_split), each transcribed alone, in bounded memory. */
#ifndef AC_MODELS_HVISKE_LONGFORM_H
#define AC_MODELS_HVISKE_LONGFORM_H

#include "audio/reader.h"
#include "models/hviske_asr/transcribe.h"

/* Receives the chunk of samples [FROM, TO); may take C's text and tokens. */
typedef ac_status (*hviske_chunk_fn)(void *user, int64_t from, int64_t to, hviske_chunk_result *c);

/* Transcribes the 16 kHz stream R, only the spans [spans[2i], spans[2i+1])
 * when N_SPANS > 0 (ascending), calling EMIT for each chunk in order. The
 * chunk buffer comes from CALL; STEP is reset for every chunk. *N_READ: the
 * samples read from R. */
ac_status hviske_transcribe_stream(const hviske_model *m, ac_audio_reader *r, const int64_t *spans, size_t n_spans,
                                   const hviske_options *o, ac_arena *call, ac_arena *step, hviske_chunk_fn emit,
                                   void *user, int64_t *n_read);

#endif
