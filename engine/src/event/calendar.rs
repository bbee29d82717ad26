//! The lookahead's queue: a calendar of time buckets behind the front.
//!
//! With tens of thousands of events pending, a heap's pop walks levels that are not in cache, one
//! dependent miss after another. Here an event is appended to the bucket of its time (about a
//! nanosecond wide), unsorted; when a bucket comes due, it is sorted once and its events leave
//! from the end of the sorted run. Push and pop are O(1) but for the sort of a few dozen entries
//! that are in cache, and the order is the heap's: keys are unique, so sorting by key is total.
//! Events beyond the calendar's year are the caller's (the far heap).
//!
//! A bucket is a list of chunks taken from one free list, last freed first: the chunks a push
//! writes are those the last bucket sorted has just read, still cached, where a bucket of its
//! own would be written a year after it was last read (docs/performance.md). The chunks of the
//! busiest moment stay for the run.

use super::heap::Entry;

/// Bucket width, as a shift of picoseconds: 2^10 ps, about 1 ns, a few dozen events per bucket
/// on the largest fabrics.
pub(super) const SHIFT: u32 = 10;

/// The most buckets a calendar holds: 2^12 buckets of 2^10 ps, a year of 4.2 us, past a 1 us
/// link's arrivals. A shorter year comes round to a bucket while its lines are still cached; the
/// shape was chosen by measurement (docs/performance.md, "A calendar under the front").
pub(super) const MAX_BUCKETS: usize = 1 << 12;

/// Entries per chunk: four cache lines.
const CHUNK: usize = 8;

/// No chunk.
const NONE: u32 = u32::MAX;

/// A bucket of at most 2^`INDEX_BITS` entries is sorted by key and index packed in one `u64`.
const INDEX_BITS: u32 = 13;

/// The source's bits at the top of a key's low half (`EventQueue::schedule`'s layout).
const SOURCE_BITS: u32 = 64 - super::SEQ_BITS;

const NO_ENTRY: Entry = Entry {
    key: 0,
    kind: 0,
    target: 0,
    data: 0,
};

/// A bucket's chunks: `len` entries in the chunks from `first` on (each chunk's `next`) to `last`.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    first: u32,
    last: u32,
    len: u32,
}

const EMPTY: Bucket = Bucket {
    first: NONE,
    last: NONE,
    len: 0,
};

#[derive(Debug)]
pub(super) struct Calendar {
    /// Bucket `i % len` holds the events of bucket number `i`, for `at < i < at + len`, unsorted.
    buckets: Vec<Bucket>,
    /// Every chunk, by number: a bucket's or free.
    chunks: Vec<[Entry; CHUNK]>,
    /// The chunk after each in its bucket or in the free list.
    next: Vec<u32>,
    /// The first free chunk: the last freed.
    free: u32,
    mask: u64,
    shift: u32,
    /// The events of bucket `at` and before, sorted with the smallest key last.
    due: Vec<Entry>,
    /// The number of the bucket `due` holds.
    at: u64,
    /// Events in `buckets`.
    waiting: usize,
    /// `next_bucket`'s scratch: a bucket's entries in one slice.
    taken: Vec<Entry>,
    /// `next_bucket`'s scratch: a bucket's keys and indices, packed.
    order: Vec<u64>,
}

impl Calendar {
    /// A calendar of `buckets` (a power of two) buckets of 2^`shift` ps each.
    pub fn new(shift: u32, buckets: usize) -> Self {
        assert!(buckets.is_power_of_two() && shift + SOURCE_BITS + INDEX_BITS < 64);
        Calendar {
            buckets: vec![EMPTY; buckets],
            chunks: Vec::new(),
            next: Vec::new(),
            free: NONE,
            mask: buckets as u64 - 1,
            shift,
            due: Vec::new(),
            at: 0,
            waiting: 0,
            taken: Vec::new(),
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
        self.append((i & self.mask) as usize, e);
        self.waiting += 1;
        Ok(())
    }

    /// Appends `e` to bucket `at`, starting a chunk if its last is full.
    #[inline]
    fn append(&mut self, at: usize, e: Entry) {
        let mut b = self.buckets[at];
        let slot = b.len as usize % CHUNK;
        if slot == 0 {
            let c = self.new_chunk();
            if b.len == 0 {
                b.first = c;
            } else {
                self.next[b.last as usize] = c;
            }
            b.last = c;
        }
        self.chunks[b.last as usize][slot] = e;
        b.len += 1;
        self.buckets[at] = b;
    }

    /// A chunk for a bucket: the last freed, or a new one.
    #[inline]
    fn new_chunk(&mut self) -> u32 {
        if self.free != NONE {
            let c = self.free;
            self.free = self.next[c as usize];
            return c;
        }
        self.chunks.push([NO_ENTRY; CHUNK]);
        self.next.push(NONE);
        (self.chunks.len() - 1) as u32
    }

    /// Moves bucket `at`'s entries to `taken`, in the order they came, and frees its chunks.
    fn take(&mut self, at: usize) {
        let b = std::mem::replace(&mut self.buckets[at], EMPTY);
        self.taken.clear();
        let (mut c, mut left) = (b.first, b.len as usize);
        while left > 0 {
            let n = left.min(CHUNK);
            self.taken.extend_from_slice(&self.chunks[c as usize][..n]);
            left -= n;
            if left > 0 {
                c = self.next[c as usize];
            }
        }
        self.next[b.last as usize] = self.free;
        self.free = b.first;
        self.waiting -= b.len as usize;
    }

    /// Starts loading the next bucket's chunks: written about a link's delay before they come
    /// due, they have left the caches by then, and its sort would wait on each. Hints only.
    #[inline]
    fn warm_next(&self) {
        let b = self.buckets[((self.at + 1) & self.mask) as usize];
        let mut c = b.first;
        for i in 0..(b.len as usize).div_ceil(CHUNK) {
            if i > 0 {
                c = self.next[c as usize];
            }
            crate::prefetch::prefetch_lines(&self.chunks[c as usize]);
        }
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
            let at = (self.at & self.mask) as usize;
            if self.buckets[at].len > 0 {
                self.take(at);
                if self.taken.len() > 1 << INDEX_BITS || !self.sort_packed() {
                    self.due.clear();
                    self.due.extend_from_slice(&self.taken);
                    self.due.sort_unstable_by_key(|e| std::cmp::Reverse(e.key));
                }
                self.warm_next();
                return;
            }
        }
    }

    /// Sorts `taken` into the run (which is empty) by one `u64` per entry: the key's time
    /// within the bucket, its source, the low bits of its sequence number and the entry's
    /// index, which sorts in fewer instructions than the whole key. Two entries of one time and
    /// source whose numbers differ above those low bits (rare: a source's count crossing a
    /// multiple of 2^17 within one bucket) may come out of order, so the run is checked as it
    /// is filled; `false` says it must be sorted by whole keys instead.
    #[inline]
    fn sort_packed(&mut self) -> bool {
        let b = &self.taken;
        let shift = self.shift;
        let seq_bits = 64 - shift - SOURCE_BITS - INDEX_BITS;
        let time_mask = (1u64 << shift) - 1;
        let seq_mask = (1u64 << seq_bits) - 1;
        self.order.clear();
        self.order.extend(b.iter().enumerate().map(|(i, e)| {
            let time = ((e.key >> 64) as u64) & time_mask;
            let low = e.key as u64;
            let source = low >> (64 - SOURCE_BITS);
            time << (64 - shift) | source << (seq_bits + INDEX_BITS) | (low & seq_mask) << INDEX_BITS | i as u64
        }));
        self.order.sort_unstable();
        let index = (1u64 << INDEX_BITS) - 1;
        let mut after = u128::MAX;
        let mut sorted = true;
        self.due.extend(self.order.iter().rev().map(|&o| {
            let e = b[(o & index) as usize];
            sorted &= e.key < after;
            after = e.key;
            e
        }));
        sorted
    }

    /// The entries of bucket `at`, in the order they came.
    fn entries(&self, at: usize) -> impl Iterator<Item = &Entry> {
        let b = self.buckets[at];
        let mut c = b.first;
        (0..b.len as usize).map(move |i| {
            if i > 0 && i % CHUNK == 0 {
                c = self.next[c as usize];
            }
            &self.chunks[c as usize][i % CHUNK]
        })
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
            .map(|k| ((self.at + k) & self.mask) as usize)
            .find(|&at| self.buckets[at].len > 0)
            .and_then(|at| self.entries(at).map(|e| e.key).min())
    }

    /// Removes every entry, in no order.
    pub fn drain(&mut self) -> Vec<Entry> {
        let mut out = std::mem::take(&mut self.due);
        for at in 0..self.buckets.len() {
            if self.buckets[at].len > 0 {
                self.take(at);
                out.append(&mut self.taken);
            }
        }
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

    /// Entries as `EventQueue::schedule` keys them: time, then source, then sequence number.
    fn scheduled(time: u64, source: u64, seq: u64) -> Entry {
        entry(time, source << super::super::SEQ_BITS | seq)
    }

    /// Pops everything after the marker at time 0 and checks it against the keys sorted.
    fn leaves_in_key_order(cal: &mut Calendar, mut keys: Vec<u128>) {
        keys.sort_unstable();
        assert_eq!(cal.pop().map(|e| e.key), Some(0));
        let popped: Vec<u128> = std::iter::from_fn(|| cal.pop().map(|e| e.key)).collect();
        assert_eq!(popped, keys);
    }

    #[test]
    fn a_bucket_of_many_sources_and_equal_times_leaves_in_key_order() {
        let mut cal = Calendar::new(SHIFT, 16);
        cal.push(entry(0, 0)).unwrap();
        let mut keys = Vec::new();
        // 40 sources, each scheduling 30 events into bucket 1 at a few equal times, their
        // numbers large (a long run) and interleaved across sources.
        for n in 0..30u64 {
            for source in (0..40u64).rev() {
                let e = scheduled(1024 + (n * 37 + source) % 4 * 100, source * 977 % 40, 5_000_000 + n);
                keys.push(e.key);
                cal.push(e).unwrap();
            }
        }
        leaves_in_key_order(&mut cal, keys);
    }

    #[test]
    fn numbers_that_differ_only_above_the_packed_bits_still_leave_in_key_order() {
        // One source at one time: numbers 2^17 - 1 and 2^17 differ in the bits the packed sort
        // drops (with 2^10 ps buckets it keeps the low 17), so the packed sort puts 2^17 (low
        // bits 0) first and the check must catch it. Pushed larger first, as a front's overflow
        // would push them.
        let mut cal = Calendar::new(SHIFT, 16);
        cal.push(entry(0, 0)).unwrap();
        let keys: Vec<u128> = [(1 << 17) + 3, 1 << 17, (1 << 17) - 1, 5]
            .into_iter()
            .map(|seq| {
                let e = scheduled(1500, 7, seq);
                cal.push(e).unwrap();
                e.key
            })
            .collect();
        leaves_in_key_order(&mut cal, keys);
    }

    #[test]
    fn chunks_freed_by_one_bucket_serve_the_next_and_the_order_holds() {
        // Pushes and pops interleaved over many years of a small calendar, with bursts that give
        // some buckets several chunks; chunks freed and taken again; against a sorted model.
        let mut cal = Calendar::new(4, 64);
        let mut model = std::collections::BTreeSet::new();
        let (mut now, mut seq, mut x, mut longest) = (0u64, 0u64, 12345u64, 0);
        for round in 0..20_000u64 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let bursty = round % 1000 < 100;
            for _ in 0..[0, 1, 1, 2][(x >> 62) as usize] + u64::from(bursty) * 3 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let e = scheduled(now + (x >> 33) % 900, (x >> 20) % 5, seq);
                seq += 1;
                if let Err(e) = cal.push(e) {
                    panic!("{} is within the year", e.key >> 64);
                }
                model.insert(e.key);
            }
            longest = cal
                .buckets
                .iter()
                .map(|b| b.len as usize)
                .max()
                .unwrap_or(0)
                .max(longest);
            // Two pops a round after each burst: the calendar empties as often as it fills.
            for _ in 0..1 + usize::from(round % 1000 >= 500 && round % 1000 < 800) {
                if let Some(e) = cal.pop() {
                    assert_eq!(Some(e.key), model.pop_first());
                    now = (e.key >> 64) as u64;
                }
            }
        }
        assert!(
            longest > 2 * CHUNK,
            "a bucket of several chunks, at most {longest} entries"
        );
        assert!(cal.chunks.len() * CHUNK < seq as usize / 4, "chunks are taken again");
        while let Some(e) = cal.pop() {
            assert_eq!(Some(e.key), model.pop_first());
        }
        assert!(model.is_empty());
    }
}
