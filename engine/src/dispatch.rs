//! Dispatch: the handler table and the engine's loop.
//!
//! A handler is registered per event kind and keeps its own cached state (its `QueryState`s, the
//! kinds it schedules) between calls, so the hot path is a heap pop, one indirect call and the
//! model's own work. Measured on this machine (DESIGN.md): `Schedule::run` costs ~180 ns and a
//! one-shot system ~26 ns, against a budget of ~40-60 ns per event, so handlers are exclusive
//! functions of `(&mut World, &mut EventQueue, SimEvent)` rather than systems run per event. bevy
//! `Schedule`s serve the phases (build, start, beacon tick, finish), which run rarely.

use crate::event::{EventKind, EventQueue, SimEvent};
use crate::time::SimTime;
use bevy_ecs::world::World;

/// Handles events of one kind (or of several: `App::set_handler_for`). Implemented for any
/// `FnMut(&mut World, &mut EventQueue, SimEvent)`; a struct implementing it can hold
/// `QueryState`s built once at startup.
///
/// The event comes by reference: a by-value copy of the 24-byte `SimEvent`, just built field by
/// field from the heap's entry, makes its wide loads wait on those narrow stores (failed
/// store-to-load forwards, a large share of the loop's time: docs/performance.md).
pub trait Handler: Send + 'static {
    /// Handles one event; may schedule more on `queue`.
    fn handle(&mut self, world: &mut World, queue: &mut EventQueue, event: &SimEvent);

    /// The loop stopped (a beacon tick, the end of the run): the world is about to be read by
    /// others (beacon columns, the `Finish` phase, tests). A handler that keeps components out
    /// of the world while events run, to reach them without a lookup per event, puts them back
    /// here; it takes them again at its next event.
    fn pause(&mut self, _world: &mut World) {}

    /// With the queue's lookahead on (`EventQueue::set_lookahead`), called for an event `ahead`
    /// steps after the one about to be handled (`ahead` from `AHEAD` down to 1, one step per
    /// event), so that the handler can start loading what that event will touch: at the far
    /// step the first of its state (a prefetch), nearer the state that depends on it. Hints
    /// only: the order and results are the same whatever it does.
    fn prefetch(&self, _queue: &EventQueue, _event: &SimEvent, _ahead: usize) {}

    /// `prefetch` at one step: the loop calls these, one per step, so that each is compiled
    /// with its step as a constant and a handler's branches on `ahead` fold away. Not for
    /// overriding: implement `prefetch`.
    #[doc(hidden)]
    #[inline]
    fn prefetch_5(&self, queue: &EventQueue, event: &SimEvent) {
        self.prefetch(queue, event, 5)
    }
    #[doc(hidden)]
    #[inline]
    fn prefetch_4(&self, queue: &EventQueue, event: &SimEvent) {
        self.prefetch(queue, event, 4)
    }
    #[doc(hidden)]
    #[inline]
    fn prefetch_3(&self, queue: &EventQueue, event: &SimEvent) {
        self.prefetch(queue, event, 3)
    }
    #[doc(hidden)]
    #[inline]
    fn prefetch_2(&self, queue: &EventQueue, event: &SimEvent) {
        self.prefetch(queue, event, 2)
    }
    #[doc(hidden)]
    #[inline]
    fn prefetch_1(&self, queue: &EventQueue, event: &SimEvent) {
        self.prefetch(queue, event, 1)
    }

    /// The steps at which `prefetch` does anything for events of `kind`: bit `s` for `ahead ==
    /// s` (`warm_at`). The loop calls `prefetch` only at those, so a handler saves the call where
    /// it would do nothing. Asked before the loop's first event with the lookahead on, when the
    /// handler may set up its own state from the world as at its first event. Every step unless
    /// said otherwise.
    fn warm_steps(&mut self, _world: &mut World, _kind: EventKind) -> u8 {
        warm_at(&[1, 2, 3, 4, 5])
    }
}

/// The `warm_steps` mask of the steps `ahead` in `steps` (each from 1 to `AHEAD`).
pub const fn warm_at(steps: &[usize]) -> u8 {
    let mut mask = 0;
    let mut i = 0;
    while i < steps.len() {
        mask |= 1 << steps[i];
        i += 1;
    }
    mask
}

/// How many events ahead the loop warms with the lookahead on: `Handler::prefetch` is called at
/// each distance from this down to 1.
pub const AHEAD: usize = 5;

// `warm_steps` gives a bit per step in a `u8`; the loop calls one `prefetch_N` per step.
const _: () = assert!(AHEAD == 5);

impl<F> Handler for F
where
    F: FnMut(&mut World, &mut EventQueue, SimEvent) + Send + 'static,
{
    #[inline]
    fn handle(&mut self, world: &mut World, queue: &mut EventQueue, event: &SimEvent) {
        self(world, queue, *event)
    }

    /// A function has no `prefetch`.
    fn warm_steps(&mut self, _world: &mut World, _kind: EventKind) -> u8 {
        0
    }
}

/// The dispatch table: each event kind's handler, and each kind's name for messages. A kind
/// nobody handles holds `Unhandled`, so the loop calls whatever the table holds without first
/// checking that something is there. One handler may serve several kinds (it keeps their state
/// together): kinds index `slot`, which indexes `table`.
#[derive(Default)]
pub struct Handlers {
    names: Vec<&'static str>,
    slot: Vec<u16>,
    table: Vec<Box<dyn Handler>>,
    handled: Vec<bool>,
    /// With the lookahead on, each kind's table entry (low 16 bits) and `warm_steps` (above).
    warm: Vec<u32>,
}

/// The handler of a kind that has none: reaching it is a plugin bug.
struct Unhandled(&'static str);

impl Handler for Unhandled {
    fn handle(&mut self, _: &mut World, _: &mut EventQueue, ev: &SimEvent) {
        panic!("no handler for event kind {} ({})", ev.kind.0, self.0)
    }
}

impl Handlers {
    /// Declares the event kind `name`, at first with a handler that panics naming it.
    pub fn add_kind(&mut self, name: &'static str) -> EventKind {
        let id = self.names.len();
        assert!(id < u16::MAX as usize, "too many event kinds");
        self.names.push(name);
        self.slot.push(self.table.len() as u16);
        self.table.push(Box::new(Unhandled(name)));
        self.handled.push(false);
        EventKind(id as u16)
    }

    /// Sets the handler of `kind`. A kind has one handler: a second registration is a plugin bug.
    pub fn set(&mut self, kind: EventKind, handler: Box<dyn Handler>) {
        self.set_for(&[kind], handler);
    }

    /// Sets one handler for all of `kinds`; it tells them apart by `SimEvent::kind`.
    pub fn set_for(&mut self, kinds: &[EventKind], handler: Box<dyn Handler>) {
        let at = self.table.len();
        assert!(at < u16::MAX as usize, "too many handlers");
        // The kinds' `Unhandled`s stay in the table, unreachable: tables are small.
        self.route(kinds, at as u16);
        self.table.push(handler);
    }

    /// Points `kinds`, which have no handler yet, at the table's entry `at`.
    fn route(&mut self, kinds: &[EventKind], at: u16) {
        for &kind in kinds {
            let k = kind.0 as usize;
            assert!(!self.handled[k], "event kind `{}` already has a handler", self.names[k]);
            self.handled[k] = true;
            self.slot[k] = at;
        }
    }

    /// Replaces the handler serving `kind` (and every kind it serves) with `wrap(handler)`:
    /// middleware the model does not know about, such as a test's tap on the packets reaching
    /// a NIC, which looks at each event and passes it on.
    pub fn wrap(&mut self, kind: EventKind, wrap: impl FnOnce(Box<dyn Handler>) -> Box<dyn Handler>) {
        let k = kind.0 as usize;
        assert!(self.handled[k], "event kind `{}` has no handler to wrap", self.names[k]);
        let at = self.slot[k] as usize;
        let inner = std::mem::replace(&mut self.table[at], Box::new(Unhandled("being wrapped")));
        self.table[at] = wrap(inner);
    }

    /// The number of kinds declared.
    pub fn kinds(&self) -> usize {
        self.names.len()
    }

    /// Kinds that were declared but that nothing handles (checked before a run starts).
    pub fn unhandled(&self) -> Vec<&'static str> {
        self.names
            .iter()
            .zip(&self.handled)
            .filter(|(_, h)| !**h)
            .map(|(n, _)| *n)
            .collect()
    }

    /// Handles every event before `stop` in key order, then lets every handler `pause`. Returns
    /// the number handled.
    pub fn run(&mut self, world: &mut World, queue: &mut EventQueue, stop: SimTime) -> u64 {
        let start = queue.processed();
        if queue.lookahead() > 0 {
            self.run_ahead(world, queue, stop);
        } else {
            while let Some(ev) = queue.pop_before(stop) {
                match self.slot.get(ev.kind.0 as usize) {
                    Some(&h) => self.table[h as usize].handle(world, queue, &ev),
                    None => panic!("no event kind {}", ev.kind.0),
                }
            }
        }
        for h in &mut self.table {
            h.pause(world);
        }
        queue.processed() - start
    }

    /// `run` without the pause: a shard's window ends where nothing but the event queue is
    /// looked at, so the handlers keep what they hold (putting it back in the world and taking
    /// it again is work in proportion to the world, at every window).
    pub fn run_window(&mut self, world: &mut World, queue: &mut EventQueue, stop: SimTime) {
        if queue.lookahead() > 0 {
            return self.run_ahead(world, queue, stop);
        }
        while let Some(ev) = queue.pop_before(stop) {
            match self.slot.get(ev.kind.0 as usize) {
                Some(&h) => self.table[h as usize].handle(world, queue, &ev),
                None => panic!("no event kind {}", ev.kind.0),
            }
        }
    }
}

impl Handlers {
    /// The loop with the lookahead on: before each event, the handlers of the events 1 to
    /// `AHEAD` steps after it warm their state.
    #[inline(never)]
    fn run_ahead(&mut self, world: &mut World, queue: &mut EventQueue, stop: SimTime) {
        self.warm.clear();
        for (k, &h) in self.slot.iter().enumerate() {
            let steps = self.table[h as usize].warm_steps(world, EventKind(k as u16));
            self.warm.push(u32::from(steps) << 16 | u32::from(h));
        }
        while let Some(ev) = queue.pop_ahead(stop) {
            // The front read in place: an event is built only for a call that warms. Each step
            // by its own call, with its step a constant: the front is short only at the end.
            let front = queue.front_view();
            let n = front.len();
            if n >= 5 {
                self.warm_one::<5>(queue, front.entry(4));
            }
            if n >= 4 {
                self.warm_one::<4>(queue, front.entry(3));
            }
            if n >= 3 {
                self.warm_one::<3>(queue, front.entry(2));
            }
            if n >= 2 {
                self.warm_one::<2>(queue, front.entry(1));
            }
            if n >= 1 {
                self.warm_one::<1>(queue, front.entry(0));
            }
            match self.slot.get(ev.kind.0 as usize) {
                Some(&h) => self.table[h as usize].handle(world, queue, &ev),
                None => panic!("no event kind {}", ev.kind.0),
            }
        }
    }

    /// Calls the `prefetch` of `e`'s handler if its kind is warmed at step `STEP`.
    #[inline(always)]
    fn warm_one<const STEP: usize>(&self, queue: &EventQueue, e: &crate::event::Entry) {
        if let Some(&w) = self.warm.get(e.kind as usize)
            && w & (1 << (16 + STEP)) != 0
        {
            let h = &self.table[(w & 0xFFFF) as usize];
            let ev = crate::event::event_of(e);
            match STEP {
                5 => h.prefetch_5(queue, &ev),
                4 => h.prefetch_4(queue, &ev),
                3 => h.prefetch_3(queue, &ev),
                2 => h.prefetch_2(queue, &ev),
                _ => h.prefetch_1(queue, &ev),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::SourceId;

    fn counted(handlers: &mut Handlers, count: &std::sync::Arc<std::sync::atomic::AtomicU32>) -> EventKind {
        let kind = handlers.add_kind("counted");
        let count = count.clone();
        handlers.set(
            kind,
            Box::new(move |_: &mut World, _: &mut EventQueue, _: SimEvent| {
                count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }),
        );
        kind
    }

    #[test]
    fn each_event_reaches_its_kinds_handler_and_only_unset_kinds_are_unhandled() {
        let mut handlers = Handlers::default();
        let count = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let kind = counted(&mut handlers, &count);
        handlers.add_kind("forgotten");
        assert_eq!(handlers.unhandled(), vec!["forgotten"]);
        let (mut world, mut queue) = (World::new(), EventQueue::new());
        for t in 1..=3 {
            queue.schedule(SimTime(t), SourceId::ENGINE, kind, 0, 0);
        }
        assert_eq!(handlers.run(&mut world, &mut queue, SimTime::MAX), 3);
        assert_eq!(count.load(std::sync::atomic::Ordering::Relaxed), 3);
    }

    #[test]
    fn one_handler_serves_several_kinds_and_pauses_when_the_loop_stops() {
        // A handler that counts events per kind and how often it was paused.
        struct Shared(std::sync::Arc<std::sync::Mutex<(Vec<u16>, u32)>>);
        impl Handler for Shared {
            fn handle(&mut self, _: &mut World, _: &mut EventQueue, ev: &SimEvent) {
                self.0.lock().unwrap().0.push(ev.kind.0);
            }
            fn pause(&mut self, _: &mut World) {
                self.0.lock().unwrap().1 += 1;
            }
        }
        let log = std::sync::Arc::new(std::sync::Mutex::new((Vec::new(), 0)));
        let mut handlers = Handlers::default();
        let count = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let other = counted(&mut handlers, &count);
        let (a, b) = (handlers.add_kind("a"), handlers.add_kind("b"));
        handlers.set_for(&[a, b], Box::new(Shared(log.clone())));
        assert!(handlers.unhandled().is_empty());
        let (mut world, mut queue) = (World::new(), EventQueue::new());
        for (t, k) in [(1, a), (2, other), (3, b), (4, a), (5, b)] {
            queue.schedule(SimTime(t), SourceId::ENGINE, k, 0, 0);
        }
        assert_eq!(handlers.run(&mut world, &mut queue, SimTime(4)), 3);
        assert_eq!(*log.lock().unwrap(), (vec![a.0, b.0], 1), "paused once, at the stop");
        assert_eq!(handlers.run(&mut world, &mut queue, SimTime::MAX), 2);
        assert_eq!(*log.lock().unwrap(), (vec![a.0, b.0, a.0, b.0], 2));
        assert_eq!(count.load(std::sync::atomic::Ordering::Relaxed), 1);
    }

    #[test]
    fn a_wrapper_sees_every_kind_of_the_handler_it_wraps_and_passes_them_on() {
        struct Tap(Box<dyn Handler>, std::sync::Arc<std::sync::atomic::AtomicU32>);
        impl Handler for Tap {
            fn handle(&mut self, world: &mut World, queue: &mut EventQueue, ev: &SimEvent) {
                self.1.fetch_add(100, std::sync::atomic::Ordering::Relaxed);
                self.0.handle(world, queue, ev);
            }
        }
        let mut handlers = Handlers::default();
        let count = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let (a, b) = (handlers.add_kind("a"), handlers.add_kind("b"));
        let inner = count.clone();
        handlers.set_for(
            &[a, b],
            Box::new(move |_: &mut World, _: &mut EventQueue, _: SimEvent| {
                inner.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }),
        );
        let tapped = count.clone();
        handlers.wrap(b, |h| Box::new(Tap(h, tapped)));
        let (mut world, mut queue) = (World::new(), EventQueue::new());
        for (t, k) in [(1, a), (2, b)] {
            queue.schedule(SimTime(t), SourceId::ENGINE, k, 0, 0);
        }
        assert_eq!(handlers.run(&mut world, &mut queue, SimTime::MAX), 2);
        assert_eq!(
            count.load(std::sync::atomic::Ordering::Relaxed),
            202,
            "both seen by the tap, then handled"
        );
    }

    #[test]
    fn with_the_lookahead_on_each_event_is_warmed_at_every_distance_before_it_is_handled() {
        // Events 1..=8 at times 1..=8: before handling t, the loop warms t+5 (5 steps ahead)
        // down to t+1 (1 step), as far as there are events.
        struct Warmed(std::sync::Arc<std::sync::Mutex<Vec<(char, u64, usize)>>>);
        impl Handler for Warmed {
            fn handle(&mut self, _: &mut World, _: &mut EventQueue, ev: &SimEvent) {
                self.0.lock().unwrap().push(('h', ev.data, 0));
            }
            fn prefetch(&self, _: &EventQueue, ev: &SimEvent, ahead: usize) {
                self.0.lock().unwrap().push(('p', ev.data, ahead));
            }
        }
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut handlers = Handlers::default();
        let kind = handlers.add_kind("warmed");
        handlers.set(kind, Box::new(Warmed(log.clone())));
        let (mut world, mut queue) = (World::new(), EventQueue::new());
        queue.set_lookahead(16);
        for t in 1..=8 {
            queue.schedule(SimTime(t), SourceId::ENGINE, kind, 0, t);
        }
        assert_eq!(handlers.run(&mut world, &mut queue, SimTime::MAX), 8);
        let mut want = Vec::new();
        for t in 1..=8u64 {
            for ahead in (1..=AHEAD).rev() {
                if t + (ahead as u64) <= 8 {
                    want.push(('p', t + ahead as u64, ahead));
                }
            }
            want.push(('h', t, 0));
        }
        assert_eq!(*log.lock().unwrap(), want);
    }

    #[test]
    fn a_handler_is_warmed_only_at_the_steps_it_asks_for_each_kind() {
        // Kind `a` asks for steps 4 and 1, kind `b` for none; events alternate a, b, a, b, ...
        struct Steps(std::sync::Arc<std::sync::Mutex<Vec<(u64, usize)>>>, EventKind);
        impl Handler for Steps {
            fn handle(&mut self, _: &mut World, _: &mut EventQueue, _: &SimEvent) {}
            fn prefetch(&self, _: &EventQueue, ev: &SimEvent, ahead: usize) {
                self.0.lock().unwrap().push((ev.data, ahead));
            }
            fn warm_steps(&mut self, _: &mut World, kind: EventKind) -> u8 {
                if kind == self.1 { warm_at(&[4, 1]) } else { 0 }
            }
        }
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut handlers = Handlers::default();
        let (a, b) = (handlers.add_kind("a"), handlers.add_kind("b"));
        handlers.set_for(&[a, b], Box::new(Steps(log.clone(), a)));
        let (mut world, mut queue) = (World::new(), EventQueue::new());
        queue.set_lookahead(16);
        for t in 1..=8 {
            queue.schedule(SimTime(t), SourceId::ENGINE, if t % 2 == 1 { a } else { b }, 0, t);
        }
        assert_eq!(handlers.run(&mut world, &mut queue, SimTime::MAX), 8);
        // Before handling t: t + 4 at step 4 and t + 1 at step 1, if they are `a`s (odd).
        let mut want = Vec::new();
        for t in 1..=8u64 {
            for ahead in [4, 1] {
                let next = t + ahead as u64;
                if next <= 8 && next % 2 == 1 {
                    want.push((next, ahead));
                }
            }
        }
        assert_eq!(*log.lock().unwrap(), want);
    }

    #[test]
    #[should_panic(expected = "event kind `owner` has no handler to wrap")]
    fn wrapping_needs_a_handler() {
        let mut handlers = Handlers::default();
        let owner = handlers.add_kind("owner");
        handlers.wrap(owner, |h| h);
    }

    #[test]
    #[should_panic(expected = "event kind `a` already has a handler")]
    fn a_kind_cannot_get_a_second_handler() {
        let mut handlers = Handlers::default();
        let a = handlers.add_kind("a");
        let b = handlers.add_kind("b");
        handlers.set(a, Box::new(|_: &mut World, _: &mut EventQueue, _: SimEvent| {}));
        handlers.set_for(&[b, a], Box::new(|_: &mut World, _: &mut EventQueue, _: SimEvent| {}));
    }

    #[test]
    #[should_panic(expected = "no handler for event kind 1 (forgotten)")]
    fn an_event_of_a_kind_without_a_handler_names_the_kind() {
        let mut handlers = Handlers::default();
        let count = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        counted(&mut handlers, &count);
        let forgotten = handlers.add_kind("forgotten");
        let (mut world, mut queue) = (World::new(), EventQueue::new());
        queue.schedule(SimTime(1), SourceId::ENGINE, forgotten, 0, 0);
        handlers.run(&mut world, &mut queue, SimTime::MAX);
    }
}
