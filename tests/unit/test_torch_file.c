/* src/io/torch_file: the real torch.save files that ref/make_torch_files.py
 * writes, every tensor and plain value compared with what it saved, and
 * the hostile files it writes, each refused with its own message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audioc.h"
#include "base/error.h"
#include "base/f16.h"
#include "base/file.h"
#include "io/config.h"
#include "io/tensor_file.h"
#include "io/weights.h"
#include "test_util.h"

static const char *torch_path(const char *name)
{
    static char buf[4][4096];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/torch/%s", test_work_dir, name);
    return buf[k];
}

static int inside(const void *p, size_t n, const void *base, size_t size)
{
    const unsigned char *c = p, *b = base;
    return c >= b && c + n <= b + size;
}

static int owned(const ac_tensor_file *f, const void *p)
{
    for (size_t i = 0; i < f->n_owned; i++)
        if (f->owned[i] == p) return 1;
    return 0;
}

/* Every tensor of FILE against expected.safetensors, its values against
 * expected.json; IN_PLACE: all of them must be used from the mapping. */
static void check_file(const ac_tensor_file *exp, const ac_config *values, const char *file, int in_place)
{
    ac_tensor_file *f = NULL;
    ac_status s = ac_tensor_file_open(torch_path(file), &f);
    CHECK(s == AC_OK, "%s: %s", file, ac_last_error());
    if (s) return;
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(values->root, file);
    const ac_config *got = ac_tensor_file_values(f);
    CHECK(want && got && cJSON_Compare(want, got->root, 1), "%s: plain values differ", file);
    size_t prefix = strlen(file), seen = 0;
    for (size_t i = 0; i < exp->n_tensors; i++) {
        const ac_tensor *e = &exp->tensors[i];
        if (strncmp(e->name, file, prefix) != 0 || e->name[prefix] != '/') continue;
        seen++;
        const char *name = e->name + prefix + 1;
        const ac_tensor *t = ac_tensor_file_find(f, name);
        CHECK(t != NULL, "%s: no tensor '%s'", file, name);
        if (!t) continue;
        int same_shape = t->ndim == e->ndim && t->numel == e->numel;
        for (int d = 0; same_shape && d < t->ndim; d++) same_shape = t->shape[d] == e->shape[d];
        CHECK(t->dtype == e->dtype && same_shape && t->nbytes == e->nbytes, "%s: '%s' is %s of %zu bytes", file,
              name, ac_dtype_name(t->dtype), t->nbytes);
        CHECK(t->nbytes == e->nbytes && memcmp(t->data, e->data, e->nbytes) == 0, "%s: '%s' values differ", file,
              name);
        CHECK(inside(t->data, t->nbytes, f->map, f->map_size) || owned(f, t->data), "%s: '%s' points elsewhere",
              file, name);
        if (in_place) CHECK(inside(t->data, t->nbytes, f->map, f->map_size), "%s: '%s' was copied", file, name);
    }
    CHECK(seen == f->n_tensors && seen > 0, "%s: %zu tensors, %zu expected", file, f->n_tensors, seen);
    ac_tensor_file_close(f);
}

static void test_good_files(void)
{
    ac_tensor_file *exp = NULL;
    ac_config *values = NULL;
    CHECK(ac_tensor_file_open(torch_path("expected.safetensors"), &exp) == AC_OK, "%s", ac_last_error());
    CHECK(ac_config_load(torch_path("expected.json"), &values) == AC_OK, "%s", ac_last_error());
    if (!exp || !values) return;
    check_file(exp, values, "whisper_stats.pt", 1);
    check_file(exp, values, "medium.pt", 1);
    check_file(exp, values, "dtypes.pt", 0);
    check_file(exp, values, "views.pt", 0);
    check_file(exp, values, "checkpoint.pt", 1);
    check_file(exp, values, "crafted_ok.pt", 1);
    check_file(exp, values, "zip64.pt", 0);
    ac_tensor_file_close(exp);
    ac_config_free(values);
}

/* Views: contiguous ones in place, the others copied; the same tensor saved
 * twice is one place in the file. */
static void test_views(void)
{
    ac_tensor_file *f = NULL;
    if (ac_tensor_file_open(torch_path("views.pt"), &f) != AC_OK) {
        CHECK(0, "%s", ac_last_error());
        return;
    }
    const ac_tensor *base = ac_tensor_file_find(f, "base"), *tied = ac_tensor_file_find(f, "tied");
    const ac_tensor *row = ac_tensor_file_find(f, "row"), *t = ac_tensor_file_find(f, "t");
    const ac_tensor *tail = ac_tensor_file_find(f, "tail");
    CHECK(base && tied && base->data == tied->data, "a tensor saved twice shares its bytes");
    CHECK(base && row && (const char *)row->data == (const char *)base->data + 5 * 4, "row 1 lies 5 floats in");
    CHECK(base && tail && (const char *)tail->data == (const char *)base->data + 7 * 4, "tail lies 7 floats in");
    CHECK(t && owned(f, t->data) && t->shape[0] == 5 && t->shape[1] == 4, "the transpose is copied");
    ac_tensor_file_close(f);
}

/* medium.pt through the weight table: names of the state dict, f16 to f32,
 * and the dims through the config getters. */
static void test_weights(void)
{
    ac_weights *w = NULL;
    ac_tensor_file *exp = NULL;
    if (ac_weights_open(torch_path("medium.pt"), &w) != AC_OK ||
        ac_tensor_file_open(torch_path("expected.safetensors"), &exp) != AC_OK) {
        CHECK(0, "%s", ac_last_error());
        ac_weights_free(w);
        return;
    }
    const float *conv = NULL;
    CHECK(ac_weights_f32(w, AC_SHAPE(6, 4, 3), &conv, "encoder.conv1.weight") == AC_OK, "%s", ac_last_error());
    const ac_tensor *e = ac_tensor_file_find(exp, "medium.pt/encoder.conv1.weight");
    int same = conv && e && e->numel == 72;
    for (int i = 0; same && i < 72; i++) {
        uint16_t h;
        memcpy(&h, (const char *)e->data + 2 * i, 2);
        same = conv[i] == ac_f16_to_f32(h);
    }
    CHECK(same, "encoder.conv1.weight as f32");
    ac_mat m;
    CHECK(ac_weights_mat(w, AC_SHAPE(6, 6), &m, "encoder.blocks.0.attn.query.weight") == AC_OK &&
              m.dtype == AC_DTYPE_F16 && m.rows == 6 && m.cols == 6, "query as an f16 matrix");
    ac_error_clear();
    CHECK(ac_weights_f32(w, AC_SHAPE(6), &conv, "model_state_dict.encoder.ln_post.weight") == AC_ERR_MODEL &&
              error_has("medium.pt: missing tensor"), "names are below the state dict: %s", ac_last_error());
    const ac_config *c = ac_weights_values(w);
    const cJSON *dims = NULL;
    int n = 0;
    CHECK(c && ac_config_object(c, NULL, NULL, "dims", &dims) == AC_OK, "dims: %s", ac_last_error());
    CHECK(ac_config_int(c, dims, "dims", "n_mels", &n) == AC_OK && n == 80, "n_mels %d", n);
    CHECK(ac_config_int(c, dims, "dims", "n_audio_layer", &n) == AC_OK && n == 24, "n_audio_layer %d", n);
    ac_error_clear();
    CHECK(ac_config_int(c, dims, "dims", "n_audio_ctxx", &n) == AC_ERR_MODEL &&
              error_has("medium.pt: missing key 'dims.n_audio_ctxx'"), "%s", ac_last_error());
    const cJSON *sd = NULL;
    CHECK(ac_config_object(c, NULL, NULL, "model_state_dict", &sd) == AC_OK, "state dict");
    ac_error_clear();
    CHECK(ac_config_int(c, sd, "model_state_dict", "encoder.conv1.weight", &n) == AC_ERR_MODEL &&
              error_has("must be an integer"), "a tensor is no integer: %s", ac_last_error());
    ac_tensor_file_close(exp);
    ac_weights_free(w);
}

static void expect_refused(const char *file, const char *needle)
{
    ac_tensor_file *f = NULL;
    ac_error_clear();
    ac_status s = ac_tensor_file_open(torch_path(file), &f);
    CHECK(s != AC_OK && f == NULL && error_has(file) && error_has(needle), "%s -> %d '%s'", file, s,
          ac_last_error());
    if (s == AC_OK) ac_tensor_file_close(f);
}

static void test_hostile(void)
{
    expect_refused("evil_system.pt", "pickle global 'posix.system' is not allowed");
    expect_refused("evil_eval.pt", "pickle global '__builtin__.eval' is not allowed");
    expect_refused("truncated.pt", "no zip end-of-directory record (truncated?)");
    expect_refused("lying_storage.pt", "storage '0' declares 12 Float elements but holds 40 bytes");
    expect_refused("out_of_bounds.pt", "tensor 'w': offset 8, shape [4] and stride [1] reach past its storage '0' of 10");
    expect_refused("strided_out.pt", "shape [2, 3] and stride [6, 2] reach past");
    expect_refused("expanded.pt", "tensor 'w': shape [4, 10] has more elements than its storage '0' of 10");
    expect_refused("missing_storage.pt", "storage entry 'missing_storage/data/1' is missing");
    expect_refused("deflated.pt", "'deflated/data.pkl' is compressed (method 8)");
    expect_refused("big_endian.pt", "saved big-endian");
    expect_refused("two_models.pt", "duplicate tensor 'w'");
    expect_refused("old_opcode.pt", "pickle opcode 'I' (0x49) at byte 11 is not supported");
    expect_refused("legacy.pt", "before torch 1.6 is not supported");
    expect_refused("bad_crc.pt", "fails its CRC check");
}

/* Every prefix of a real file is refused cleanly (the directory is at the
 * end), and the parser reads a buffer in memory as well as a file. */
static void test_every_cut(void)
{
    char *buf = NULL;
    size_t n = 0;
    if (ac_read_file(torch_path("views.pt"), 1 << 20, &buf, &n) != AC_OK) {
        CHECK(0, "%s", ac_last_error());
        return;
    }
    ac_tensor_file *f = NULL;
    CHECK(ac_torch_parse(buf, n, "views.pt", &f) == AC_OK && f->n_tensors == 8, "in memory: %s", ac_last_error());
    ac_tensor_file_close(f);
    size_t accepted = 0;
    for (size_t k = 0; k < n; k++) {
        char *cut = malloc(k ? k : 1);
        memcpy(cut, buf, k);
        f = NULL;
        if (ac_torch_parse(cut, k, "cut.pt", &f) == AC_OK) accepted++;
        ac_tensor_file_close(f);
        free(cut);
    }
    CHECK(accepted == 0, "%zu cut files accepted", accepted);
    free(buf);
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    RUN(test_good_files);
    RUN(test_views);
    RUN(test_weights);
    RUN(test_hostile);
    RUN(test_every_cut);
    return test_finish();
}
