/* Runs a libFuzzer harness without libFuzzer: on every seed in a folder,
 * then on N deterministic mutations of them (fixed-seed LCG), so any
 * compiler can smoke-test the parsers under the sanitizers.
 *
 *   fuzz_X_smoke SEED_DIR [N=2000] [LAST_INPUT_FILE]
 *   fuzz_X_smoke FILE            (replay one input, e.g. a libFuzzer crash)
 *
 * With LAST_INPUT_FILE each input is written there before it runs, so
 * after a crash the file holds the input that caused it. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    uint8_t *data;
    size_t size;
} blob;

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t next(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33);
}

static int load(const char *path, blob *b)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    b->data = NULL;
    b->size = 0;
    size_t cap = 0;
    for (;;) {
        if (b->size == cap) {
            cap = cap ? 2 * cap : 4096;
            b->data = realloc(b->data, cap);
        }
        size_t n = fread(b->data + b->size, 1, cap - b->size, f);
        if (n == 0) break;
        b->size += n;
    }
    fclose(f);
    return 0;
}

static const char *last_input;

/* Runs the harness on an exact-size heap copy so that overreads are caught. */
static void run(const uint8_t *data, size_t size)
{
    if (last_input) {
        FILE *f = fopen(last_input, "wb");
        if (f) {
            fwrite(data, 1, size, f);
            fclose(f);
        }
    }
    uint8_t *copy = malloc(size ? size : 1);
    if (size) memcpy(copy, data, size);
    LLVMFuzzerTestOneInput(copy, size);
    free(copy);
}

static void put_le(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* One random edit of B (whose buffer has room for 64 more bytes). */
static void mutate(blob *b)
{
    static const uint64_t ints[] = {0, 1, 2, 7, 8, 16, 255, 256, 4096, 65535, 0x7fffffff, 0x80000000u,
                                    0xffffffffu, 0x100000000ull, 0x7fffffffffffffffull, ~0ull, 100u << 20};
    static const char *const texts[] = {"-1", "0", "1e308", "-0.5", "4294967296", "null", "[]", "{}", "\"", "\\u0000",
                                        "99999999999999999999", "[1,2,3]", "true"};
    size_t pos = b->size ? next() % b->size : 0;
    switch (next() % 7) {
    case 0: /* flip a bit */
        if (b->size) b->data[pos] ^= (uint8_t)(1u << (next() % 8));
        break;
    case 1: /* insert a byte */
        memmove(b->data + pos + 1, b->data + pos, b->size - pos);
        b->data[pos] = (uint8_t)next();
        b->size++;
        break;
    case 2: /* delete a byte */
        if (b->size) {
            memmove(b->data + pos, b->data + pos + 1, b->size - pos - 1);
            b->size--;
        }
        break;
    case 3: /* truncate */
        b->size = b->size ? next() % b->size : 0;
        break;
    case 4: /* an 8-byte window becomes a big or small integer */
        if (b->size >= 8) {
            uint64_t v = ints[next() % (sizeof ints / sizeof *ints)];
            if (next() % 2) v = (uint64_t)b->size + (next() % 17) - 8; /* near the size */
            put_le(b->data + next() % (b->size - 7), v);
        }
        break;
    case 5: /* overwrite with a JSON-ish token */
    {
        const char *t = texts[next() % (sizeof texts / sizeof *texts)];
        size_t n = strlen(t);
        if (b->size >= n) memcpy(b->data + next() % (b->size - n + 1), t, n);
        break;
    }
    default: /* a random byte */
        if (b->size) b->data[pos] = (uint8_t)next();
        break;
    }
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s SEED_DIR [N] [LAST_INPUT_FILE] | %s FILE\n", argv[0], argv[0]);
        return 2;
    }
    struct stat sb;
    if (stat(argv[1], &sb) == 0 && S_ISREG(sb.st_mode)) {
        blob b;
        if (load(argv[1], &b)) return 2;
        run(b.data, b.size);
        free(b.data);
        printf("ran 1 input\n");
        return 0;
    }
    long n_mut = argc > 2 ? strtol(argv[2], NULL, 10) : 2000;
    last_input = argc > 3 ? argv[3] : NULL;
    DIR *d = opendir(argv[1]);
    if (!d) {
        fprintf(stderr, "%s: cannot open the seed folder\n", argv[1]);
        return 2;
    }
    /* sorted names, so the mutation sequence does not depend on the file system */
    char *names[256];
    size_t n_names = 0;
    for (struct dirent *e; (e = readdir(d)) && n_names < 256;)
        if (e->d_name[0] != '.') names[n_names++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n_names, sizeof *names, by_name);
    blob seeds[256];
    size_t n_seeds = 0;
    for (size_t i = 0; i < n_names; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], names[i]);
        if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && load(path, &seeds[n_seeds]) == 0) n_seeds++;
        free(names[i]);
    }
    if (n_seeds == 0) {
        fprintf(stderr, "%s: no seeds\n", argv[1]);
        return 2;
    }
    for (size_t i = 0; i < n_seeds; i++) run(seeds[i].data, seeds[i].size);
    size_t max = 0;
    for (size_t i = 0; i < n_seeds; i++) max = seeds[i].size > max ? seeds[i].size : max;
    blob m = {malloc(max + 64 * 8 + 1), 0};
    for (long it = 0; it < n_mut; it++) {
        const blob *s = &seeds[next() % n_seeds];
        memcpy(m.data, s->data, s->size);
        m.size = s->size;
        int edits = 1 + (int)(next() % 8); /* at most 8 inserts: room is kept */
        for (int e = 0; e < edits; e++) mutate(&m);
        run(m.data, m.size);
    }
    free(m.data);
    for (size_t i = 0; i < n_seeds; i++) free(seeds[i].data);
    printf("%zu seeds, %ld mutations: no crash\n", n_seeds, n_mut);
    return 0;
}
