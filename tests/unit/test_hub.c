/* The pure parts of the Hub client: SHA-256 on the FIPS 180-4 examples fed
 * in any pieces, model names (what is refused and why), repository file
 * paths, and the cache layout's names (a relative link per folder depth). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/sha256.h"
#include "hub/cache.h"
#include "hub/spec.h"
#include "test_util.h"

static void hex_of(const char *data, size_t n, size_t piece, char out[65])
{
    ac_sha256 h;
    ac_sha256_init(&h);
    for (size_t i = 0; i < n; i += piece) ac_sha256_update(&h, data + i, n - i < piece ? n - i : piece);
    ac_sha256_hex(&h, out);
}

static void test_sha256(void)
{
    static const struct {
        const char *in, *hex;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    };
    char out[65];
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        for (size_t piece = 1; piece <= 64; piece *= 3) {
            hex_of(v[i].in, strlen(v[i].in), piece, out);
            CHECK(strcmp(out, v[i].hex) == 0, "sha256('%s') in pieces of %zu = %s", v[i].in, piece, out);
        }
    char *a = malloc(1000000);
    memset(a, 'a', 1000000);
    hex_of(a, 1000000, 4099, out);
    CHECK(strcmp(out, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0, "a million a: %s",
          out);
    free(a);
}

static void test_specs(void)
{
    hub_spec s;
    CHECK(hub_spec_parse("syvai/hviske-v5.3", &s) == AC_OK && !strcmp(s.repo, "syvai/hviske-v5.3") &&
              !strcmp(s.revision, "main") && !s.sub[0],
          "plain");
    CHECK(hub_spec_parse("RMSnow/Vevo2@v1.0/acoustic_modeling/fm/", &s) == AC_OK && !strcmp(s.repo, "RMSnow/Vevo2") &&
              !strcmp(s.revision, "v1.0") && !strcmp(s.sub, "acoustic_modeling/fm"),
          "revision and subfolder: %s %s %s", s.repo, s.revision, s.sub);
    CHECK(hub_spec_parse("a/b/sub", &s) == AC_OK && !strcmp(s.sub, "sub") && !strcmp(s.revision, "main"), "subfolder");
    static const char *const bad[] = {"noslash", "/a", "a/", "../x/y", "a/..", "a/b@", "a/b@..", "a/b/../c",
                                      "a/b//c", "a--b/c", "a..b/c", "a/-b", "a/b.", "a b/c", "a/b@x\ny", "a/b/c\\d", NULL};
    for (int i = 0; bad[i]; i++) CHECK(hub_spec_parse(bad[i], &s) == AC_ERR_ARG, "'%s' refused", bad[i]);
    static const char *const ok_paths[] = {"config.json", "a/b/c.txt", "a..b", ".gitattributes", NULL};
    static const char *const bad_paths[] = {"", "/etc/passwd", "../x", "a/../b", "a/./b", "a//b", "a/", ".", "..",
                                            "a\\b", "a\nb", NULL};
    for (int i = 0; ok_paths[i]; i++) CHECK(hub_path_ok(ok_paths[i]), "'%s' is a plain path", ok_paths[i]);
    for (int i = 0; bad_paths[i]; i++) CHECK(!hub_path_ok(bad_paths[i]), "'%s' refused", bad_paths[i]);
    CHECK(hub_is_commit("0123456789abcdef0123456789abcdef01234567") && !hub_is_commit("main") &&
              !hub_is_commit("0123456789ABCDEF0123456789abcdef01234567"),
          "commit hashes");
}

static void test_cache_names(void)
{
    char root[4200], p[HUB_PATH], target[HUB_PATH];
    snprintf(root, sizeof root, "%s/hub_cache_names", test_work_dir);
    setenv("HF_HUB_CACHE", root, 1);
    hub_repo r;
    CHECK(hub_cache_open("org/name", &r) == AC_OK && !strcmp(r.folder, "models--org--name"), "folder %s", r.folder);
    const char *commit = "0123456789abcdef0123456789abcdef01234567";
    CHECK(hub_cache_link(&r, commit, "a/b/c.json", "etag1") == AC_OK, "link: %s", ac_last_error());
    CHECK(hub_cache_snapshot(&r, commit, "a/b/c.json", p) == AC_OK, "snapshot path");
    ssize_t n = readlink(p, target, sizeof target - 1);
    target[n > 0 ? n : 0] = 0;
    CHECK(!strcmp(target, "../../../../blobs/etag1"), "link target %s", target);
    CHECK(hub_cache_write_ref(&r, "v1", commit) == AC_OK, "ref");
    char got[41];
    CHECK(hub_cache_commit(&r, "v1", got) == AC_OK && !strcmp(got, commit), "ref read back");
    CHECK(hub_cache_commit(&r, "v2", got) == AC_ERR_IO && strstr(ac_last_error(), "org/name@v2"), "%s",
          ac_last_error());
    unsetenv("HF_HUB_CACHE");
}

int main(int argc, char **argv)
{
    test_init(argc, argv);
    RUN(test_sha256);
    RUN(test_specs);
    RUN(test_cache_names);
    return test_finish();
}
