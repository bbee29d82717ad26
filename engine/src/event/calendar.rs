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
}

impl Calendar {
    /// A calendar of `buckets` (a power of two) buckets of 2^`shift` ps each.
    pub fn new(shift: u32, buckets: usize) -> Self {
        assert!(buckets.is_power_of_two());
        Calendar {
            buckets: (0..buckets).map(|_| Vec::new()).collect(),
            mask: buckets as u64 - 1,
            shift,
            due: Vec::new(),
            at: 0,
            waiting: 0,
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
                self.due.extend_from_slice(b);
                self.waiting -= b.len();
                b.clear();
                if b.capacity() > BUCKET_KEEP {
                    b.shrink_to(BUCKET_KEEP);
                }
                self.due.sort_unstable_by_key(|e| std::cmp::Reverse(e.key));
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
