//! The event queue's heap: a 4-ary min-heap of entries keyed by a unique packed `u128`.
//!
//! Four children per node halve the depth of a binary heap (5 levels at 1,000 events instead of
//! 10), and the four children of a node sit in two adjacent cache lines. Removal and replacement
//! of the root move the hole down to a leaf along the smallest children, then sift the incoming
//! entry up from there (Floyd's method): the incoming entry is usually a late one, so it belongs
//! near the leaves and this saves one comparison per level. `replace_root` does a pop and a push
//! in one pass, which is what a handler scheduling one event after its own does. The descent is
//! a chain of loads, so it keeps what it compares in registers: a round never waits on a load
//! the round before chose (docs/performance.md, "The heap's rounds on keys in hand").

/// One pending event. Keys are unique (the source-local sequence sees to that), so the heap order
/// is total. Aligned to its size (32 bytes) so that no entry straddles two cache lines.
#[derive(Clone, Copy, Debug)]
#[repr(align(32))]
pub(crate) struct Entry {
    pub key: u128,
    pub kind: u16,
    pub target: u32,
    pub data: u64,
}

const ARITY: usize = 4;

#[derive(Debug, Default)]
pub(super) struct QuadHeap {
    v: Vec<Entry>,
}

impl QuadHeap {
    pub fn with_capacity(n: usize) -> Self {
        QuadHeap {
            v: Vec::with_capacity(n),
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.v.len()
    }

    #[inline]
    pub fn peek(&self) -> Option<&Entry> {
        self.v.first()
    }

    /// The smallest entry other than the root: the smallest of the root's children.
    #[inline]
    pub fn peek_second(&self) -> Option<&Entry> {
        let end = self.v.len().min(1 + ARITY);
        self.v.get(1..end)?.iter().min_by_key(|e| e.key)
    }

    #[inline]
    pub fn push(&mut self, e: Entry) {
        let hole = self.v.len();
        self.v.push(e);
        self.sift_up(hole, e);
    }

    /// Removes and returns the root (the smallest entry).
    #[inline]
    pub fn pop(&mut self) -> Option<Entry> {
        let root = *self.v.first()?;
        self.remove_root();
        Some(root)
    }

    /// Removes the root (the smallest entry). The caller has already copied it.
    #[inline]
    pub fn remove_root(&mut self) {
        let Some(last) = self.v.pop() else { return };
        if !self.v.is_empty() {
            let (hole, above) = self.hole_to_leaf();
            self.fill(hole, above, last);
        }
    }

    /// Replaces the root with `e`: the same as `remove_root` then `push(e)`, in one pass.
    #[inline(always)]
    pub fn replace_root(&mut self, e: Entry) {
        if self.v.is_empty() {
            self.v.push(e);
            return;
        }
        let (hole, above) = self.hole_to_leaf();
        self.fill(hole, above, e);
    }

    /// Puts `e` into the hole `hole_to_leaf` left, or above it. Usually at it: the entry lifted
    /// last, whose key the descent has in hand, is not larger.
    #[inline(always)]
    fn fill(&mut self, hole: usize, above: u128, e: Entry) {
        if hole == 0 || above <= e.key {
            self.v[hole] = e;
        } else {
            self.sift_up(hole, e);
        }
    }

    /// Moves the hole at the root down to a leaf, lifting the smallest child at each level, and
    /// returns the hole's index and the key of the entry lifted last (now the hole's parent;
    /// meaningless when the hole is the root). The entry at the hole is stale until the caller
    /// fills it.
    #[inline(always)]
    fn hole_to_leaf(&mut self) -> (usize, u128) {
        let v = &mut self.v[..];
        let len = v.len();
        let (mut hole, mut above) = (0, 0);
        loop {
            let first = ARITY * hole + 1;
            let (best, key) = if let Some(kids) = v.get(first..first + ARITY) {
                // All four children present (the common case): a two-round tournament on the
                // keys in hand, so that no round waits on a load chosen by the round before.
                let (k0, k1, k2, k3) = (kids[0].key, kids[1].key, kids[2].key, kids[3].key);
                let (ka, a) = if k1 < k0 { (k1, 1) } else { (k0, 0) };
                let (kb, b) = if k3 < k2 { (k3, 3) } else { (k2, 2) };
                if kb < ka { (first + b, kb) } else { (first + a, ka) }
            } else if first < len {
                let mut best = first;
                for c in first + 1..len {
                    if v[c].key < v[best].key {
                        best = c;
                    }
                }
                (best, v[best].key)
            } else {
                return (hole, above);
            };
            v[hole] = v[best];
            (hole, above) = (best, key);
        }
    }

    /// Puts `e` at `hole` or above it, moving larger parents down.
    #[inline(always)]
    fn sift_up(&mut self, mut hole: usize, e: Entry) {
        let v = &mut self.v[..];
        while hole > 0 {
            let parent = (hole - 1) / ARITY;
            if v[parent].key <= e.key {
                break;
            }
            v[hole] = v[parent];
            hole = parent;
        }
        v[hole] = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: u128) -> Entry {
        Entry {
            key,
            kind: 0,
            target: 0,
            data: key as u64,
        }
    }

    /// Pops everything, in order.
    fn drain(h: &mut QuadHeap) -> Vec<u128> {
        std::iter::from_fn(|| h.pop().map(|e| e.key)).collect()
    }

    #[test]
    fn a_replacement_smaller_than_the_lifted_entry_climbs_above_it() {
        // Root 0, then 10..=29: the descent lifts 10 and then a leaf's 14, and the hole lands
        // under 14. A replacement key of 12 must climb above it, one of 40 stays in the hole.
        for (incoming, root_after) in [(12, 10), (40, 10), (5, 5)] {
            let mut h = QuadHeap::with_capacity(32);
            for k in std::iter::once(0).chain(10..30) {
                h.push(entry(k));
            }
            h.replace_root(entry(incoming));
            assert_eq!(h.peek().map(|e| e.key), Some(root_after));
            let mut want: Vec<u128> = (10..30).chain([incoming]).collect();
            want.sort_unstable();
            assert_eq!(drain(&mut h), want, "replacing the root with {incoming}");
        }
    }

    #[test]
    fn replacements_pushes_and_removals_leave_in_key_order() {
        // Against a sorted list, over heaps of 1 to a few hundred entries, with incoming keys both
        // below and above what the descent lifts.
        let (mut h, mut model) = (QuadHeap::with_capacity(0), Vec::<u128>::new());
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut fresh = 0u128;
        for _ in 0..20_000 {
            let r = next();
            // Keys unique, as the queue's are: a random high part and a counter below it.
            fresh += 1;
            let key = u128::from(r % 1_000) << 64 | fresh;
            match (r >> 32) % 4 {
                0 | 1 if !model.is_empty() => {
                    h.replace_root(entry(key));
                    model.remove(0);
                    model.insert(model.partition_point(|&k| k < key), key);
                }
                2 if model.len() < 300 => {
                    h.push(entry(key));
                    model.insert(model.partition_point(|&k| k < key), key);
                }
                _ => {
                    assert_eq!(h.peek().map(|e| e.key), model.first().copied());
                    h.remove_root();
                    if !model.is_empty() {
                        model.remove(0);
                    }
                }
            }
            assert_eq!(h.len(), model.len());
            assert_eq!(h.peek().map(|e| e.key), model.first().copied());
        }
        assert_eq!(drain(&mut h), model);
    }
}
