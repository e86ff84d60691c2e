/* Fuzz MarbleNet's sidecar config (marblenet_vad_config.json): its
 * preprocessor keys and the jasper block list. */
#include <stdint.h>
#include <stdlib.h>

#include "base/log.h"
#include "models/marblenet_vad/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ac_set_log_level(0);
    ac_marblenet *m = calloc(1, sizeof *m);
    if (!m) return 0;
    if (ac_marblenet_parse_config(m, (const char *)data, size, "fuzz_config.json") == AC_OK &&
        (m->n_blocks < 1 || m->n_blocks > MARBLENET_MAX_BLOCKS || m->hop < 1 || m->win > m->n_fft))
        abort();
    free(m);
    return 0;
}
