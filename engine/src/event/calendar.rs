//! The lookahead's queue: a calendar of time buckets behind the front.
//!
//! With tens of thousands of events pending, a heap's pop walks levels that are not in cache, one
//! dependent miss after another. Here an event is appended to the bucket of its time (about a
//! nanosecond wide), unsorted; when a bucket comes due, it is sorted once and its events leave
//! from the end of the sorted run. Push and pop are O(1) but for the sort of a few dozen entries
//! that are in cache, and the order is the heap's: keys are unique, so sorting by key is total.
//! Events beyond the calendar's year are the caller's (the far heap).

use super::heap::Entry;

/// Bucket width, as a shift of picoseconds: 2^10 ps, about 1 ns, a few dozen events per bucket
/// on the largest fabrics.
pub(super) const SHIFT: u32 = 10;

/// The most buckets a calendar holds: 2^12 buckets of 2^10 ps, a year of 4.2 us, past a 1 us
/// link's arrivals. A shorter year comes round to a bucket while its lines are still cached; the
/// shape was chosen by measurement (docs/performance.md, "A calendar under the front").
pub(super) const MAX_BUCKETS: usize = 1 << 12;

/// The most entries an emptied bucket keeps room for: a burst's room is given back.
const BUCKET_KEEP: usize = 256;

/// A bucket of at most 2^`INDEX_BITS` entries is sorted by key and index packed in one `u128`.
const INDEX_BITS: u32 = 13;

#[derive(Debug)]
pub(super) struct Calendar {
    /// Bucket `i % len` holds the events of bucket number `i`, for `at < i < at + len`, unsorted.
    buckets: Vec<Vec<Entry>>,
    mask: u64,
    shift: u32,
    /// The events of bucket `at` and before, sorted with the smallest key last.
    due: Vec<Entry>,
    /// The number of the bucket `due` holds.
    at: u64,
    /// Events in `buckets`.
    waiting: usize,
    /// `next_bucket`'s scratch: a bucket's keys and indices, packed.
    order: Vec<u128>,
}

impl Calendar {
    /// A calendar of `buckets` (a power of two) buckets of 2^`shift` ps each.
    pub fn new(shift: u32, buckets: usize) -> Self {
        assert!(buckets.is_power_of_two() && 64 + shift + INDEX_BITS <= 128);
        Calendar {
            buckets: (0..buckets).map(|_| Vec::new()).collect(),
            mask: buckets as u64 - 1,
            shift,
            due: Vec::new(),
            at: 0,
            waiting: 0,
            order: Vec::new(),
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.due.len() + self.waiting
    }

    /// Adds `e`, or gives it back if it is beyond the calendar's year.
    #[inline]
    pub fn push(&mut self, e: Entry) -> Result<(), Entry> {
        let i = ((e.key >> 64) as u64) >> self.shift;
        if i <= self.at || self.len() == 0 {
            if self.len() == 0 {
                self.at = i;
            }
            // Into the sorted run, before every larger key.
            let at = self.due.partition_point(|d| d.key > e.key);
            self.due.insert(at, e);
            return Ok(());
        }
        if i - self.at > self.mask {
            return Err(e);
        }
        self.buckets[(i & self.mask) as usize].push(e);
        self.waiting += 1;
        Ok(())
    }

    /// The smallest entry, moving on to the next bucket that holds any if the run is empty.
    #[inline]
    pub fn peek(&mut self) -> Option<&Entry> {
        if self.due.is_empty() && self.waiting > 0 {
            self.next_bucket();
        }
        self.due.last()
    }

    /// Removes and returns the smallest entry.
    #[inline]
    pub fn pop(&mut self) -> Option<Entry> {
        self.peek()?;
        self.due.pop()
    }

    /// Sorts the next bucket that holds events into the run, which is empty.
    #[inline(never)]
    fn next_bucket(&mut self) {
        loop {
            self.at += 1;
            let b = &mut self.buckets[(self.at & self.mask) as usize];
            if !b.is_empty() {
                // Copied, not swapped: a swap would pass a burst's large buffer on from bucket to
                // bucket until every bucket had one.
                if b.len() <= 1 << INDEX_BITS {
                    // The keys here share their time's bits above `shift`. Without them, a key
                    // and its entry's index fit one integer: a sort moves 16 bytes, not 32.
                    let low = (1u128 << (64 + self.shift)) - 1;
                    self.order.clear();
                    self.order.extend(
                        b.iter()
                            .enumerate()
                            .map(|(i, e)| (e.key & low) << INDEX_BITS | i as u128),
                    );
                    self.order.sort_unstable();
                    let index = (1u128 << INDEX_BITS) - 1;
                    self.due
                        .extend(self.order.iter().rev().map(|&o| b[(o & index) as usize]));
                } else {
                    self.due.extend_from_slice(b);
                    self.due.sort_unstable_by_key(|e| std::cmp::Reverse(e.key));
                }
                self.waiting -= b.len();
                b.clear();
                if b.capacity() > BUCKET_KEEP {
                    b.shrink_to(BUCKET_KEEP);
                }
                return;
            }
        }
    }

    /// The smallest key, without moving on (for `peek_time` and checks).
    pub fn min_key(&self) -> Option<u128> {
        if let Some(d) = self.due.last() {
            return Some(d.key);
        }
        if self.waiting == 0 {
            return None;
        }
        (1..=self.mask + 1)
            .map(|k| &self.buckets[((self.at + k) & self.mask) as usize])
            .find(|b| !b.is_empty())
            .and_then(|b| b.iter().map(|e| e.key).min())
    }

    /// Removes every entry, in no order.
    pub fn drain(&mut self) -> Vec<Entry> {
        let mut out = std::mem::take(&mut self.due);
        for b in &mut self.buckets {
            out.append(b);
        }
        self.waiting = 0;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(time: u64, low: u64) -> Entry {
        Entry {
            key: (time as u128) << 64 | low as u128,
            kind: 0,
            target: 0,
            data: low,
        }
    }

    /// A bucket of `n` entries (times within one bucket, low halves spread) leaves in key order,
    /// whether it is sorted packed (up to 2^`INDEX_BITS` entries) or as entries.
    fn one_bucket_leaves_in_order(n: u64) {
        let mut cal = Calendar::new(SHIFT, 16);
        cal.push(entry(0, 0)).unwrap();
        let mut keys = Vec::new();
        for i in 0..n {
            // Times 1024..2047 ps: bucket 1. Low halves in a scrambled order, with repeats of
            // time so that they decide.
            let e = entry(1024 + (i * 7919) % 1024, (i * 2_654_435_761) % 1_000_003);
            keys.push(e.key);
            cal.push(e).unwrap();
        }
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len() as u64, n, "the test's keys are unique");
        assert_eq!(cal.pop().map(|e| e.key), Some(0));
        let popped: Vec<u128> = std::iter::from_fn(|| cal.pop().map(|e| e.key)).collect();
        assert_eq!(popped, keys);
    }

    #[test]
    fn a_bucket_sorted_packed_leaves_in_key_order() {
        one_bucket_leaves_in_order(1000);
        one_bucket_leaves_in_order(1 << INDEX_BITS);
    }

    #[test]
    fn a_bucket_too_large_to_pack_leaves_in_key_order() {
        one_bucket_leaves_in_order((1 << INDEX_BITS) + 1);
    }
}
