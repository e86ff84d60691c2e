/* GGUF container parser: not yet supported (see docs/models/hviske_asr.md). */
#include "base/error.h"
#include "io/tensor_file.h"

ac_status ac_gguf_parse(const void *buf, size_t size, const char *name, ac_tensor_file **out)
{
    (void)buf, (void)size;
    *out = NULL;
    return ac_error(AC_ERR_UNSUPPORTED, "%s: GGUF files are not supported yet", name);
}
