/* Fuzz hv6_config_parse (a Hviske v6 config.json). A config it accepts
 * must keep the invariants the loader and the graph rely on. */
#include <stdint.h>
#include <stdlib.h>

#include "base/log.h"
#include "models/hviske_v6/hviske_v6.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ac_set_log_level(0);
    hv6_config c;
    if (hv6_config_parse((const char *)data, size, "fuzz", &c) != AC_OK) return 0;
    const whisper_config *e = &c.enc;
    const qwen2_config *d = &c.dec;
    if (e->d < 1 || e->heads < 1 || e->d % e->heads || e->rope_dim < 2 || e->rope_dim % 2 ||
        e->rope_dim > e->d / e->heads || !(e->rope_theta > 0))
        abort();
    if (c.stack < 1 || c.stack > 100 || d->heads % d->kv_heads || d->head_dim % 2 || !d->tied || !d->qk_norm)
        abort();
    int ids[] = {c.bos, c.eos, c.style[0], c.style[1], c.style[2], c.style[3]};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
        if (ids[i] < 0 || ids[i] >= d->vocab) abort();
    return 0;
}
