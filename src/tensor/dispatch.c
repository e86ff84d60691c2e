/* The kernel tables of the levels, and the choice of one: once, from the
 * CPU, and again whenever ac_kernels_set_simd is called. */
#include "tensor/dispatch.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <pthread.h>
#include <stdatomic.h>

#include "tensor/attn_avx512.h"
#include "tensor/attn_bf16.h"
#include "tensor/gemm_q8_avx2.h"
#include "tensor/kernels_avx2.h"
#include "tensor/mat_avx2.h"
#include "tensor/mat_avx512.h"
#include "tensor/mat_bf16.h"
#include "tensor/mat_q8_avx2.h"
#include "tensor/mat_q8_vnni.h"
#include "tensor/mat_qk_avx2.h"

static const ac_kernel_table scalar = {
    .relu = ac_relu_ref,
    .sigmoid = ac_sigmoid_ref,
    .tanh = ac_tanh_ref,
    .exp = ac_exp_ref,
    .silu = ac_silu_ref,
    .gelu = ac_gelu_ref,
    .mul = ac_mul_ref,
    .silu_mul = ac_silu_mul_ref,
    .axpy = ac_axpy_ref,
    .channel_affine = ac_channel_affine_ref,
    .glu = ac_glu_ref,
    .layernorm = ac_layernorm_ref,
    .rmsnorm = ac_rmsnorm_ref,
    .rope_rotate = ac_rope_rotate_ref,
    .softmax_rows = ac_softmax_rows_ref,
    .softmax_masked = ac_softmax_masked_ref,
    .log_softmax = ac_log_softmax_ref,
    .conv1d_depthwise = ac_conv1d_depthwise_ref,
    .polyphase = ac_polyphase_ref,
    .matmul_nt_range = ac_matmul_nt_range_ref,
    .mat_rows = ac_mat_rows_ref,
    .matmul_few = ac_matmul_few_ref,
    .matmul_q8 = ac_matmul_q8_ref,
    .quantize_q8_act = ac_quantize_q8_act,
    .matmul_qk = ac_matmul_qk_ref,
    .matmul_row16 = ac_matmul_row16_none,
    .gemm16 = ac_gemm16_none,
    .gemm_q8 = ac_gemm_q8_none,
    .attn_scores = ac_attn_scores_ref,
    .attn_values = ac_attn_values_ref,
    .attn_softmax = ac_softmax_masked_ref,
    .attn_pack16 = ac_attn_pack_bf16_ref,
    .attn_scores16 = ac_attn_scores16_ref,
    .attn_values16 = ac_attn_values16_ref,
    .attn_dot_rows = ac_attn_dot_rows_ref,
    .attn_mix_rows = ac_attn_mix_rows_ref,
};

/* A level above AVX2 starts from the entries of the level it extends and
 * overrides those it does better: of two initializers of one entry, the
 * later counts. */
#define AVX2_ENTRIES                                \
    .relu = ac_relu_avx2,                           \
    .sigmoid = ac_sigmoid_avx2,                     \
    .tanh = ac_tanh_avx2,                           \
    .exp = ac_exp_avx2,                             \
    .silu = ac_silu_avx2,                           \
    .gelu = ac_gelu_avx2,                           \
    .mul = ac_mul_avx2,                             \
    .silu_mul = ac_silu_mul_avx2,                   \
    .axpy = ac_axpy_avx2,                           \
    .channel_affine = ac_channel_affine_avx2,       \
    .glu = ac_glu_avx2,                             \
    .layernorm = ac_layernorm_avx2,                 \
    .rmsnorm = ac_rmsnorm_avx2,                     \
    .rope_rotate = ac_rope_rotate_avx2,             \
    .softmax_rows = ac_softmax_rows_avx2,           \
    .softmax_masked = ac_softmax_masked_avx2,       \
    .log_softmax = ac_log_softmax_avx2,             \
    .conv1d_depthwise = ac_conv1d_depthwise_avx2,   \
    .polyphase = ac_polyphase_avx2,                 \
    .matmul_nt_range = ac_matmul_nt_range_avx2,     \
    .mat_rows = ac_mat_rows_avx2,                   \
    .matmul_few = ac_matmul_few_avx2,               \
    .matmul_q8 = ac_matmul_q8_avx2,                 \
    .quantize_q8_act = ac_quantize_q8_act,          \
    .matmul_qk = ac_matmul_qk_avx2,                 \
    .matmul_row16 = ac_matmul_row16_none,           \
    .gemm16 = ac_gemm16_none,                       \
    .gemm_q8 = ac_gemm_q8_avx2,                     \
    .attn_scores = ac_attn_scores_ref,              \
    .attn_values = ac_attn_values_ref,              \
    .attn_softmax = ac_softmax_masked_avx2,         \
    .attn_pack16 = ac_attn_pack_bf16_ref,           \
    .attn_scores16 = ac_attn_scores16_ref,          \
    .attn_values16 = ac_attn_values16_ref,          \
    .attn_dot_rows = ac_attn_dot_rows_avx2,         \
    .attn_mix_rows = ac_attn_mix_rows_avx2

#define AVX512_ENTRIES                              \
    AVX2_ENTRIES,                                   \
    .matmul_row16 = ac_matmul_row16_avx512,         \
    .gemm16 = ac_gemm16_avx512,                     \
    .quantize_q8_act = ac_quantize_q8_act_avx512,   \
    .attn_scores = ac_attn_scores_avx512,           \
    .attn_values = ac_attn_values_avx512,           \
    .attn_softmax = ac_softmax_masked_avx512,       \
    .attn_dot_rows = ac_attn_dot_rows_avx512,       \
    .attn_mix_rows = ac_attn_mix_rows_avx512

#define AVX512_VNNI_ENTRIES                         \
    AVX512_ENTRIES,                                 \
    .gemm_q8 = ac_gemm_q8_vnni

#define AVX512_BF16_ENTRIES                         \
    AVX512_VNNI_ENTRIES,                            \
    .matmul_row16 = ac_matmul_row16_bf16,           \
    .gemm16 = ac_gemm16_bf16,                       \
    .attn_pack16 = ac_attn_pack_bf16_avx512,        \
    .attn_scores16 = ac_attn_scores_bf16,           \
    .attn_values16 = ac_attn_values_bf16

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
static const ac_kernel_table avx2 = {AVX2_ENTRIES};
static const ac_kernel_table avx512 = {AVX512_ENTRIES};
static const ac_kernel_table avx512_vnni = {AVX512_VNNI_ENTRIES};
static const ac_kernel_table avx512_bf16 = {AVX512_BF16_ENTRIES};
#pragma GCC diagnostic pop

/* A new level (say AVX_VNNI) goes in four places: its name in the enum of kernels.h, its entries here (those of
 * the level it extends, then its own kernels), its table in this array,
 * and its CPU features in cpu_runs. */
static const ac_kernel_table *const tables[AC_SIMD_LEVELS] = {
    [AC_SIMD_NONE] = &scalar,
    [AC_SIMD_AVX2] = &avx2,
    [AC_SIMD_AVX512] = &avx512,
    [AC_SIMD_AVX512_VNNI] = &avx512_vnni,
    [AC_SIMD_AVX512_BF16] = &avx512_bf16,
};

/* Whether this CPU, and the OS, which must save the wider registers, run
 * LEVEL's kernels: every feature its table uses, those of the level it
 * extends included. */
static int cpu_runs(int level)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    __builtin_cpu_init();
    /* F16C is CPUID leaf 1, ECX bit 29 (not every compiler's builtin knows it) */
    int f16c = __get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1);
    int avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
    int avx512f = avx2_fma && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    int vnni = avx512f && __builtin_cpu_supports("avx512vnni");
    switch (level) {
    case AC_SIMD_NONE: return 1;
    case AC_SIMD_AVX2: return avx2_fma;
    case AC_SIMD_AVX512: return avx512f;
    case AC_SIMD_AVX512_VNNI: return vnni;
    case AC_SIMD_AVX512_BF16: return vnni && __builtin_cpu_supports("avx512bf16");
    default: return 0;
    }
#else
    return level == AC_SIMD_NONE;
#endif
}

static unsigned cpu_levels; /* bit L: the CPU runs level L; set once */
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
/* Read by every kernel call, set by tests and benchmarks while pool threads
 * may read it. */
static _Atomic(const ac_kernel_table *) in_use;

/* The highest level up to WANT that the CPU runs. */
static int best_level(int want)
{
    int l = want < AC_SIMD_NONE ? AC_SIMD_NONE : want < AC_SIMD_LEVELS - 1 ? want : AC_SIMD_LEVELS - 1;
    while (l > AC_SIMD_NONE && !(cpu_levels >> l & 1)) l--;
    return l;
}

static void find_cpu_levels(void)
{
    for (int l = 0; l < AC_SIMD_LEVELS; l++) cpu_levels |= (unsigned)cpu_runs(l) << l;
    atomic_store_explicit(&in_use, tables[best_level(AC_SIMD_LEVELS - 1)], memory_order_relaxed);
}

const ac_kernel_table *ac_kernels(void)
{
    const ac_kernel_table *t = atomic_load_explicit(&in_use, memory_order_relaxed);
    if (t) return t;
    pthread_once(&cpu_once, find_cpu_levels);
    return atomic_load_explicit(&in_use, memory_order_relaxed);
}

const ac_kernel_table *ac_kernels_at(int level)
{
    return level >= AC_SIMD_NONE && level < AC_SIMD_LEVELS ? tables[level] : NULL;
}

void ac_kernels_set_simd(int level)
{
    pthread_once(&cpu_once, find_cpu_levels);
    atomic_store_explicit(&in_use, tables[best_level(level)], memory_order_relaxed);
}

int ac_kernels_simd(void)
{
    const ac_kernel_table *t = ac_kernels();
    int l = AC_SIMD_LEVELS - 1;
    while (l > AC_SIMD_NONE && tables[l] != t) l--;
    return l;
}
