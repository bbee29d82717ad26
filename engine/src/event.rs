//! The event resource: one time-ordered queue per world.
//!
//! Every event has a key `(time, source id, source-local sequence)`. Source ids are dense numbers
//! handed out at build in topology order, and each source numbers the events it schedules, so the
//! order of equal-time events depends neither on the order in which they were pushed nor on bevy
//! `Entity` values: the same scenario gives the same order on any partition of the world.
//!
//! The key packs into one `u128` (time in the high 64 bits, then 24 bits of source and 40 of
//! sequence), so the heap compares a single integer. A handled event usually schedules the next
//! one at once, so popping leaves the root in place, marked as taken, and the next `schedule`
//! overwrites it: one pass down the heap instead of two (`heap.rs` has the heap itself).
//!
//! Events far ahead of `now` (retransmission timers, beacon ticks: `FAR_HORIZON` and beyond) wait
//! in a second heap, and a pop takes the smaller of the two roots, so the order is the same as
//! with one heap. The main heap then holds only what is about to happen (a link's next arrival,
//! a NIC's next send). Its depth is what a pop waits on: each level is a load and a comparison
//! that depend on the level above, so a shallower heap is faster even for the same instructions
//! (docs/performance.md).
//!
//! With the lookahead on (`set_lookahead`, for large fabrics) the next events wait in order in a
//! small front before both heaps (`front.rs`), where `ahead` shows them to the loop, which warms
//! their state before they run (`Handler::prefetch`); a calendar of buckets (`calendar.rs`) then
//! stands in for the main heap, whose pops miss the cache with that many events pending. The
//! order is the same.

mod calendar;
mod channel;
mod front;
mod heap;
#[cfg(test)]
mod lookahead_tests;
mod typed;

use crate::time::SimTime;
use bevy_ecs::prelude::Resource;
use calendar::Calendar;
pub use channel::ChannelKey;
use channel::{Channel, ChannelSets};
use front::Front;
pub(crate) use heap::Entry;
use heap::QuadHeap;
pub use typed::{Payload, TypedKind};

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

/// The longest lookahead a queue may hold (`EventQueue::set_lookahead`).
// The front holds the lookahead, the event being taken, and one inserted before a spill.
pub const MAX_LOOKAHEAD: usize = front::CAP - 2;

/// How far ahead of `now` an event must be to wait in the far heap, unless a model raised it
/// (`keep_near`): 2^24 ps, about 16.8 us, beyond a 1 us link's arrivals and short of a 100 us
/// retransmission timer.
pub const FAR_HORIZON: SimTime = SimTime(1 << 24);

pub(crate) const SEQ_BITS: u32 = 40;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;

/// A channel's next key low word (`Channel::next`), and its count moved on by one.
#[inline(always)]
fn next_of(next: &mut u64) -> u64 {
    let low = *next;
    assert!(low & SEQ_MASK != SEQ_MASK, "a source scheduled more than 2^40 events");
    *next = low + 1;
    low
}

/// What a handler receives: when, which kind, which target (a stable id the kind's owner chose)
/// and one word of data (an index, a packed pair, an `Entity` as bits...).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SimEvent {
    /// When it happens.
    pub time: SimTime,
    /// Which kind it is: which handler takes it.
    pub kind: EventKind,
    /// The target id, as the kind's owner numbers its targets.
    pub target: u32,
    /// One word of payload, as the kind's owner packs it.
    pub data: u64,
}

/// The event an entry stands for.
#[inline(always)]
pub(crate) fn event_of(e: &Entry) -> SimEvent {
    SimEvent {
        time: SimTime((e.key >> 64) as u64),
        kind: EventKind(e.kind),
        target: e.target,
        data: e.data,
    }
}

/// The world's pending events, the current time and the counters the run summary reports.
#[derive(Resource, Debug)]
pub struct EventQueue {
    heap: QuadHeap,
    /// Events at least `horizon` ahead of the time they were scheduled at.
    far: QuadHeap,
    horizon: u64,
    /// Where `schedule` leaves its common path: `horizon`, or 0 with the lookahead on, so that
    /// the lookahead's test costs the common path nothing.
    far_after: u64,
    /// The heap's root was returned by `pop_before` and is no longer pending; the next `schedule`
    /// replaces it, or the next pop removes it.
    root_taken: bool,
    seqs: Vec<u64>,
    now: SimTime,
    processed: u64,
    channels: ChannelSets,
    /// The lookahead front (`set_lookahead`): empty, and `front_max` 0, unless it is on.
    front: Front,
    /// The key of the front's last entry: a new event before it goes into the front.
    front_max: u128,
    /// How many events the front shows after a pop (`ahead`); 0 when off.
    lookahead: usize,
    /// The main heap's stand-in with the lookahead on; empty when off.
    calendar: Calendar,
}

impl Default for EventQueue {
    /// The same as `new`: source 0 is the engine's.
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        EventQueue {
            heap: QuadHeap::with_capacity(1024),
            far: QuadHeap::with_capacity(64),
            horizon: FAR_HORIZON.0,
            far_after: FAR_HORIZON.0,
            root_taken: false,
            seqs: vec![0],
            now: SimTime::ZERO,
            processed: 0,
            channels: ChannelSets::default(),
            front: Front::default(),
            front_max: 0,
            lookahead: 0,
            calendar: Calendar::new(calendar::SHIFT, 1),
        }
    }

    /// A new source id. Call in a deterministic order (topology order) at build.
    pub fn add_source(&mut self) -> SourceId {
        let id = self.seqs.len() as u32;
        assert!(id < SourceId::MAX_SOURCES, "more than 2^24 event sources");
        self.seqs.push(0);
        SourceId(id)
    }

    /// Keeps events up to `ahead` in the future in the main heap: a model whose common events are
    /// scheduled that far ahead (a link with a long delay) calls it at build, so that they do not
    /// all take the far heap's slower path. The horizon only grows; it never changes the order.
    pub fn keep_near(&mut self, ahead: SimTime) {
        self.horizon = self.horizon.max(ahead.0.saturating_add(1));
        if self.lookahead == 0 {
            self.far_after = self.horizon;
        }
    }

    /// Events waiting in the far heap (for tests and diagnostics).
    pub fn pending_far(&self) -> usize {
        self.far.len()
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
        self.heap.len() - self.root_taken as usize + self.far.len() + self.front.len() + self.calendar.len()
    }

    /// Keeps the next `n` events (at most `MAX_LOOKAHEAD`) out of the heap, in order, where `ahead` shows
    /// them: the loop then warms their state while it handles the current one (`Handler::
    /// prefetch`). For large fabrics, whose state the caches do not hold; 0 turns it off. The
    /// order of events is the same either way.
    pub fn set_lookahead(&mut self, n: usize) {
        assert!(n <= MAX_LOOKAHEAD, "a lookahead of more than {MAX_LOOKAHEAD} events");
        if self.root_taken {
            self.root_taken = false;
            self.heap.remove_root();
        }
        while let Some(e) = self.front.pop_back() {
            self.heap.push(e);
        }
        for e in self.calendar.drain() {
            self.heap.push(e);
        }
        self.front_max = 0;
        self.lookahead = n;
        self.far_after = if n > 0 { 0 } else { self.horizon };
        if n > 0 {
            // A year as long as the horizon, up to `MAX_BUCKETS`: beyond, the far heap.
            let buckets = (self.horizon >> calendar::SHIFT).next_power_of_two() as usize;
            self.calendar = Calendar::new(calendar::SHIFT, buckets.clamp(1, calendar::MAX_BUCKETS));
            while let Some(e) = self.heap.pop() {
                self.push_later(e);
            }
        }
    }

    /// Puts `e` into the calendar, or the far heap if it is beyond the calendar's year.
    #[inline]
    fn push_later(&mut self, e: Entry) {
        if let Err(e) = self.calendar.push(e) {
            self.far.push(e);
        }
    }

    /// The lookahead set by `set_lookahead` (0: off).
    #[inline]
    pub fn lookahead(&self) -> usize {
        self.lookahead
    }

    /// The events after the one being handled, in place (`ahead` without building each).
    #[inline]
    pub(crate) fn front_view(&self) -> front::View<'_> {
        self.front.view()
    }

    /// The `i`-th event after the one being handled, as it stands (an event scheduled later may
    /// still come before it); `None` beyond the lookahead.
    #[inline]
    pub fn ahead(&self, i: usize) -> Option<SimEvent> {
        self.front.get(i).map(event_of)
    }

    /// Schedules an event. Scheduling in the past is a model bug: it panics in debug builds and
    /// runs at the current time in release builds.
    #[inline]
    pub fn schedule(&mut self, time: SimTime, source: SourceId, kind: EventKind, target: u32, data: u64) {
        let seq = &mut self.seqs[source.0 as usize];
        let s = *seq;
        *seq += 1;
        assert!(s <= SEQ_MASK, "a source scheduled more than 2^40 events");
        self.schedule_numbered(time, (source.0 as u64) << SEQ_BITS | s, kind, target, data)
    }

    /// Schedules an event given the low word of its key, its source above the source's sequence
    /// number (from `seqs`, or a channel's own, `next_of`). Inlined: `receive` schedules the
    /// next packet of a channel for most events of a run, and is hot enough to pay for a copy
    /// of the heap code.
    #[inline(always)]
    fn schedule_numbered(&mut self, time: SimTime, low: u64, kind: EventKind, target: u32, data: u64) {
        debug_assert!(
            time >= self.now,
            "event scheduled in the past: {time:?} < {:?}",
            self.now
        );
        let time = time.max(self.now);
        let key = ((time.0 as u128) << 64) | low as u128;
        if time.0 - self.now.0 >= self.far_after {
            // The fields go as they are: an `Entry` built for this call was built, in memory,
            // before the branch on every path.
            return self.schedule_off_path(key, kind.0, target, data);
        }
        let entry = Entry {
            key,
            kind: kind.0,
            target,
            data,
        };
        if self.root_taken {
            self.root_taken = false;
            self.heap.replace_root(entry);
        } else {
            self.heap.push(entry);
        }
    }

    /// A far event, or any with the lookahead on: kept out of line so that the common path stays
    /// small enough to inline where it is hot. A taken root stays taken: the next pop removes it.
    #[inline(never)]
    fn schedule_off_path(&mut self, key: u128, kind: u16, target: u32, data: u64) {
        let entry = Entry {
            key,
            kind,
            target,
            data,
        };
        let ahead = (entry.key >> 64) as u64 - self.now.0;
        if entry.key < self.front_max {
            self.put_in_front(entry);
        } else if ahead >= self.horizon {
            self.far.push(entry);
        } else if self.lookahead > 0 {
            self.push_later(entry);
        } else {
            self.heap.push(entry);
        }
    }

    /// Puts an event that comes before the front's last into the front, moving the last out to
    /// the heap if the front is over its length.
    #[cold]
    #[inline(never)]
    fn put_in_front(&mut self, entry: Entry) {
        self.front.insert(entry);
        if self.front.len() > self.lookahead + 1
            && let Some(last) = self.front.pop_back()
        {
            self.push_later(last);
        }
        self.front_max = self.front.back().map_or(0, |b| b.key);
    }

    /// `pop_before` with the lookahead on: tops the front up from the calendar and the far heap
    /// (to the lookahead and the event it takes), then takes its first event.
    #[inline]
    pub fn pop_ahead(&mut self, stop: SimTime) -> Option<SimEvent> {
        debug_assert!(!self.root_taken && self.heap.len() == 0);
        while self.front.len() <= self.lookahead {
            let near = self.calendar.peek().map(|e| e.key);
            let far = self.far.peek().map(|e| e.key);
            let e = match (near, far) {
                (Some(n), Some(f)) if f < n => self.far.pop(),
                (Some(_), _) => self.calendar.pop(),
                (None, Some(_)) => self.far.pop(),
                (None, None) => break,
            };
            let Some(e) = e else { break };
            self.front_max = e.key;
            self.front.push_back(e);
        }
        let top = self.front.get(0)?;
        let time = SimTime((top.key >> 64) as u64);
        if time >= stop {
            return None;
        }
        let ev = event_of(top);
        self.front.pop_front();
        if self.front.len() == 0 {
            self.front_max = 0;
        }
        self.now = time;
        self.processed += 1;
        Some(ev)
    }

    /// Registers a type of value that travels in channels (`channel.rs`).
    pub fn add_channel_type<T: Copy + Default + Send + Sync + 'static>(&mut self) -> ChannelKey<T> {
        self.channels.add_type()
    }

    /// Adds a channel of `key`'s type whose head is announced by an event of `kind` at `target`
    /// with `data`; returns its number (0, 1, ... per type). The data word is the channel's own
    /// (where its values arrive, say): its handler reads it from the event, not from a table.
    ///
    /// The channel's events come from a source of its own, taken here as `add_source` would
    /// (so sources keep their build order), and numbered in the channel's line: no table lookup
    /// per send or receive. The owner's other events under that source go through
    /// `schedule_as`, which shares the numbering.
    pub fn add_channel<T: Copy + Default + 'static>(
        &mut self,
        key: ChannelKey<T>,
        kind: EventKind,
        target: u32,
        data: u64,
    ) -> u32 {
        let source = self.add_source();
        let len = self.channels.push(
            key,
            Channel {
                fifo: Default::default(),
                pending: false,
                next: (source.0 as u64) << SEQ_BITS,
                kind,
                target,
                data,
            },
        );
        (len - 1) as u32
    }

    /// Schedules an event from channel `chan`'s source, numbered with its arrivals: for the
    /// channel owner's own events (a link's next send), in one order with them.
    #[inline]
    pub fn schedule_as<T: Copy + Default + 'static>(
        &mut self,
        key: ChannelKey<T>,
        chan: u32,
        time: SimTime,
        kind: EventKind,
        target: u32,
        data: u64,
    ) {
        let c = &mut self.channels.get(key)[chan as usize];
        let low = next_of(&mut c.next);
        self.schedule_numbered(time, low, kind, target, data)
    }

    /// Puts `value` into channel `chan`, to come out at `at`. Times must not decrease within a
    /// channel (a link delivers in launch order).
    ///
    /// Inlined into its callers, so that a value built in registers is stored straight into the
    /// channel's slot: passed through memory, it was stored field by field and then loaded back
    /// whole for the copy, and those loads waited for the stores (failed store-to-load forwards,
    /// about a third of a link launch's `perf record` samples). Scheduling the channel's event,
    /// which only its first value needs, stays out of line.
    #[inline(always)]
    pub fn send<T: Copy + Default + 'static>(&mut self, key: ChannelKey<T>, chan: u32, at: SimTime, value: T) {
        let c = &mut self.channels.get(key)[chan as usize];
        debug_assert!(c.fifo.back().is_none_or(|b| b.0 <= at), "channel times went backwards");
        c.fifo.push_back((at, value));
        if !c.pending {
            c.pending = true;
            let low = next_of(&mut c.next);
            let (kind, target, data) = (c.kind, c.target, c.data);
            self.schedule_first(at, low, kind, target, data);
        }
    }

    /// The event of a channel that was empty.
    #[inline(never)]
    fn schedule_first(&mut self, at: SimTime, low: u64, kind: EventKind, target: u32, data: u64) {
        self.schedule_numbered(at, low, kind, target, data);
    }

    /// Takes the head of channel `chan`, whose event is being handled, and schedules the event
    /// of the next head if there is one.
    #[inline]
    pub fn receive<T: Copy + Default + 'static>(&mut self, key: ChannelKey<T>, chan: u32) -> T {
        let c = &mut self.channels.get(key)[chan as usize];
        let (at, value) = c.fifo.pop_front().expect("channel event without a value");
        debug_assert_eq!(at, self.now);
        match c.fifo.front() {
            Some(&(next, _)) => {
                let low = next_of(&mut c.next);
                let (kind, target, data) = (c.kind, c.target, c.data);
                self.schedule_numbered(next, low, kind, target, data);
            }
            None => c.pending = false,
        }
        value
    }

    /// Makes channel `chan` outbound: its far end is in another shard, so a value sent on it
    /// schedules nothing here and waits for `drain_channel` (the shard runner moves it to the shard
    /// that receives it). Costs the hot path nothing: the channel simply always looks pending.
    pub fn mark_outbound<T: Copy + Default + 'static>(&mut self, key: ChannelKey<T>, chan: u32) {
        self.channels.get(key)[chan as usize].pending = true;
    }

    /// Moves every value waiting in channel `chan` into `out`, with its arrival time, first out
    /// first. Only for outbound channels (`mark_outbound`), whose values no event stands for.
    pub fn drain_channel<T: Copy + Default + 'static>(
        &mut self,
        key: ChannelKey<T>,
        chan: u32,
        mut out: impl FnMut(SimTime, T),
    ) {
        let c = &mut self.channels.get(key)[chan as usize];
        while let Some((at, v)) = c.fifo.pop_front() {
            out(at, v);
        }
    }

    /// Values in channel `chan` not yet received.
    pub fn channel_len<T: Copy + Default + 'static>(&mut self, key: ChannelKey<T>, chan: u32) -> usize {
        self.channels.get(key)[chan as usize].fifo.len()
    }

    /// Values in channel `chan` not yet received, first out first (what is in flight on it).
    pub fn channel_values<T: Copy + Default + 'static>(
        &self,
        key: ChannelKey<T>,
        chan: u32,
    ) -> impl Iterator<Item = &T> {
        self.channels.get_ref(key)[chan as usize].fifo.iter().map(|(_, v)| v)
    }

    /// Removes and returns the earliest event strictly before `stop`, advancing `now` to its time.
    #[inline]
    pub fn pop_before(&mut self, stop: SimTime) -> Option<SimEvent> {
        debug_assert_eq!(self.lookahead, 0, "pop_before with the lookahead on: use pop_ahead");
        if self.root_taken {
            self.root_taken = false;
            self.heap.remove_root();
        }
        if let Some(far) = self.far.peek()
            && self.heap.peek().is_none_or(|n| far.key < n.key)
        {
            self.promote_far();
        }
        let top = self.heap.peek()?;
        let time = SimTime((top.key >> 64) as u64);
        if time >= stop {
            return None;
        }
        self.root_taken = true;
        self.now = time;
        self.processed += 1;
        Some(SimEvent {
            time,
            kind: EventKind(top.kind),
            target: top.target,
            data: top.data,
        })
    }

    /// Moves the far heap's root, which comes before every event in the main heap, into it (a
    /// timer about to fire: rare). The event then leaves by the main heap's one path: a second
    /// way out of `pop_before` made the compiler return every event through memory, built with
    /// narrow stores and read back with wide loads that waited for them (20% slower in wall
    /// time for the same instructions, `perf record`).
    #[inline(never)]
    fn promote_far(&mut self) {
        if let Some(&e) = self.far.peek() {
            self.far.remove_root();
            self.heap.push(e);
        }
    }

    /// Gives the lookahead's calendar another shape (2^`shift` ps buckets, `buckets` of them).
    #[cfg(test)]
    fn use_calendar(&mut self, shift: u32, buckets: usize) {
        let old = std::mem::replace(&mut self.calendar, Calendar::new(shift, buckets)).drain();
        for e in old {
            self.push_later(e);
        }
    }

    /// Checks the front's invariant: in order, before every event in the heaps, its last's key
    /// in `front_max`.
    #[cfg(test)]
    fn check_front(&self) {
        for i in 1..self.front.len() {
            assert!(self.front.get(i - 1).map(|e| e.key) < self.front.get(i).map(|e| e.key));
        }
        let back = self.front.back().map_or(0, |b| b.key);
        assert_eq!(self.front_max, back);
        assert!(
            self.heap.peek().is_none_or(|h| h.key > back),
            "the heap has an event before the front's last"
        );
        assert!(
            self.calendar.min_key().is_none_or(|k| k > back),
            "the calendar has an event before the front's last"
        );
        assert!(self.far.peek().is_none_or(|h| h.key > back), "the far heap has one too");
    }

    /// Starts loading channel `chan`'s state: the first step of warming an event ahead.
    #[inline]
    pub fn prefetch_channel<T: Copy + Default + 'static>(&self, key: ChannelKey<T>, chan: u32) {
        if let Some(c) = self.channels.get_ref(key).get(chan as usize) {
            crate::prefetch::prefetch(c);
        }
    }

    /// Starts loading what receiving from channel `chan` reads beyond its state (which should be
    /// cached by now: `prefetch_channel` a step earlier): its head and the value after.
    #[inline]
    pub fn warm_channel<T: Copy + Default + 'static>(&self, key: ChannelKey<T>, chan: u32) {
        let Some(c) = self.channels.get_ref(key).get(chan as usize) else {
            return;
        };
        if let Some(head) = c.fifo.front() {
            crate::prefetch::prefetch(head);
        }
        if let Some(next) = c.fifo.get(1) {
            crate::prefetch::prefetch(next);
        }
    }

    /// Starts loading, to be written, the slot the next value sent on channel `chan` goes into
    /// (its state should be cached by now: `prefetch_channel` a step earlier).
    #[inline]
    pub fn warm_channel_tail<T: Copy + Default + 'static>(&self, key: ChannelKey<T>, chan: u32) {
        if let Some(slot) = self
            .channels
            .get_ref(key)
            .get(chan as usize)
            .and_then(|c| c.fifo.next_slot())
        {
            crate::prefetch::prefetch_write(slot);
        }
    }

    /// The value at the head of channel `chan`, for warming an event ahead (its state should be
    /// cached by now: `prefetch_channel` a step earlier).
    #[inline]
    pub fn channel_head<T: Copy + Default + 'static>(&self, key: ChannelKey<T>, chan: u32) -> Option<&T> {
        let c = self.channels.get_ref(key).get(chan as usize)?;
        c.fifo.front().map(|(_, v)| v)
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        if let Some(first) = self.front.get(0) {
            return Some(SimTime((first.key >> 64) as u64));
        }
        let near = if self.root_taken {
            self.heap.peek_second()
        } else {
            self.heap.peek()
        };
        let near = near.map(|e| e.key).into_iter().chain(self.calendar.min_key());
        let key = near.chain(self.far.peek().map(|e| e.key)).min()?;
        Some(SimTime((key >> 64) as u64))
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
    fn channels_deliver_in_order_with_one_pending_event_each() {
        let mut q = EventQueue::new();
        let key = q.add_channel_type::<u32>();
        assert_eq!(q.add_channel(key, EventKind(3), 10, 7), 0);
        assert_eq!(q.add_channel(key, EventKind(4), 20, 8), 1);
        for (chan, t, v) in [(0, 5, 1), (1, 6, 100), (0, 7, 2), (0, 7, 3), (1, 9, 101)] {
            q.send(key, chan, SimTime(t), v);
        }
        assert_eq!(q.pending(), 2, "one event per non-empty channel");
        let mut got = Vec::new();
        while let Some(ev) = q.pop_before(SimTime::MAX) {
            let chan = (ev.kind.0 - 3) as u32;
            assert_eq!(ev.target, 10 * (chan + 1));
            assert_eq!(ev.data, 7 + u64::from(chan), "each event carries its channel's word");
            got.push((ev.time.0, q.receive(key, chan)));
            assert!(q.pending() <= 2);
        }
        assert_eq!(got, vec![(5, 1), (6, 100), (7, 2), (7, 3), (9, 101)]);
        assert_eq!((q.channel_len(key, 0), q.channel_len(key, 1)), (0, 0));
    }

    #[test]
    fn a_channels_owner_schedules_in_one_numbering_with_its_arrivals() {
        // A link's sends (`schedule_as`) and its arrivals share the channel's source, so at one
        // time they keep the order they were scheduled in, as under one counter.
        let mut q = EventQueue::new();
        let key = q.add_channel_type::<u32>();
        let before = q.add_source();
        let chan = q.add_channel(key, EventKind(0), 0, 0);
        let after = q.add_source();
        assert_eq!(
            (before.0 + 1, before.0 + 2),
            (2, after.0),
            "the channel took the source between"
        );
        q.schedule_as(key, chan, SimTime(10), EventKind(1), 0, 1);
        q.send(key, chan, SimTime(10), 2);
        q.send(key, chan, SimTime(10), 4);
        q.schedule_as(key, chan, SimTime(10), EventKind(1), 0, 3);
        q.schedule(SimTime(10), after, EventKind(2), 0, 9);
        q.schedule(SimTime(10), before, EventKind(2), 0, 0);
        let mut got = Vec::new();
        while let Some(ev) = q.pop_before(SimTime::MAX) {
            got.push(if ev.kind == EventKind(0) {
                q.receive(key, chan) as u64
            } else {
                ev.data
            });
        }
        // Source order first (before, the channel, after), then each source's own order; the
        // second value's event is scheduled by the first's receive, after `schedule_as`'s 3.
        assert_eq!(got, vec![0, 1, 2, 3, 4, 9]);
    }

    #[test]
    fn channels_added_between_sends_keep_their_values() {
        // Adding a channel can move the channels' storage; values sent before must still come
        // out, in order, from the channel they were sent on (the hot path reaches channels
        // through a cached pointer that every addition refreshes).
        let mut q = EventQueue::new();
        let key = q.add_channel_type::<u64>();
        let words = q.add_channel_type::<(u32, u32)>();
        for i in 0..40u32 {
            let chan = q.add_channel(key, EventKind(0), i, 0);
            let pair = q.add_channel(words, EventKind(1), i, 0);
            assert_eq!((chan, pair), (i, i));
            q.send(key, chan, SimTime(u64::from(i) * 10), u64::from(i) * 7);
            q.send(words, pair, SimTime(u64::from(i) * 10 + 5), (i, i + 1));
        }
        let mut got = Vec::new();
        while let Some(ev) = q.pop_before(SimTime::MAX) {
            if ev.kind == EventKind(0) {
                got.push(("u64", ev.target, q.receive(key, ev.target) as u32 / 7));
            } else {
                let (a, b) = q.receive(words, ev.target);
                assert_eq!(b, a + 1);
                got.push(("pair", ev.target, a));
            }
        }
        let want: Vec<_> = (0..40).flat_map(|i| [("u64", i, i), ("pair", i, i)]).collect();
        assert_eq!(got, want);
    }

    /// A queue that has registered no channel type, and a key of a type another queue registered.
    fn queue_and_foreign_key() -> (EventQueue, ChannelKey<i16>) {
        (EventQueue::new(), EventQueue::new().add_channel_type::<i16>())
    }

    #[test]
    #[should_panic(expected = "channel key of a type this event queue has not registered")]
    fn a_key_of_a_type_the_queue_has_not_registered_adds_no_channel() {
        let (mut q, key) = queue_and_foreign_key();
        q.add_channel(key, EventKind(0), 0, 0);
    }

    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn a_key_of_a_type_the_queue_has_not_registered_finds_no_channel() {
        let (mut q, key) = queue_and_foreign_key();
        q.send(key, 0, SimTime(1), 5);
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

    #[test]
    fn far_events_interleave_with_near_ones_in_key_order() {
        // Two events scheduled from time 0 past the horizon wait in the far heap. Once the queue
        // is close to them, events scheduled at the same times go to the main heap, and the key
        // (time, source, sequence) still decides: source a's near event at `t` comes before
        // source b's far one, and b's own later event at `t` after it.
        let mut q = EventQueue::new();
        let (a, b) = (q.add_source(), q.add_source());
        let t = FAR_HORIZON.0 + 100;
        q.schedule(SimTime(t), b, EventKind(0), 0, 1);
        q.schedule(SimTime(t - 10), a, EventKind(0), 0, 2);
        q.schedule(SimTime(1), a, EventKind(0), 0, 3);
        assert_eq!((q.far.len(), q.pending()), (2, 3));
        assert_eq!(q.peek_time(), Some(SimTime(1)));
        assert_eq!(q.pop_before(SimTime::MAX).map(|e| e.data), Some(3));
        assert_eq!(q.peek_time(), Some(SimTime(t - 10)), "the far heap's root");
        // A stop before the far root: nothing pops, and nothing is lost.
        assert_eq!(q.pop_before(SimTime(t - 10)), None);
        assert_eq!(q.pending(), 2);
        assert_eq!(
            q.pop_before(SimTime::MAX).map(|e| (e.time.0, e.data)),
            Some((t - 10, 2))
        );
        q.schedule(SimTime(t), b, EventKind(0), 0, 4);
        q.schedule(SimTime(t), a, EventKind(0), 0, 5);
        assert_eq!(q.far.len(), 1, "near events stay in the main heap");
        assert_eq!(drain(&mut q).iter().map(|e| e.2).collect::<Vec<_>>(), vec![5, 1, 4]);
    }

    #[test]
    fn keep_near_raises_the_horizon_and_never_lowers_it() {
        let mut q = EventQueue::new();
        let s = q.add_source();
        q.keep_near(SimTime(FAR_HORIZON.0 * 2));
        q.keep_near(SimTime(1));
        q.schedule(SimTime(FAR_HORIZON.0 * 2), s, EventKind(0), 0, 1);
        assert_eq!((q.far.len(), q.pending()), (0, 1));
        q.schedule(SimTime(FAR_HORIZON.0 * 2 + 1), s, EventKind(0), 0, 2);
        assert_eq!((q.far.len(), q.pending()), (1, 2));
        assert_eq!(drain(&mut q).iter().map(|e| e.2).collect::<Vec<_>>(), vec![1, 2]);
    }
}

/// Property tests: the queue against a sorted model, on random schedules from several sources.
#[cfg(test)]
mod properties {
    use super::*;
    use crate::rng::{below, stream};
    use std::collections::BTreeMap;

    const SOURCES: u32 = 7;

    #[test]
    fn pops_in_key_order_whatever_the_insertion_order() {
        // Each source's events, in the order that source schedules them. Times come from a narrow
        // range so that most times are shared by several sources.
        let mut rng = stream(1, "queue-order", 0);
        let per_source: Vec<Vec<(u64, u64)>> = (0..SOURCES)
            .map(|s| {
                (0..500)
                    .map(|i| (below(&mut rng, 64), u64::from(s) * 1_000 + i))
                    .collect()
            })
            .collect();
        // The order the key defines: time, then source, then the source's own order.
        let mut expected: Vec<(u64, u32, u64)> = Vec::new();
        for (s, events) in per_source.iter().enumerate() {
            for (seq, &(t, data)) in events.iter().enumerate() {
                expected.push((t, s as u32, seq as u64 * 1_000_000 + data));
            }
        }
        expected.sort();
        let expected: Vec<u64> = expected.iter().map(|e| e.2 % 1_000_000).collect();

        for trial in 0..8 {
            // Interleave the sources at random: every insertion order keeps each source's own.
            let mut rng = stream(2, "queue-shuffle", trial);
            let mut q = EventQueue::new();
            let ids: Vec<SourceId> = (0..SOURCES).map(|_| q.add_source()).collect();
            let mut next = vec![0usize; SOURCES as usize];
            let mut left: Vec<usize> = (0..SOURCES as usize).collect();
            while !left.is_empty() {
                let pick = below(&mut rng, left.len() as u64) as usize;
                let s = left[pick];
                let (t, data) = per_source[s][next[s]];
                q.schedule(SimTime(t), ids[s], EventKind(0), s as u32, data);
                next[s] += 1;
                if next[s] == per_source[s].len() {
                    left.swap_remove(pick);
                }
            }
            assert_eq!(q.pending(), expected.len());
            let got: Vec<u64> = std::iter::from_fn(|| q.pop_before(SimTime::MAX))
                .map(|e| e.data)
                .collect();
            assert_eq!(got, expected, "insertion order {trial}");
        }
    }

    #[test]
    fn interleaved_pops_and_schedules_match_a_sorted_model() {
        // Delays from sub-nanosecond (many equal and near-equal keys) to milliseconds: the two
        // longest scales put some events in the far heap and most, then all, in the main one.
        for scale in [100, 70_000, 5_000_000, 2_000_000_000] {
            model_check(scale);
        }
    }

    fn model_check(scale: u64) {
        // Handlers schedule zero to three events each, some at the current time (so a new key can
        // sort before the one just popped), against a `BTreeMap` of keys.
        for trial in 0..4 {
            let mut rng = stream(3, "queue-model", trial);
            let mut q = EventQueue::new();
            let ids: Vec<SourceId> = (0..SOURCES).map(|_| q.add_source()).collect();
            let mut seqs = vec![0u64; SOURCES as usize];
            let mut model: BTreeMap<(u64, u32, u64), u64> = BTreeMap::new();
            let mut data = 0u64;
            let mut schedule = |q: &mut EventQueue, model: &mut BTreeMap<_, _>, rng: &mut _, now: u64| {
                let s = below(rng, u64::from(SOURCES)) as usize;
                let t = now + below(rng, 4) * below(rng, scale);
                q.schedule(SimTime(t), ids[s], EventKind(0), 0, data);
                model.insert((t, ids[s].0, seqs[s]), data);
                seqs[s] += 1;
                data += 1;
            };
            for _ in 0..200 {
                schedule(&mut q, &mut model, &mut rng, 0);
            }
            let mut handled = 0;
            while handled < 5_000 {
                // A stop time now and then, at or just after the next event.
                let stop = match model.keys().next() {
                    Some(&(t, _, _)) if below(&mut rng, 8) == 0 => t + below(&mut rng, 2),
                    _ => u64::MAX,
                };
                let want = model
                    .first_key_value()
                    .filter(|(k, _)| k.0 < stop)
                    .map(|(k, v)| (k.0, *v));
                let got = q.pop_before(SimTime(stop)).map(|e| (e.time.0, e.data));
                assert_eq!(got, want, "scale {scale}, trial {trial}, event {handled}");
                let Some((now, _)) = got else { continue };
                model.pop_first();
                handled += 1;
                for _ in 0..below(&mut rng, 4) {
                    schedule(&mut q, &mut model, &mut rng, now);
                }
                if model.is_empty() {
                    schedule(&mut q, &mut model, &mut rng, now);
                }
                assert_eq!(q.pending(), model.len());
                assert_eq!(q.peek_time(), model.keys().next().map(|k| SimTime(k.0)));
                assert_eq!(q.now(), SimTime(now));
            }
        }
    }
}
