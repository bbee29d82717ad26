//! Channels: FIFOs of timed values, each with at most one pending event, kept inside the queue.
//!
//! A link direction is the model: packets go in at launch with the time they reach the far end,
//! in that order, and one event per channel stands for its head. The handler of that event takes
//! the head with `EventQueue::receive`, which schedules the next head in the same step (so the pop
//! and the push fuse into one pass over the heap). Because the values live in the queue, which
//! every handler holds, neither end touches the channel owner's entity to move a value.

use super::{EventKind, SourceId};
use crate::ring::Ring;
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
    pub fifo: Ring<(SimTime, T)>,
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

    pub fn get_ref<T: 'static>(&self, key: ChannelKey<T>) -> &[Channel<T>] {
        self.sets
            .get(key.index as usize)
            .and_then(|s| s.downcast_ref::<Vec<Channel<T>>>())
            .expect("channel key from another event queue")
    }
}
