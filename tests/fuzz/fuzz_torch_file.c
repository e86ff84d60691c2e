/* Fuzz the torch.save reader. An input that starts like a zip is parsed as
 * an archive; anything else is taken as the pickle and wrapped here into an
 * archive (right CRC, storages "0".."3" of 64 bytes), so that mutations
 * reach the unpickler and the tensor checks rather than the CRC check.
 * Whatever is accepted must lie inside the buffer or the table's copies. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "io/config.h"
#include "io/tensor_file.h"
#include "io/zip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N_STORAGES 4
#define STORAGE_BYTES 64

static void put(uint8_t **p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) *(*p)++ = (uint8_t)(v >> (8 * i));
}

/* A stored zip of archive/data.pkl = PKL and archive/data/K; its size. */
static size_t wrap(const uint8_t *pkl, size_t n, uint8_t *out)
{
    static const uint8_t storage[STORAGE_BYTES] = {1, 2, 3, 4, 5, 6, 7, 8, 0x80, 0x3f, 0, 0x7f};
    char names[N_STORAGES + 1][32] = {"archive/data.pkl"};
    const uint8_t *bodies[N_STORAGES + 1] = {pkl};
    size_t sizes[N_STORAGES + 1] = {n}, offsets[N_STORAGES + 1];
    for (int k = 0; k < N_STORAGES; k++) {
        snprintf(names[k + 1], sizeof names[k + 1], "archive/data/%d", k);
        bodies[k + 1] = storage;
        sizes[k + 1] = STORAGE_BYTES;
    }
    uint8_t *p = out;
    for (int k = 0; k <= N_STORAGES; k++) {
        size_t len = strlen(names[k]);
        offsets[k] = (size_t)(p - out);
        put(&p, 0x04034b50u, 4);
        put(&p, 0, 4); /* version, flags */
        put(&p, 0, 6); /* method, time, date */
        put(&p, ac_crc32(bodies[k], sizes[k]), 4);
        put(&p, sizes[k], 4);
        put(&p, sizes[k], 4);
        put(&p, len, 2);
        put(&p, 0, 2);
        memcpy(p, names[k], len);
        p += len;
        memcpy(p, bodies[k], sizes[k]);
        p += sizes[k];
    }
    uint8_t *cd = p;
    for (int k = 0; k <= N_STORAGES; k++) {
        size_t len = strlen(names[k]);
        put(&p, 0x02014b50u, 4);
        put(&p, 0, 8); /* versions, flags, method */
        put(&p, 0, 4); /* time, date */
        put(&p, ac_crc32(bodies[k], sizes[k]), 4);
        put(&p, sizes[k], 4);
        put(&p, sizes[k], 4);
        put(&p, len, 2);
        put(&p, 0, 8); /* extra, comment, disk, internal attributes */
        put(&p, 0, 4);
        put(&p, offsets[k], 4);
        memcpy(p, names[k], len);
        p += len;
    }
    size_t cd_size = (size_t)(p - cd), cd_off = (size_t)(cd - out);
    put(&p, 0x06054b50u, 4);
    put(&p, 0, 4);
    put(&p, N_STORAGES + 1, 2);
    put(&p, N_STORAGES + 1, 2);
    put(&p, cd_size, 4);
    put(&p, cd_off, 4);
    put(&p, 0, 2);
    return (size_t)(p - out);
}

static int owned(const ac_tensor_file *f, const void *p)
{
    for (size_t i = 0; i < f->n_owned; i++)
        if (f->owned[i] == p) return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ac_set_log_level(0);
    uint8_t *wrapped = NULL;
    const uint8_t *buf = data;
    if (size > 1 << 20) return 0;
    if (size < 2 || memcmp(data, "PK", 2) != 0) {
        wrapped = malloc(size + 1024 + N_STORAGES * STORAGE_BYTES);
        if (!wrapped) return 0;
        size = wrap(data, size, wrapped);
        buf = wrapped;
    }
    ac_tensor_file *f = NULL;
    if (ac_torch_parse(buf, size, "fuzz.pt", &f) == AC_OK) {
        volatile uint8_t sink = 0;
        for (size_t i = 0; i < f->n_tensors; i++) {
            const ac_tensor *t = &f->tensors[i];
            const uint8_t *p = t->data;
            int in_buf = p >= buf && p + t->nbytes <= buf + size;
            /* the parser promised these; a violation is a bug, not bad input */
            if (!in_buf && !owned(f, p)) abort();
            if (t->nbytes != ac_dtype_bytes(t->dtype, (uint64_t)t->numel)) abort();
            if (ac_tensor_file_find(f, t->name) == NULL) abort();
            if (t->nbytes) sink ^= p[0] ^ p[t->nbytes - 1];
        }
        const ac_config *c = ac_tensor_file_values(f);
        if (!c) abort();
        for (const cJSON *it = c->root->child; it; it = it->next) {
            int n;
            const cJSON *o;
            (void)ac_config_int(c, NULL, NULL, it->string, &n);
            if (ac_config_object(c, NULL, NULL, it->string, &o) == AC_OK)
                for (const cJSON *jt = o->child; jt; jt = jt->next) (void)ac_config_int(c, o, it->string, jt->string, &n);
        }
        (void)sink;
        ac_tensor_file_close(f);
    }
    free(wrapped);
    return 0;
}
