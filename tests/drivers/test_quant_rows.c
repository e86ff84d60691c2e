/* The rows of tensor/quant on inputs the reference writes, for
 * tests/ref/test_kquant.py to compare with its numpy oracle:
 *   test_quant_rows dequant TYPE N IN OUT   blocks of TYPE at IN -> N f32 at OUT
 *   test_quant_rows quant TYPE N IN OUT     N f32 at IN -> blocks of TYPE at OUT
 * TYPE is q8_0, q4_k or q6_k; files are raw little-endian. Exit 0 on
 * success, 1 with the error on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/quant.h"

static int read_all(const char *path, void *buf, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t got = fread(buf, 1, n, f);
    int extra = fgetc(f) != EOF;
    fclose(f);
    return got == n && !extra ? 0 : -1;
}

static int write_all(const char *path, const void *buf, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t put = fwrite(buf, 1, n, f);
    return fclose(f) == 0 && put == n ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s dequant|quant q8_0|q4_k|q6_k N IN OUT\n", argv[0]);
        return 1;
    }
    const char *types[] = {"q8_0", "q4_k", "q6_k"};
    const ac_dtype dtypes[] = {AC_DTYPE_Q8_0, AC_DTYPE_Q4_K, AC_DTYPE_Q6_K};
    int k = -1;
    for (int i = 0; i < 3; i++)
        if (!strcmp(argv[2], types[i])) k = i;
    size_t n = strtoull(argv[3], NULL, 10);
    if (k < 0 || !n || n % ac_dtype_block(dtypes[k])) {
        fprintf(stderr, "bad type '%s' or count %zu\n", argv[2], n);
        return 1;
    }
    size_t bytes = (size_t)ac_dtype_bytes(dtypes[k], n);
    float *x = malloc(n * sizeof *x);
    unsigned char *q = malloc(bytes);
    int quant = !strcmp(argv[1], "quant"), rc = 1;
    if (!x || !q) fprintf(stderr, "out of memory\n");
    else if (read_all(argv[4], quant ? (void *)x : (void *)q, quant ? n * sizeof *x : bytes))
        fprintf(stderr, "%s: cannot read %zu bytes\n", argv[4], quant ? n * sizeof *x : bytes);
    else if (quant ? ac_quantize_row(dtypes[k], x, q, n) : ac_dequantize_row(dtypes[k], q, x, n))
        fprintf(stderr, "%s: not a type tensor/quant converts\n", argv[2]);
    else if (write_all(argv[5], quant ? (void *)q : (void *)x, quant ? bytes : n * sizeof *x))
        fprintf(stderr, "%s: cannot write\n", argv[5]);
    else rc = 0;
    free(x);
    free(q);
    return rc;
}
