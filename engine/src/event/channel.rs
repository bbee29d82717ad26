//! Channels: FIFOs of timed values, each with at most one pending event, kept inside the queue.
//!
//! A link direction is the model: packets go in at launch with the time they reach the far end,
//! in that order, and one event per channel stands for its head. The handler of that event takes
//! the head with `EventQueue::receive`, which schedules the next head in the same step (so the pop
//! and the push fuse into one pass over the heap). Because the values live in the queue, which
//! every handler holds, neither end touches the channel owner's entity to move a value.

use super::{EventKind, SourceId};
use crate::time::SimTime;
use std::any::Any;
use std::fmt;
use std::marker::PhantomData;

/// Names one value type's channels in one queue.
pub struct ChannelKey<T> {
    index: u32,
    _type: PhantomData<fn() -> T>,
}

impl<T> Clone for ChannelKey<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for ChannelKey<T> {}
impl<T> fmt::Debug for ChannelKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChannelKey({})", self.index)
    }
}

/// One channel: its values in arrival order, and the event that stands for its head.
pub(super) struct Channel<T> {
    pub fifo: Ring<T>,
    pub pending: bool,
    pub source: SourceId,
    pub kind: EventKind,
    pub target: u32,
}

/// The channels of every registered value type.
#[derive(Default)]
pub(super) struct ChannelSets {
    sets: Vec<Box<dyn Any + Send + Sync>>,
}

impl fmt::Debug for ChannelSets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChannelSets({} types)", self.sets.len())
    }
}

impl ChannelSets {
    pub fn add_type<T: Copy + Default + Send + Sync + 'static>(&mut self) -> ChannelKey<T> {
        self.sets.push(Box::new(Vec::<Channel<T>>::new()));
        ChannelKey {
            index: (self.sets.len() - 1) as u32,
            _type: PhantomData,
        }
    }

    #[inline]
    pub fn get<T: 'static>(&mut self, key: ChannelKey<T>) -> &mut Vec<Channel<T>> {
        self.sets
            .get_mut(key.index as usize)
            .and_then(|s| s.downcast_mut::<Vec<Channel<T>>>())
            .expect("channel key from another event queue")
    }
}

/// A channel's FIFO: timed values on a ring whose size is a power of two, so an index wraps with
/// one mask. Two of its operations run at every hop of every packet; `VecDeque`'s general ones
/// cost about twice the instructions here.
#[derive(Debug)]
pub(super) struct Ring<T> {
    buf: Vec<(SimTime, T)>,
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
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn push_back(&mut self, v: (SimTime, T)) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let i = (self.head + self.len) & (self.buf.len() - 1);
        self.buf[i] = v;
        self.len += 1;
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<(SimTime, T)> {
        if self.len == 0 {
            return None;
        }
        let v = self.buf[self.head];
        self.head = (self.head + 1) & (self.buf.len() - 1);
        self.len -= 1;
        Some(v)
    }

    /// Time of the first value.
    #[inline]
    pub fn front_time(&self) -> Option<SimTime> {
        (self.len > 0).then(|| self.buf[self.head].0)
    }

    /// Time of the last value.
    pub fn back_time(&self) -> Option<SimTime> {
        (self.len > 0).then(|| self.buf[(self.head + self.len - 1) & (self.buf.len() - 1)].0)
    }

    /// Doubles the ring (4 to start), the values moved to its front in order.
    #[cold]
    fn grow(&mut self) {
        let cap = (self.buf.len() * 2).max(4);
        let mut buf = Vec::with_capacity(cap);
        for i in 0..self.len {
            buf.push(self.buf[(self.head + i) & (self.buf.len() - 1)]);
        }
        buf.resize(cap, (SimTime::ZERO, T::default()));
        self.buf = buf;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_is_a_fifo_through_growth_and_wrap_around() {
        // Pushes and pops interleaved so that the head walks round the ring and it grows while
        // wrapped; against a VecDeque.
        let mut ring = Ring::<u64>::default();
        let mut model = std::collections::VecDeque::new();
        let mut next = 0u64;
        for round in 0..200u64 {
            for _ in 0..(round * 7 % 5 + 1) {
                ring.push_back((SimTime(next), next));
                model.push_back((SimTime(next), next));
                next += 1;
            }
            for _ in 0..(round * 3 % 4) {
                assert_eq!(ring.pop_front(), model.pop_front());
            }
            assert_eq!(ring.len(), model.len());
            assert_eq!(ring.front_time(), model.front().map(|v| v.0));
            assert_eq!(ring.back_time(), model.back().map(|v| v.0));
        }
        while let Some(v) = model.pop_front() {
            assert_eq!(ring.pop_front(), Some(v));
        }
        assert_eq!((ring.pop_front(), ring.front_time(), ring.len()), (None, None, 0));
    }
}
