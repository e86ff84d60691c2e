/* Scalar reference kernels: the plain definition of each operation. */
#include <math.h>
#include <string.h>

#include "base/f16.h"
#include "tensor/dispatch.h"
#include "tensor/kernels.h"

void ac_matmul_nt_range_ref(const float *x, size_t ldx, const float *w, size_t ldw, const float *bias, float *y,
                            size_t ldy, size_t K, size_t m0, size_t m1, size_t n0, size_t n1)
{
    for (size_t m = m0; m < m1; m++)
        for (size_t n = n0; n < n1; n++) {
            float acc = 0;
            for (size_t k = 0; k < K; k++) acc += x[m * ldx + k] * w[n * ldw + k];
            y[m * ldy + n] = acc + (bias ? bias[n] : 0.0f);
        }
}

void ac_matmul_nt_ref(const float *x, size_t ldx, const float *w, size_t ldw, const float *bias,
                      float *y, size_t ldy, size_t M, size_t N, size_t K)
{
    ac_matmul_nt_range_ref(x, ldx, w, ldw, bias, y, ldy, K, 0, M, 0, N);
}

size_t ac_conv1d_out_len(const ac_conv1d_shape *s, size_t T)
{
    long span = (long)s->dilation * (s->kernel - 1) + 1;
    long padded = (long)T + 2L * s->pad;
    if (padded < span) return 0;
    return (size_t)((padded - span) / s->stride + 1);
}

void ac_conv1d_ref(const ac_conv1d_shape *s, const float *x, size_t batch, size_t T,
                   const float *w, const float *bias, float *y)
{
    size_t To = ac_conv1d_out_len(s, T);
    for (size_t b = 0; b < batch; b++)
        for (size_t t = 0; t < To; t++)
            for (int o = 0; o < s->cout; o++) {
                float acc = 0;
                for (int k = 0; k < s->kernel; k++) {
                    long ti = (long)t * s->stride - s->pad + (long)k * s->dilation;
                    if (ti < 0 || ti >= (long)T) continue;
                    const float *xi = x + (b * T + (size_t)ti) * s->cin;
                    const float *wk = w + ((size_t)o * s->kernel + k) * s->cin;
                    for (int c = 0; c < s->cin; c++) acc += xi[c] * wk[c];
                }
                y[(b * To + t) * s->cout + o] = acc + (bias ? bias[o] : 0.0f);
            }
}

void ac_conv1d_depthwise_ref(const ac_conv1d_shape *s, const float *x, size_t batch,
                             size_t T, const float *w, const float *bias, float *y)
{
    size_t To = ac_conv1d_out_len(s, T), C = (size_t)s->cin;
    for (size_t b = 0; b < batch; b++)
        for (size_t t = 0; t < To; t++)
            for (size_t c = 0; c < C; c++) {
                float acc = 0;
                for (int k = 0; k < s->kernel; k++) {
                    long ti = (long)t * s->stride - s->pad + (long)k * s->dilation;
                    if (ti < 0 || ti >= (long)T) continue;
                    acc += x[(b * T + (size_t)ti) * C + c] * w[(size_t)k * C + c];
                }
                y[(b * To + t) * C + c] = acc + (bias ? bias[c] : 0.0f);
            }
}

void ac_channel_affine_ref(float *x, size_t rows, size_t C, const float *scale,
                           const float *shift, int relu)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < C; c++) {
            float v = x[r * C + c] * scale[c] + shift[c];
            x[r * C + c] = relu && v < 0 ? 0 : v;
        }
}

void ac_relu_ref(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = x[i] > 0 ? x[i] : 0;
}

void ac_sigmoid_ref(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = 1.0f / (1.0f + expf(-x[i]));
}

void ac_tanh_ref(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = tanhf(x[i]);
}

void ac_exp_ref(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = expf(x[i]);
}

void ac_softmax_rows_ref(float *x, size_t rows, size_t cols)
{
    for (size_t r = 0; r < rows; r++) {
        float *v = x + r * cols, mx = -INFINITY, sum = 0;
        for (size_t i = 0; i < cols; i++) mx = v[i] > mx ? v[i] : mx;
        for (size_t i = 0; i < cols; i++) sum += (v[i] = expf(v[i] - mx));
        for (size_t i = 0; i < cols; i++) v[i] /= sum;
    }
}

void ac_lstm_cell_ref(const float *gx, const float *w_hh, float *h, float *c,
                      size_t H, float *g)
{
    ac_matmul_nt_ref(h, H, w_hh, H, gx, g, 4 * H, 1, 4 * H, H);
    for (size_t j = 0; j < H; j++) {
        float i = 1.0f / (1.0f + expf(-g[j]));
        float f = 1.0f / (1.0f + expf(-g[H + j]));
        float cand = tanhf(g[2 * H + j]);
        float o = 1.0f / (1.0f + expf(-g[3 * H + j]));
        c[j] = f * c[j] + i * cand;
        h[j] = o * tanhf(c[j]);
    }
}

void ac_silu_ref(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = x[i] / (1.0f + expf(-x[i]));
}

void ac_axpy_ref(float *y, const float *x, float alpha, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] += alpha * x[i];
}

void ac_glu_ref(const float *x, float *y, size_t rows, size_t C)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < C; c++) {
            float a = x[r * 2 * C + c], b = x[r * 2 * C + C + c];
            y[r * C + c] = a / (1.0f + expf(-b));
        }
}

void ac_layernorm_ref(const float *x, float *y, size_t rows, size_t C, const float *gamma,
                      const float *beta, float eps)
{
    for (size_t r = 0; r < rows; r++) {
        const float *v = x + r * C;
        double mean = 0, var = 0;
        for (size_t c = 0; c < C; c++) mean += v[c];
        mean /= (double)C;
        for (size_t c = 0; c < C; c++) var += (v[c] - mean) * (v[c] - mean);
        var /= (double)C;
        float inv = (float)(1.0 / sqrt(var + eps)), m = (float)mean;
        for (size_t c = 0; c < C; c++) y[r * C + c] = (v[c] - m) * inv * gamma[c] + beta[c];
    }
}

void ac_log_softmax_ref(float *x, size_t n)
{
    float mx = -INFINITY;
    for (size_t i = 0; i < n; i++) mx = x[i] > mx ? x[i] : mx;
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += exp((double)(x[i] - mx));
    float lse = mx + (float)log(sum);
    for (size_t i = 0; i < n; i++) x[i] -= lse;
}

size_t ac_conv_transpose1d_out_len(const ac_convt1d_shape *s, size_t T)
{
    if (T == 0) return 0;
    long n = ((long)T - 1) * s->stride - 2L * s->pad + (long)s->dilation * (s->kernel - 1) + s->out_pad + 1;
    return n > 0 ? (size_t)n : 0;
}

void ac_conv_transpose1d_ref(const ac_convt1d_shape *s, const float *x, size_t batch, size_t T,
                             const float *w, const float *bias, float *y)
{
    size_t To = ac_conv_transpose1d_out_len(s, T), cin = (size_t)s->cin, cout = (size_t)s->cout;
    for (size_t b = 0; b < batch; b++) {
        for (size_t t = 0; t < To; t++)
            for (size_t o = 0; o < cout; o++) y[(b * To + t) * cout + o] = bias ? bias[o] : 0.0f;
        for (size_t ti = 0; ti < T; ti++)
            for (int k = 0; k < s->kernel; k++) {
                long to = (long)ti * s->stride - s->pad + (long)k * s->dilation;
                if (to < 0 || to >= (long)To) continue;
                const float *xi = x + (b * T + ti) * cin;
                for (size_t o = 0; o < cout; o++) {
                    const float *wk = w + ((size_t)k * cout + o) * cin;
                    float acc = 0;
                    for (size_t c = 0; c < cin; c++) acc += xi[c] * wk[c];
                    y[(b * To + (size_t)to) * cout + o] += acc;
                }
            }
    }
}

void ac_gelu_ref(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = (float)(0.5 * x[i] * (1.0 + erf(x[i] * 0.70710678118654752)));
}

void ac_mul_ref(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] *= x[i];
}

void ac_silu_mul_ref(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = y[i] / (1.0f + expf(-y[i])) * x[i];
}

void ac_rmsnorm_ref(const float *x, float *y, size_t rows, size_t C, const float *gamma,
                    size_t gamma_stride, float eps)
{
    for (size_t r = 0; r < rows; r++) {
        const float *v = x + r * C, *g = gamma ? gamma + r * gamma_stride : NULL;
        double ss = 0;
        for (size_t c = 0; c < C; c++) ss += (double)v[c] * v[c];
        float inv = (float)(1.0 / sqrt(ss / (double)C + eps));
        for (size_t c = 0; c < C; c++) y[r * C + c] = v[c] * inv * (g ? g[c] : 1.0f);
    }
}

void ac_rope_ref(float *x, size_t rows, size_t ld, size_t heads, size_t dim, const int *pos, float theta)
{
    size_t half = dim / 2;
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < half; i++) {
            float inv = 1.0f / powf(theta, (float)(2 * i) / (float)dim);
            float a = (float)(pos ? pos[r] : (int)r) * inv, c = cosf(a), s = sinf(a);
            for (size_t h = 0; h < heads; h++) {
                float *v = x + r * ld + h * dim, x1 = v[i], x2 = v[i + half];
                v[i] = x1 * c - x2 * s;
                v[i + half] = x2 * c + x1 * s;
            }
        }
}

void ac_rope_rotate_ref(float *x, size_t heads, size_t dim, const float *cs, const float *sn)
{
    size_t half = dim / 2;
    for (size_t h = 0; h < heads; h++)
        for (size_t i = 0; i < half; i++) {
            float *v = x + h * dim, x1 = v[i], x2 = v[i + half];
            v[i] = x1 * cs[i] - x2 * sn[i];
            v[i + half] = x2 * cs[i] + x1 * sn[i];
        }
}

void ac_polyphase_ref(const float *bank, size_t taps, size_t stride, size_t phases, const float *x, size_t step,
                      size_t blocks, float *out)
{
    for (size_t i = 0; i < blocks; i++)
        for (size_t j = 0; j < phases; j++) {
            const float *k = bank + j * stride, *xi = x + i * step;
            float acc = 0;
            for (size_t m = 0; m < taps; m++) acc += k[m] * xi[m];
            out[i * phases + j] = acc;
        }
}

void ac_softmax_masked_ref(float *x, size_t rows, size_t cols, float scale, const ac_mask *m)
{
    for (size_t r = 0; r < rows; r++) {
        float *v = x + r * cols, mx = -INFINITY, sum = 0;
        size_t R = (m ? m->row0 : 0) + r;
        for (size_t j = 0; j < cols; j++) {
            int sees = !m || ((!m->causal || j <= R) && (!m->keys || j < m->keys) &&
                              (!m->keep || m->keep[R * m->ld + j]));
            v[j] = sees ? v[j] * scale + (m && m->add ? m->add[R * m->ld + j] : 0.0f) : -INFINITY;
            mx = v[j] > mx ? v[j] : mx;
        }
        if (mx == -INFINITY) {
            memset(v, 0, cols * sizeof *v);
            continue;
        }
        for (size_t j = 0; j < cols; j++) sum += (v[j] = v[j] == -INFINITY ? 0.0f : expf(v[j] - mx));
        for (size_t j = 0; j < cols; j++) v[j] /= sum;
    }
}

void ac_attn_scores_ref(const float *q, size_t q_ld, size_t rows, const float *kp, size_t nk, size_t dk, float *s)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t t = 0; t < nk; t++) {
            const float *k = kp + t / AC_ATTN_KP * AC_ATTN_KP * dk + t % AC_ATTN_KP;
            float acc = 0;
            for (size_t d = 0; d < dk; d++) acc += q[r * q_ld + d] * k[d * AC_ATTN_KP];
            s[r * nk + t] = acc;
        }
}

void ac_attn_values_ref(const float *p, size_t rows, const float *vp, size_t nk, size_t dk, float *out, size_t out_ld)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t d = 0; d < dk; d++) {
            float acc = 0;
            for (size_t t = 0; t < nk; t++) acc += p[r * nk + t] * vp[t * AC_ATTN_VP(dk) + d];
            out[r * out_ld + d] = acc;
        }
}

void ac_attn_dot_rows_ref(const float *q, size_t g, const float *k, size_t ld, size_t n, size_t dk, float *s,
                          size_t s_ld)
{
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < g; i++) {
            float acc = 0;
            for (size_t d = 0; d < dk; d++) acc += q[i * dk + d] * k[t * ld + d];
            s[i * s_ld + t] = acc;
        }
}

void ac_attn_mix_rows_ref(const float *p, size_t p_ld, size_t g, const float *v, size_t ld, size_t n, size_t dk,
                          float *out, size_t out_ld, int add)
{
    for (size_t i = 0; i < g; i++)
        for (size_t d = 0; d < dk; d++) {
            float acc = add ? out[i * out_ld + d] : 0.0f;
            for (size_t t = 0; t < n; t++) acc = fmaf(p[i * p_ld + t], v[t * ld + d], acc);
            out[i * out_ld + d] = acc;
        }
}

static uint32_t pair16(float a, float b) { return ac_f32_to_bf16(a) | (uint32_t)ac_f32_to_bf16(b) << 16; }

void ac_attn_pack_bf16_ref(const float *k, const float *v, size_t ld, size_t nk, size_t dk, uint32_t *kp,
                           uint32_t *vp)
{
    size_t dk2 = (dk + 1) / 2, half = dk / 2, dkp = AC_ATTN_VP(dk), panels = (nk + AC_ATTN_KP - 1) / AC_ATTN_KP;
    for (size_t t = 0; t < panels * AC_ATTN_KP; t++) {
        uint32_t *col = kp + t / AC_ATTN_KP * dk2 * AC_ATTN_KP + t % AC_ATTN_KP; /* key t's pairs, a panel row apart */
        const float *row = k + t * ld;
        if (t >= nk) {
            for (size_t d = 0; d < dk2; d++) col[d * AC_ATTN_KP] = 0;
            continue;
        }
        for (size_t d = 0; d < half; d++) col[d * AC_ATTN_KP] = pair16(row[2 * d], row[2 * d + 1]);
        if (dk % 2) col[half * AC_ATTN_KP] = pair16(row[dk - 1], 0.0f);
    }
    for (size_t t = 0; t < (nk + 1) / 2; t++) {
        const float *a = v + 2 * t * ld, *b = 2 * t + 1 < nk ? a + ld : NULL;
        uint32_t *out = vp + t * dkp;
        if (b)
            for (size_t d = 0; d < dk; d++) out[d] = pair16(a[d], b[d]);
        else
            for (size_t d = 0; d < dk; d++) out[d] = pair16(a[d], 0.0f);
        for (size_t d = dk; d < dkp; d++) out[d] = 0;
    }
}

/* the two halves of a pair as f32 */
static float pair_lo(uint32_t w) { return ac_bf16_to_f32((uint16_t)w); }
static float pair_hi(uint32_t w) { return ac_bf16_to_f32((uint16_t)(w >> 16)); }

void ac_attn_scores16_ref(const float *q, size_t q_ld, size_t rows, const uint32_t *kp, size_t nk, size_t dk, float *s)
{
    size_t dk2 = (dk + 1) / 2;
    for (size_t r = 0; r < rows; r++)
        for (size_t t = 0; t < nk; t++) {
            float acc = 0;
            for (size_t d = 0; d < dk2; d++) {
                uint32_t w = kp[(t / AC_ATTN_KP * dk2 + d) * AC_ATTN_KP + t % AC_ATTN_KP];
                float a = ac_bf16_to_f32(ac_f32_to_bf16(q[r * q_ld + 2 * d]));
                float b = 2 * d + 1 < dk ? ac_bf16_to_f32(ac_f32_to_bf16(q[r * q_ld + 2 * d + 1])) : 0.0f;
                acc += a * pair_lo(w);
                acc += b * pair_hi(w);
            }
            s[r * nk + t] = acc;
        }
}

void ac_attn_values16_ref(float *p, size_t rows, const uint32_t *vp, size_t nk, size_t dk, float *out, size_t out_ld)
{
    size_t dkp = AC_ATTN_VP(dk);
    for (size_t r = 0; r < rows; r++) {
        float *pr = p + r * nk;
        for (size_t t = 0; t < nk; t++) pr[t] = ac_bf16_to_f32(ac_f32_to_bf16(pr[t]));
        for (size_t d = 0; d < dk; d++) {
            float acc = 0;
            for (size_t t = 0; t < nk; t++) {
                uint32_t w = vp[t / 2 * dkp + d];
                acc += pr[t] * (t % 2 ? pair_hi(w) : pair_lo(w));
            }
            out[r * out_ld + d] = acc;
        }
    }
}
