#include "audio/resample_soxr.h"

#include <math.h>
#include <soxr.h>

#include "base/error.h"

static int rate_ok(double r) { return isfinite(r) && r > 0; }

int64_t ac_resample_soxr_capacity(int64_t n, double in_rate, double out_rate)
{
    if (n < 0 || !rate_ok(in_rate) || !rate_ok(out_rate)) return 0;
    return (int64_t)((double)n * out_rate / in_rate + 1);
}

ac_status ac_resample_soxr(const float *x, int64_t n, double in_rate, double out_rate, float *out,
                           int64_t *out_n)
{
    *out_n = 0;
    if (!rate_ok(in_rate) || !rate_ok(out_rate) || n < 0)
        return ac_error(AC_ERR_ARG, "soxr resampling of %lld samples from %g Hz to %g Hz: bad arguments",
                        (long long)n, in_rate, out_rate);
    soxr_error_t err = NULL;
    soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
    soxr_quality_spec_t q = soxr_quality_spec(SOXR_HQ, 0);
    soxr_t r = soxr_create(in_rate, out_rate, 1, &err, &io, &q, NULL);
    if (!r) return ac_error(AC_ERR_UNSUPPORTED, "soxr resampling from %g Hz to %g Hz: %s", in_rate, out_rate, err);
    size_t cap = (size_t)ac_resample_soxr_capacity(n, in_rate, out_rate);
    size_t chunk = (size_t)(48000 * in_rate / out_rate), pos = 0, done = 0;
    if (chunk < 1) chunk = 1;
    /* the chunks python-soxr uses: libsoxr's output does not depend on them,
     * but this keeps the calls the same */
    for (size_t i = 0; i < (size_t)n && !err; i += chunk) {
        size_t len = (size_t)n - i < chunk ? (size_t)n - i : chunk;
        err = soxr_process(r, x + i, len, NULL, out + pos, cap - pos, &done);
        pos += done;
    }
    if (!err) {
        err = soxr_process(r, NULL, 0, NULL, out + pos, cap - pos, &done);
        pos += done;
    }
    soxr_delete(r);
    if (err) return ac_error(AC_ERR_UNSUPPORTED, "soxr resampling from %g Hz to %g Hz: %s", in_rate, out_rate, err);
    *out_n = (int64_t)pos;
    return AC_OK;
}
