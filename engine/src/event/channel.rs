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
use std::sync::atomic::{AtomicU32, Ordering};

/// Names one value type's channels in one queue.
pub struct ChannelKey<T> {
    index: u32,
    /// The `ChannelSets::id` of the queue that made it.
    queue: u32,
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

/// The most value types one queue's channels may carry (the fabric registers one: packets).
const MAX_TYPES: usize = 4;

/// The channels of every registered value type.
///
/// `owned` holds each type's `Vec<Channel<T>>` (and drops it); `raw` holds where that vector's
/// channels are, so that a send or receive reaches a channel in one load from the queue instead
/// of three (the boxed vector, its type check through the vtable, its buffer): on the hot path
/// every dependent load is latency that the next event waits for.
pub(super) struct ChannelSets {
    /// Unique among the queues of this process: a key names its queue by it, so a key used with
    /// another queue is refused rather than read as another type's channels.
    id: u32,
    owned: Vec<Box<dyn Any + Send + Sync>>,
    raw: [RawSet; MAX_TYPES],
}

/// One type's channels, as `ChannelSets::get` reaches them: the buffer and length of the
/// `Vec<Channel<T>>` in `owned` at the same index.
#[derive(Clone, Copy)]
struct RawSet {
    ptr: *mut u8,
    len: usize,
}

impl Default for ChannelSets {
    fn default() -> Self {
        static NEXT_ID: AtomicU32 = AtomicU32::new(0);
        ChannelSets {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            owned: Vec::new(),
            raw: [RawSet {
                ptr: std::ptr::null_mut(),
                len: 0,
            }; MAX_TYPES],
        }
    }
}

// SAFETY: `raw` only points into the vectors `owned` holds, whose element types are `Send +
// Sync` (`add_type`'s bounds); the pointers are used only through `&self` / `&mut self`.
#[allow(unsafe_code)]
unsafe impl Send for ChannelSets {}
// SAFETY: as for `Send`.
#[allow(unsafe_code)]
unsafe impl Sync for ChannelSets {}

impl fmt::Debug for ChannelSets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChannelSets({} types)", self.owned.len())
    }
}

#[cold]
#[inline(never)]
fn another_queue() -> ! {
    panic!("channel key from another event queue")
}

impl ChannelSets {
    pub fn add_type<T: Copy + Default + Send + Sync + 'static>(&mut self) -> ChannelKey<T> {
        let index = self.owned.len();
        assert!(
            index < MAX_TYPES,
            "more than {MAX_TYPES} channel value types in one queue"
        );
        self.owned.push(Box::new(Vec::<Channel<T>>::new()));
        self.refresh::<T>(index);
        ChannelKey {
            index: index as u32,
            queue: self.id,
            _type: PhantomData,
        }
    }

    /// Adds a channel of `key`'s type; returns how many there are now.
    pub fn push<T: 'static>(&mut self, key: ChannelKey<T>, channel: Channel<T>) -> usize {
        if key.queue != self.id {
            another_queue();
        }
        let set = self.owned[key.index as usize]
            .downcast_mut::<Vec<Channel<T>>>()
            .expect("channel key from another event queue");
        set.push(channel);
        let len = set.len();
        self.refresh::<T>(key.index as usize);
        len
    }

    /// Points `raw[index]` at the channels of `owned[index]` again (after it grew).
    fn refresh<T: 'static>(&mut self, index: usize) {
        let set = self.owned[index]
            .downcast_mut::<Vec<Channel<T>>>()
            .expect("channel key from another event queue");
        self.raw[index].ptr = set.as_mut_ptr().cast();
        self.raw[index].len = set.len();
    }

    #[inline]
    #[allow(unsafe_code)]
    pub fn get<T: 'static>(&mut self, key: ChannelKey<T>) -> &mut [Channel<T>] {
        if key.queue != self.id {
            another_queue();
        }
        let raw = &self.raw[key.index as usize & (MAX_TYPES - 1)];
        // SAFETY: this queue made `key` (checked above), in `add_type::<T>`, so `owned` at its
        // index holds a `Vec<Channel<T>>` (types are never removed), and `raw` at that index is
        // that vector's buffer and length (refreshed whenever it changes). `&mut self` makes
        // this the only reference to it.
        unsafe { std::slice::from_raw_parts_mut(raw.ptr.cast::<Channel<T>>(), raw.len) }
    }

    pub fn get_ref<T: 'static>(&self, key: ChannelKey<T>) -> &[Channel<T>] {
        if key.queue != self.id {
            another_queue();
        }
        self.owned
            .get(key.index as usize)
            .and_then(|s| s.downcast_ref::<Vec<Channel<T>>>())
            .expect("channel key from another event queue")
    }
}
