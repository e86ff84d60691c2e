/* Seeded pseudo-random numbers: the same seed gives the same stream on
 * every machine and thread count. SplitMix64 is a one-word generator (used
 * as is for dither and to seed the other); xoshiro256** is the general one. */
#ifndef AC_BASE_RNG_H
#define AC_BASE_RNG_H

#include <stdint.h>

/* The next SplitMix64 output; advances STATE. */
uint64_t ac_splitmix64(uint64_t *state);
/* A standard normal from two SplitMix64 outputs (Box-Muller, cosine branch). */
double ac_splitmix_gaussian(uint64_t *state);

/* xoshiro256**, its four words seeded from SplitMix64(seed). */
typedef struct ac_rng {
    uint64_t s[4];
} ac_rng;

void ac_rng_seed(ac_rng *r, uint64_t seed);
uint64_t ac_rng_next(ac_rng *r);
/* Uniform in [0, 1): 53 random bits (double), 24 (float). */
double ac_rng_uniform(ac_rng *r);
float ac_rng_uniformf(ac_rng *r);
/* A standard normal from two outputs, as ac_splitmix_gaussian. */
double ac_rng_gaussian(ac_rng *r);

#endif
