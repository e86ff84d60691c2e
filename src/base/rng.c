#include "base/rng.h"

#include <math.h>

#define TWO_POW_53 9007199254740992.0

uint64_t ac_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* U1 is kept off 0 (half a step up) so the logarithm is finite. */
static double box_muller(uint64_t a, uint64_t b)
{
    double u1 = ((double)(a >> 11) + 0.5) / TWO_POW_53;
    double u2 = (double)(b >> 11) / TWO_POW_53;
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

double ac_splitmix_gaussian(uint64_t *state)
{
    uint64_t a = ac_splitmix64(state);
    return box_muller(a, ac_splitmix64(state));
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void ac_rng_seed(ac_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = ac_splitmix64(&seed);
}

uint64_t ac_rng_next(ac_rng *r)
{
    uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = rotl(s[3], 45);
    return out;
}

double ac_rng_uniform(ac_rng *r) { return (double)(ac_rng_next(r) >> 11) / TWO_POW_53; }

float ac_rng_uniformf(ac_rng *r) { return (float)(ac_rng_next(r) >> 40) / 16777216.0f; }

double ac_rng_gaussian(ac_rng *r)
{
    uint64_t a = ac_rng_next(r);
    return box_muller(a, ac_rng_next(r));
}
