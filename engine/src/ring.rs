//! A FIFO on a ring whose size is a power of two, so an index wraps with one mask: the engine's
//! channels and the RoCE NIC's per-packet queues push and pop at every hop of every packet, and
//! `VecDeque`'s general operations cost about twice the instructions there (callgrind). Values
//! are `Copy + Default`: the free slots hold defaults, and nothing needs dropping.

/// A first-in first-out queue of `Copy` values.
#[derive(Debug, Clone)]
pub struct Ring<T> {
    buf: Vec<T>,
    head: usize,
    len: usize,
}

impl<T> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            buf: Vec::new(),
            head: 0,
            len: 0,
        }
    }
}

impl<T: Copy + Default> Ring<T> {
    /// The number of values queued.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Queues `v` at the back, doubling the ring when full.
    #[inline]
    pub fn push_back(&mut self, v: T) {
        // A loop, not an `if`: after it the compiler knows the ring is not empty, so the masked
        // index below needs no bounds check.
        while self.len >= self.buf.len() {
            self.grow();
        }
        let i = (self.head + self.len) & (self.buf.len() - 1);
        self.buf[i] = v;
        self.len += 1;
    }

    /// Takes the value at the front, if any.
    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = self.buf[self.head];
        self.head = (self.head + 1) & (self.buf.len() - 1);
        self.len -= 1;
        Some(v)
    }

    /// The value at the front, if any.
    #[inline]
    pub fn front(&self) -> Option<&T> {
        (self.len > 0).then(|| &self.buf[self.head])
    }

    /// The `i`-th value from the front, if there are that many.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        (i < self.len).then(|| &self.buf[(self.head + i) & (self.buf.len() - 1)])
    }

    /// The slot the next `push_back` writes, with the value it held, if the ring has room: for
    /// warming that write ahead (`prefetch::prefetch_write`).
    #[inline]
    pub fn next_slot(&self) -> Option<&T> {
        (self.len < self.buf.len()).then(|| &self.buf[(self.head + self.len) & (self.buf.len() - 1)])
    }

    /// The value at the back, if any.
    pub fn back(&self) -> Option<&T> {
        (self.len > 0).then(|| &self.buf[(self.head + self.len - 1) & (self.buf.len() - 1)])
    }

    /// Empties the ring, keeping its capacity.
    pub fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }

    /// The values, front first.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        let mask = self.buf.len().wrapping_sub(1);
        (0..self.len).map(move |i| &self.buf[(self.head + i) & mask])
    }

    /// Doubles the ring (4 to start), the values moved to its front in order.
    #[cold]
    fn grow(&mut self) {
        let cap = (self.buf.len() * 2).max(4);
        let mut buf = Vec::with_capacity(cap);
        buf.extend(self.iter().copied());
        buf.resize(cap, T::default());
        self.buf = buf;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn the_ring_is_a_fifo_through_growth_and_wrap_around() {
        // Pushes and pops interleaved so that the head walks round the ring and it grows while
        // wrapped; against a VecDeque.
        let mut ring = Ring::<u64>::default();
        let mut model = VecDeque::new();
        let mut next = 0u64;
        for round in 0..200u64 {
            for _ in 0..(round * 7 % 5 + 1) {
                ring.push_back(next);
                model.push_back(next);
                next += 1;
            }
            for _ in 0..(round * 3 % 4) {
                assert_eq!(ring.pop_front(), model.pop_front());
            }
            assert_eq!((ring.len(), ring.is_empty()), (model.len(), model.is_empty()));
            assert_eq!(ring.front(), model.front());
            assert_eq!(ring.back(), model.back());
            assert!(ring.iter().eq(model.iter()));
            if round == 150 {
                ring.clear();
                model.clear();
            }
        }
        while let Some(v) = model.pop_front() {
            assert_eq!(ring.pop_front(), Some(v));
        }
        assert_eq!((ring.pop_front(), ring.front(), ring.len()), (None, None, 0));
    }

    #[test]
    fn the_next_slot_is_where_the_next_push_lands_and_none_when_full() {
        // Warming prefetches `next_slot` to be written: it must be the slot `push_back` fills,
        // wrapped or not, and there must be none when the push would grow the ring (a new buffer).
        let mut ring = Ring::<u64>::default();
        for round in 0..300u64 {
            match ring.next_slot().map(|s| s as *const u64) {
                Some(slot) => {
                    ring.push_back(round);
                    assert_eq!(ring.back().map(|b| b as *const u64), Some(slot), "round {round}");
                }
                None => {
                    assert_eq!(ring.len(), ring.buf.len(), "no slot only when full");
                    ring.push_back(round);
                }
            }
            if round % 3 == 0 {
                ring.pop_front();
            }
        }
    }
}
