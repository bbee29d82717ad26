//! Random streams. Every random choice in a model draws from a xoshiro stream derived from the
//! scenario's `RandomSeed` and a stable key (a purpose string and an id that the topology or the
//! scenario fixes), never from bevy `Entity` values, insertion order, `thread_rng` or the clock.
//! Two streams with different keys are independent; the same key always gives the same stream.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The seeded generator every model uses.
pub type SimRng = Xoshiro256PlusPlus;

/// SplitMix64: spreads any 64-bit input over all bits; the standard seeding function for xoshiro.
#[inline]
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a of a purpose string: stable across builds and platforms (unlike `DefaultHasher`).
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// The stream for `(seed, purpose, id)`: for example `stream(seed, "pairing", 0)` or
/// `stream(seed, "uniform-start", connection_index)`.
pub fn stream(seed: u64, purpose: &str, id: u64) -> SimRng {
    let mut s = [0u8; 32];
    let mut x = splitmix64(seed ^ splitmix64(fnv1a(purpose) ^ splitmix64(id)));
    for chunk in s.chunks_mut(8) {
        x = splitmix64(x);
        chunk.copy_from_slice(&x.to_le_bytes());
    }
    SimRng::from_seed(s)
}

/// A uniform integer in `0..n` (n > 0) without modulo bias (Lemire's method).
pub fn below(rng: &mut SimRng, n: u64) -> u64 {
    assert!(n > 0, "below(0)");
    loop {
        let m = (rng.next_u64() as u128) * (n as u128);
        let low = m as u64;
        if low >= n.wrapping_neg() % n {
            return (m >> 64) as u64;
        }
    }
}

/// A uniform float in [0, 1) with 53 random bits.
pub fn unit_f64(rng: &mut SimRng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_key_same_stream() {
        let a: Vec<u64> = (0..8)
            .map(|_| 0)
            .scan(stream(18760, "pairing", 0), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..8)
            .map(|_| 0)
            .scan(stream(18760, "pairing", 0), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
    }

    #[test]
    fn different_keys_are_independent() {
        let first = |seed, p: &str, id| stream(seed, p, id).next_u64();
        let base = first(18760, "pairing", 0);
        assert_ne!(base, first(18761, "pairing", 0));
        assert_ne!(base, first(18760, "uniform-start", 0));
        assert_ne!(base, first(18760, "pairing", 1));
        // Crude independence check: two streams' bits agree about half the time.
        let (mut x, mut y) = (stream(1, "a", 0), stream(1, "a", 1));
        let agree: u32 = (0..1000).map(|_| (!(x.next_u64() ^ y.next_u64())).count_ones()).sum();
        let frac = agree as f64 / 64_000.0;
        assert!((0.48..0.52).contains(&frac), "bit agreement {frac}");
    }

    #[test]
    fn below_is_in_range_and_covers_it() {
        let mut r = stream(7, "t", 0);
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            seen[below(&mut r, 7) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| (800..1200).contains(&c)), "{seen:?}");
    }
}
