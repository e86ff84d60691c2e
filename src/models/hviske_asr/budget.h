/* Memory bounds of Hviske's per-chunk scratch, checked before allocating. */
#ifndef AC_MODELS_HVISKE_BUDGET_H
#define AC_MODELS_HVISKE_BUDGET_H

#include <stdint.h>

#include "models/hviske_asr/model.h"

/* The most scratch one chunk may take: the real model's 35 s chunks need
 * about 0.3 GB; a configuration or a request beyond this is refused. */
#define HVISKE_MAX_CHUNK_BYTES (4.0 * 1024 * 1024 * 1024)

/* Bytes of scratch for one chunk of N samples decoded with BEAMS beams in
 * CAP decoder positions. */
double hviske_chunk_bytes(const hviske_config *c, int64_t n, int beams, int cap);
/* Refuses a chunk beyond pos_emb_max_len or the scratch bound. */
ac_status hviske_check_chunk(const hviske_config *c, int64_t n, int beams, int cap);

#endif
