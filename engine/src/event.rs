//! The event resource: one time-ordered queue per world.
//!
//! Every event has a key `(time, source id, source-local sequence)`. Source ids are dense numbers
//! handed out at build in topology order, and each source numbers the events it schedules, so the
//! order of equal-time events depends neither on the order in which they were pushed nor on bevy
//! `Entity` values: the same scenario gives the same order on any partition of the world.
//!
//! The key packs into one `u128` (time in the high 64 bits, then 24 bits of source and 40 of
//! sequence), so the heap compares a single integer.

use crate::time::SimTime;
use bevy_ecs::prelude::Resource;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// An event kind: an index into the dispatch table, handed out by `App::add_event_kind`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct EventKind(pub u16);

/// A stable id of something that schedules events (a link direction, a NIC, a connection...).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct SourceId(pub u32);

impl SourceId {
    /// The engine's own source (beacon ticks, phase boundaries).
    pub const ENGINE: SourceId = SourceId(0);
    /// Sources are packed into 24 bits of the key.
    pub const MAX_SOURCES: u32 = 1 << 24;
}

const SEQ_BITS: u32 = 40;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;

/// What a handler receives: when, which kind, which target (a stable id the kind's owner chose)
/// and one word of data (an index, a packed pair, an `Entity` as bits...).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SimEvent {
    pub time: SimTime,
    pub kind: EventKind,
    pub target: u32,
    pub data: u64,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    kind: EventKind,
    target: u32,
    data: u64,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest key first.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// The world's pending events, the current time and the counters the run summary reports.
#[derive(Resource, Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seqs: Vec<u64>,
    now: SimTime,
    processed: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            seqs: vec![0],
            now: SimTime::ZERO,
            processed: 0,
        }
    }

    /// A new source id. Call in a deterministic order (topology order) at build.
    pub fn add_source(&mut self) -> SourceId {
        let id = self.seqs.len() as u32;
        assert!(id < SourceId::MAX_SOURCES, "more than 2^24 event sources");
        self.seqs.push(0);
        SourceId(id)
    }

    /// Number of sources handed out (the engine's own included).
    pub fn sources(&self) -> usize {
        self.seqs.len()
    }

    /// The time of the event being handled (or of the last one handled).
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events handled so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Events waiting.
    pub fn pending(&self) -> usize {
        self.heap.len()
    }

    /// Schedules an event. Scheduling in the past is a model bug: it panics in debug builds and
    /// runs at the current time in release builds.
    #[inline]
    pub fn schedule(&mut self, time: SimTime, source: SourceId, kind: EventKind, target: u32, data: u64) {
        debug_assert!(
            time >= self.now,
            "event scheduled in the past: {time:?} < {:?}",
            self.now
        );
        let time = time.max(self.now);
        let seq = &mut self.seqs[source.0 as usize];
        let s = *seq;
        *seq += 1;
        assert!(s <= SEQ_MASK, "a source scheduled more than 2^40 events");
        let key = ((time.0 as u128) << 64) | ((source.0 as u128) << SEQ_BITS) | s as u128;
        self.heap.push(Entry {
            key,
            kind,
            target,
            data,
        });
    }

    /// Removes and returns the earliest event strictly before `stop`, advancing `now` to its time.
    #[inline]
    pub fn pop_before(&mut self, stop: SimTime) -> Option<SimEvent> {
        let top = self.heap.peek()?;
        let time = SimTime((top.key >> 64) as u64);
        if time >= stop {
            return None;
        }
        let e = self.heap.pop()?;
        self.now = time;
        self.processed += 1;
        Some(SimEvent {
            time,
            kind: e.kind,
            target: e.target,
            data: e.data,
        })
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| SimTime((e.key >> 64) as u64))
    }

    /// Moves `now` forward without handling an event (to the stop time at the end of a run).
    pub fn advance_to(&mut self, t: SimTime) {
        if t > self.now {
            self.now = t;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut EventQueue) -> Vec<(u64, u32, u64)> {
        std::iter::from_fn(|| q.pop_before(SimTime::MAX))
            .map(|e| (e.time.0, e.target, e.data))
            .collect()
    }

    #[test]
    fn equal_time_order_does_not_depend_on_insertion_order() {
        // Two sources schedule at the same time; whatever order we push them in, source 1's
        // events come before source 2's, and each source's events in its own order.
        let build = |order: &[(u32, u64)]| {
            let mut q = EventQueue::new();
            let a = q.add_source();
            let b = q.add_source();
            let mut ev = Vec::new();
            for &(src, data) in order {
                let s = if src == 1 { a } else { b };
                q.schedule(SimTime(100), s, EventKind(0), src, data);
                ev.push(data);
            }
            drain(&mut q)
        };
        let x = build(&[(1, 10), (2, 20), (1, 11), (2, 21)]);
        let y = build(&[(2, 20), (2, 21), (1, 10), (1, 11)]);
        assert_eq!(x, y);
        assert_eq!(x.iter().map(|e| e.2).collect::<Vec<_>>(), vec![10, 11, 20, 21]);
    }

    #[test]
    fn time_orders_first() {
        let mut q = EventQueue::new();
        let s = q.add_source();
        q.schedule(SimTime(30), s, EventKind(0), 0, 3);
        q.schedule(SimTime(10), s, EventKind(0), 0, 1);
        q.schedule(SimTime(20), SourceId::ENGINE, EventKind(0), 0, 2);
        assert_eq!(drain(&mut q).iter().map(|e| e.2).collect::<Vec<_>>(), vec![1, 2, 3]);
    }

    #[test]
    fn events_at_or_after_stop_never_pop() {
        let mut q = EventQueue::new();
        let s = q.add_source();
        q.schedule(SimTime(99), s, EventKind(0), 0, 1);
        q.schedule(SimTime(100), s, EventKind(0), 0, 2);
        q.schedule(SimTime(101), s, EventKind(0), 0, 3);
        let got: Vec<u64> = std::iter::from_fn(|| q.pop_before(SimTime(100)))
            .map(|e| e.data)
            .collect();
        assert_eq!(got, vec![1]);
        assert_eq!(q.pending(), 2);
        assert_eq!(q.now(), SimTime(99));
    }
}
