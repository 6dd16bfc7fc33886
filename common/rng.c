#include "rng.h"

#include <assert.h>

/* The golden-ratio increment of SplitMix64: odd, so key + c * GOLDEN never repeats within 2^64. */
#define RNG_GOLDEN 0x9e3779b97f4a7c15ULL

/* SplitMix64's finaliser (Stafford's variant 13): a bijection on 64 bits with full avalanche. */
static inline uint64_t rng_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Folds one coordinate into the key; mixing v on its own first keeps (a, b) and (b, a) apart. */
static inline uint64_t rng_absorb(uint64_t h, uint64_t v) {
    return rng_mix(h ^ rng_mix(v + RNG_GOLDEN));
}

void rng_init(rng_t *self, uint64_t seed, uint32_t stream, uint64_t session, uint32_t node,
              uint32_t field) {
    uint64_t h = rng_mix(seed + 0x243f6a8885a308d3ULL);
    h = rng_absorb(h, stream);
    h = rng_absorb(h, session);
    h = rng_absorb(h, node);
    h = rng_absorb(h, field);
    self->key = h;
    self->counter = 0;
}

/* SplitMix64 at position `counter` of the key's sequence, mixed once more with the key so two
 * keys that happen to differ by a multiple of the increment do not yield shifted copies. */
uint64_t rng_next_u64(rng_t *self) {
    uint64_t c = ++self->counter;
    return rng_mix(rng_mix(self->key + c * RNG_GOLDEN) ^ self->key);
}

double rng_next_double(rng_t *self) {
    return (double)(rng_next_u64(self) >> 11) * 0x1.0p-53;
}

double rng_next_open(rng_t *self) {
    return ((double)(rng_next_u64(self) >> 11) + 0.5) * 0x1.0p-53;
}

/* Lemire's multiply-shift with rejection of the biased low fringe. */
uint64_t rng_next_below(rng_t *self, uint64_t bound) {
    assert(bound > 0);
    unsigned __int128 m = (unsigned __int128)rng_next_u64(self) * bound;
    uint64_t low = (uint64_t)m;
    if (low < bound) {
        uint64_t threshold = -bound % bound;
        while (low < threshold) {
            m = (unsigned __int128)rng_next_u64(self) * bound;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}
