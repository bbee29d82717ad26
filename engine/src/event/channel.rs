//! Channels: FIFOs of timed values, each with at most one pending event, kept inside the queue.
//!
//! A link direction is the model: packets go in at launch with the time they reach the far end,
//! in that order, and one event per channel stands for its head. The handler of that event takes
//! the head with `EventQueue::receive`, which schedules the next head in the same step (so the pop
//! and the push fuse into one pass over the heap). Because the values live in the queue, which
//! every handler holds, neither end touches the channel owner's entity to move a value.

use super::EventKind;
use crate::ring::Ring;
use crate::time::SimTime;
use std::any::{Any, TypeId};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Mutex;

/// Names one value type's channels in a queue: a type has the same index in every queue of the
/// process (`type_index`), so a key never reaches channels of another type.
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

/// One channel: its values in arrival order, and the event that stands for its head. One line:
/// a send or a receive reads the channel and numbers its event with nothing else loaded.
#[repr(C, align(64))]
pub(super) struct Channel<T> {
    pub fifo: Ring<(SimTime, T)>,
    /// The data word of every event the channel schedules (`EventQueue::add_channel`).
    pub data: u64,
    /// The low word of the key of its next event: its source (the channel's alone) above the
    /// source's next sequence number (`EventQueue::schedule_numbered`).
    pub next: u64,
    pub target: u32,
    pub kind: EventKind,
    pub pending: bool,
}

const _: () = assert!(std::mem::size_of::<Channel<u64>>() == 64);

/// The most channel value types one process may register (the fabric registers one, packets);
/// a ninth panics naming this limit.
const MAX_TYPES: usize = 8;
// `get` wraps an index with a mask, which needs a power of two.
const _: () = assert!(MAX_TYPES.is_power_of_two());

/// The alignment of the dangling pointer an unregistered type's slot holds: at least any
/// channel's (`add_type` checks), so an empty slice over it is valid.
const EMPTY_ALIGN: usize = 4096;

/// Channel value types in the order this process first registered them: a type's position is its
/// index in every queue's `ChannelSets`, so that an index names one type everywhere.
static TYPES: Mutex<Vec<TypeId>> = Mutex::new(Vec::new());

/// `T`'s process-wide index, given at its first registration in any queue.
fn type_index<T: 'static>() -> usize {
    let mut types = TYPES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let id = TypeId::of::<T>();
    if let Some(i) = types.iter().position(|t| *t == id) {
        return i;
    }
    assert!(types.len() < MAX_TYPES, "more than {MAX_TYPES} channel value types");
    types.push(id);
    types.len() - 1
}

/// The channels of every registered value type.
///
/// `owned` holds each type's `Vec<Channel<T>>` (and drops it); `raw` holds where that vector's
/// channels are, so a send or receive reaches its channel in one load from the queue: on the hot
/// path each dependent load is latency the next event waits for. Both are indexed by the
/// process-wide `type_index`, so a key's index names its type in every queue and `get` needs no
/// check: at that index a queue holds that type's channels, or none (an empty slice).
pub(super) struct ChannelSets {
    owned: [Option<Box<dyn Any + Send + Sync>>; MAX_TYPES],
    raw: [RawSet; MAX_TYPES],
}

/// One type's channels, as `ChannelSets::get` reaches them: the buffer and length of the
/// `Vec<Channel<T>>` in `owned` at the same index; for a type this queue has not registered, a
/// dangling pointer aligned to `EMPTY_ALIGN` and no channels.
#[derive(Clone, Copy)]
struct RawSet {
    ptr: *mut u8,
    len: usize,
}

impl Default for ChannelSets {
    fn default() -> Self {
        ChannelSets {
            owned: Default::default(),
            raw: [RawSet {
                ptr: std::ptr::without_provenance_mut(EMPTY_ALIGN),
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
        let types = self.owned.iter().filter(|o| o.is_some()).count();
        write!(f, "ChannelSets({types} types)")
    }
}

#[cold]
#[inline(never)]
fn not_registered() -> ! {
    panic!("channel key of a type this event queue has not registered")
}

impl ChannelSets {
    pub fn add_type<T: Copy + Default + Send + Sync + 'static>(&mut self) -> ChannelKey<T> {
        assert!(std::mem::align_of::<Channel<T>>() <= EMPTY_ALIGN);
        let index = type_index::<T>();
        assert!(
            self.owned[index].is_none(),
            "channel value type registered twice in one event queue"
        );
        self.owned[index] = Some(Box::new(Vec::<Channel<T>>::new()));
        self.refresh::<T>(index);
        ChannelKey {
            index: index as u32,
            _type: PhantomData,
        }
    }

    /// This queue's `Vec` of `key`'s channels.
    fn owned_mut<T: 'static>(&mut self, key: ChannelKey<T>) -> &mut Vec<Channel<T>> {
        match self.owned[key.index as usize].as_mut() {
            Some(set) => set.downcast_mut().expect("a type's index names that type"),
            None => not_registered(),
        }
    }

    /// Adds a channel of `key`'s type; returns how many there are now.
    pub fn push<T: 'static>(&mut self, key: ChannelKey<T>, channel: Channel<T>) -> usize {
        let set = self.owned_mut(key);
        set.push(channel);
        let len = set.len();
        self.refresh::<T>(key.index as usize);
        len
    }

    /// Points `raw[index]` at the channels of `owned[index]` again (after it grew).
    fn refresh<T: 'static>(&mut self, index: usize) {
        let set = self.owned_mut(ChannelKey::<T> {
            index: index as u32,
            _type: PhantomData,
        });
        let (ptr, len) = (set.as_mut_ptr().cast(), set.len());
        self.raw[index] = RawSet { ptr, len };
    }

    /// The channels of `key`'s type; none if this queue has not registered it (so indexing
    /// them panics).
    #[inline]
    #[allow(unsafe_code)]
    pub fn get<T: 'static>(&mut self, key: ChannelKey<T>) -> &mut [Channel<T>] {
        let raw = self.raw[key.index as usize & (MAX_TYPES - 1)];
        // SAFETY: a key of type `T` holds `T`'s process-wide index (`type_index`), so `raw` at
        // it is either the buffer and length of the `Vec<Channel<T>>` in `owned` (refreshed
        // whenever it changes), or, if this queue has not registered `T`, a non-null pointer
        // aligned for any channel with length 0. `&mut self` makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(raw.ptr.cast::<Channel<T>>(), raw.len) }
    }

    /// `get`, shared: the same one path to a type's channels.
    #[allow(unsafe_code)]
    pub fn get_ref<T: 'static>(&self, key: ChannelKey<T>) -> &[Channel<T>] {
        let raw = self.raw[key.index as usize & (MAX_TYPES - 1)];
        // SAFETY: as in `get`; `&self` allows only shared references meanwhile.
        unsafe { std::slice::from_raw_parts(raw.ptr.cast::<Channel<T>>(), raw.len) }
    }
}
