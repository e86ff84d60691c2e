/* Fuzz the model loaders' shape and config checks over a whole package: a
 * single-file GGUF (Hviske: weights, config.json, generation_config.json
 * and tokenizer.model inside; Hviske v6: config.json and tokenizer.json
 * under its description; Vevo2: the package description and the
 * configs it points to) loaded through the public API from a memory file,
 * whichever family claims it. */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "audioc.h"
#include "base/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ac_set_log_level(0);
    int fd = memfd_create("fuzz_package", 0);
    if (fd < 0) return 0;
    if (write(fd, data, size) == (ssize_t)size) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ac_model *m = NULL;
        if (ac_model_load(path, NULL, &m) == AC_OK) ac_model_free(m);
    }
    close(fd);
    return 0;
}
