/* Fuzz hviske_config_parse: config.json, then (after a NUL byte, when there
 * is one) generation_config.json. A config it accepts must keep its full
 * chunk within the scratch bound, and the per-chunk check must hold for
 * any length. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "models/hviske_asr/budget.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ac_set_log_level(0);   /* unknown-key warnings */
    const char *text = (const char *)data, *nul = memchr(data, 0, size);
    size_t len = nul ? (size_t)(nul - text) : size;
    const char *gen = nul ? nul + 1 : NULL;
    size_t gen_len = nul ? size - len - 1 : 0;
    hviske_config cfg;
    if (hviske_config_parse(text, len, gen, gen_len, "fuzz", &cfg) != AC_OK) return 0;
    int64_t chunk = (int64_t)(cfg.max_clip_s * cfg.sample_rate + 0.5);
    if (hviske_chunk_bytes(&cfg, chunk, 1, 1) > HVISKE_MAX_CHUNK_BYTES) abort();
    int64_t lengths[] = {0, 1, cfg.hop, chunk / 2, chunk};
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++)
        (void)hviske_check_chunk(&cfg, lengths[i], 4, cfg.max_seq);
    return 0;
}
