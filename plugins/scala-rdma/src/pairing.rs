//! Pairing: which Initiator talks to which Responder, by the spec's three steps.
//!
//! 1. Each Initiator in turn (in node-id order) takes a Responder no other Initiator has yet,
//!    drawn uniformly among the untaken ones.
//! 2. Once every Responder has an Initiator, each further Initiator draws any Responder.
//! 3. Responders left over (more Responders than Initiators) each draw an Initiator, in node-id
//!    order.
//!
//! The draws come from one seeded stream, so the same configuration and `RandomSeed` give the same
//! pairs; the caller passes `engine::rng::stream(seed, "pairing", app_index)`. Each pair is on two
//! different hosts by construction, since placement gives every host a single component.

use engine::rng::{SimRng, below};

/// The `(initiator, responder)` node-id pairs, sorted by initiator then responder.
///
/// Inputs need not be sorted (the steps visit them in node-id order regardless); a node id given
/// twice counts once. With no Initiator or no Responder there is nothing to pair and the result is
/// empty (placement gives each component at least one host, so that does not arise in a run).
pub fn pair(initiators: &[u32], responders: &[u32], rng: &mut SimRng) -> Vec<(u32, u32)> {
    let initiators = sorted_unique(initiators);
    let responders = sorted_unique(responders);
    if initiators.is_empty() || responders.is_empty() {
        return Vec::new();
    }

    // Untaken Responders, kept in node-id order so a draw's index has one meaning.
    let mut untaken = responders.clone();
    let mut pairs = Vec::with_capacity(initiators.len().max(responders.len()));
    for &initiator in &initiators {
        let responder = if untaken.is_empty() {
            // Step 2: every Responder is taken; any of them.
            responders[draw(rng, responders.len())]
        } else {
            // Step 1: a Responder nobody has yet.
            untaken.remove(draw(rng, untaken.len()))
        };
        pairs.push((initiator, responder));
    }
    // Step 3: the Responders no Initiator took.
    for responder in untaken {
        pairs.push((initiators[draw(rng, initiators.len())], responder));
    }
    pairs.sort_unstable();
    pairs
}

/// A uniform index in `0..n`, n > 0.
fn draw(rng: &mut SimRng, n: usize) -> usize {
    below(rng, n as u64) as usize
}

fn sorted_unique(ids: &[u32]) -> Vec<u32> {
    let mut v = ids.to_vec();
    v.sort_unstable();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::rng::stream;
    use std::collections::{BTreeMap, BTreeSet};

    fn pairing(seed: u64, initiators: &[u32], responders: &[u32]) -> Vec<(u32, u32)> {
        pair(initiators, responders, &mut stream(seed, "pairing", 0))
    }

    /// The spec's placements of 16 hosts: Initiators on the first nodes, Responders after.
    fn split(initiators: u32) -> (Vec<u32>, Vec<u32>) {
        ((0..initiators).collect(), (initiators..16).collect())
    }

    #[test]
    fn eight_and_eight_make_eight_pairs_to_different_responders() {
        let (i, r) = split(8);
        let pairs = pairing(18760, &i, &r);
        assert_eq!(pairs.len(), 8);
        assert_eq!(pairs.iter().map(|p| p.0).collect::<Vec<_>>(), i);
        let taken: BTreeSet<u32> = pairs.iter().map(|p| p.1).collect();
        assert_eq!(taken, r.iter().copied().collect());
    }

    #[test]
    fn fifteen_initiators_share_the_one_responder() {
        let (i, r) = split(15);
        let pairs = pairing(18760, &i, &r);
        assert_eq!(pairs, i.iter().map(|&n| (n, 15)).collect::<Vec<_>>());
    }

    #[test]
    fn four_initiators_cover_twelve_responders() {
        let (i, r) = split(4);
        for seed in [18760, 1, 2, 3] {
            let pairs = pairing(seed, &i, &r);
            // 4 pairs in step 1, one for each of the other 8 Responders in step 3.
            assert_eq!(pairs.len(), 12);
            let mut per_responder: BTreeMap<u32, usize> = BTreeMap::new();
            let mut per_initiator: BTreeMap<u32, usize> = BTreeMap::new();
            for &(a, b) in &pairs {
                *per_responder.entry(b).or_default() += 1;
                *per_initiator.entry(a).or_default() += 1;
            }
            assert_eq!(per_responder.keys().copied().collect::<Vec<_>>(), r);
            assert!(per_responder.values().all(|&n| n == 1), "{per_responder:?}");
            assert_eq!(per_initiator.keys().copied().collect::<Vec<_>>(), i);
            assert_eq!(per_initiator.values().sum::<usize>(), 12);
            assert!(pairs.windows(2).all(|w| w[0] < w[1]), "sorted and distinct: {pairs:?}");
        }
    }

    #[test]
    fn same_seed_same_pairs_other_seed_other_pairs() {
        let (i, r) = split(8);
        assert_eq!(pairing(18760, &i, &r), pairing(18760, &i, &r));
        // 8! = 40,320 orderings: two seeds agreeing would be a 1-in-40,320 coincidence.
        assert_ne!(pairing(18760, &i, &r), pairing(18761, &i, &r));
        // The input order does not matter, only the node ids.
        let rev: Vec<u32> = r.iter().rev().copied().collect();
        assert_eq!(pairing(18760, &i, &rev), pairing(18760, &i, &r));
    }

    #[test]
    fn step_one_draws_uniformly() {
        // Over 4,000 seeds, initiator 0's responder is each of the 8 about 500 times. The count
        // is binomial(4000, 1/8): standard deviation sqrt(4000 x 1/8 x 7/8) = 20.9, so +-100 is
        // nearly 5 sigma.
        let (i, r) = split(8);
        let mut seen: BTreeMap<u32, u32> = BTreeMap::new();
        for seed in 0..4000 {
            let pairs = pairing(seed, &i, &r);
            *seen.entry(pairs[0].1).or_default() += 1;
        }
        assert_eq!(seen.len(), 8, "{seen:?}");
        assert!(seen.values().all(|&n| (400..=600).contains(&n)), "{seen:?}");
    }

    #[test]
    fn step_two_and_three_draw_uniformly_too() {
        // 3 Initiators, 1 Responder: never anything but that Responder.
        assert_eq!(pairing(5, &[0, 1, 2], &[9]), vec![(0, 9), (1, 9), (2, 9)]);
        // 1 Initiator, 2 Responders: it takes one in step 1 and the other in step 3.
        assert_eq!(pairing(5, &[4], &[7, 9]), vec![(4, 7), (4, 9)]);
        // 2 Initiators, 6 Responders: the 4 leftovers go to initiator 0 half the time.
        let mut to_zero = 0;
        for seed in 0..1000 {
            let pairs = pairing(seed, &[0, 1], &[2, 3, 4, 5, 6, 7]);
            to_zero += pairs.iter().filter(|p| p.0 == 0).count() - 1;
        }
        // 4,000 draws at 1/2: sd sqrt(4000/4) = 31.6; +-160 is 5 sigma.
        assert!((1840..=2160).contains(&to_zero), "{to_zero}");
    }

    #[test]
    fn nothing_to_pair() {
        assert!(pairing(1, &[], &[1, 2]).is_empty());
        assert!(pairing(1, &[1, 2], &[]).is_empty());
    }
}
