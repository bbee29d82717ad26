//! Shards: one run split over several worlds, each with its own event queue, advancing in
//! conservative windows and exchanging what crosses between them at each window's end.
//!
//! A shard runs the events of the nodes it owns. A value sent toward another shard goes into an
//! outbound channel (`EventQueue::mark_outbound`), which schedules nothing; at a window's end
//! every `ShardPort` moves those values out (`collect`) and the shard that owns the far end puts
//! them into its own channels (`deliver`), where they schedule their arrivals as usual.
//!
//! Windows are agreed by all shards: each reports the time of its earliest pending event and of
//! the earliest value it sends; the window ends at the smallest of those plus the lookahead (the
//! smallest delay of a channel that crosses shards), so nothing sent in a window can arrive
//! inside it. Event order is `(time, source, sequence)` in every shard, sources are numbered the
//! same in every shard, and each channel keeps its own order, so each shard handles its events
//! exactly as a single world would: the results do not depend on the shard count.
//!
//! Windows also end at every beacon tick, where the shards agree on stopping early (a signal, a
//! failed write), so that all of them stop at the same tick.

use crate::event::EventQueue;
use crate::run::StopCause;
use crate::time::SimTime;
use bevy_ecs::prelude::*;
use std::any::Any;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A batch of values for one other shard, in the form its `ShardPort` knows.
pub type Batch = Box<dyn Any + Send>;

/// What a model that sends values across shards provides: every shard registers the same ports
/// in the same order (the same plugins build them), so a batch reaches its counterpart.
pub trait ShardPort: Send + Sync + 'static {
    /// Moves what this shard sent toward other shards out of `queue`: `out[s]` gets the batch
    /// for shard `s` (left `None` when there is nothing). Returns the earliest arrival time among
    /// the values moved (`SimTime::MAX` for none) and their number.
    fn collect(&mut self, queue: &mut EventQueue, out: &mut [Option<Batch>]) -> (SimTime, u64);
    /// Puts a batch another shard's counterpart collected into `queue`.
    fn deliver(&mut self, queue: &mut EventQueue, batch: Batch);
    /// A batch as bytes, for shards in other processes (`decode` reads them back).
    fn encode(&self, batch: Batch) -> Vec<u8>;
    /// The batch `encode` wrote; `None` for bytes it did not write.
    fn decode(&self, bytes: &[u8]) -> Option<Batch>;
}

/// The shard ports of a world, in registration order.
#[derive(Resource, Default)]
pub struct ShardPorts(pub Vec<Box<dyn ShardPort>>);

/// What the shards agreed at a window's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// The end of the next window: handle every event before it, then synchronize again.
    pub end: SimTime,
    /// Stop at this tick: the first shard's (by number) reason, if any shard had one.
    pub stop: Option<StopCause>,
}

/// How a shard meets the others at a window's end (`App::run_shard`).
pub trait WindowSync {
    /// Exchanges at `now` (every event before it handled), with `wish` this shard's own reason
    /// to stop; the next window ends no later than `cap` (the next beacon tick).
    fn sync(
        &mut self,
        world: &mut World,
        queue: &mut EventQueue,
        now: SimTime,
        cap: SimTime,
        wish: Option<StopCause>,
    ) -> Window;
}

/// What a shard sends at a window's end (`collect`).
pub struct Outgoing<B> {
    /// The earliest of its pending events and of the values it sends (`SimTime::MAX`: none).
    pub next: SimTime,
    /// `out[destination][port]`, each batch as `pack` made it.
    pub out: Vec<Vec<B>>,
    /// Values sent.
    pub sent: u64,
}

/// Moves what every port of `world` sends toward the other `n - 1` shards out of `queue`, each
/// batch through `pack` (given its port, for the batch's bytes in another process).
pub fn collect<B>(
    world: &mut World,
    queue: &mut EventQueue,
    n: usize,
    mut pack: impl FnMut(&dyn ShardPort, Option<Batch>) -> B,
) -> Outgoing<B> {
    let mut next = queue.peek_time().unwrap_or(SimTime::MAX);
    let mut out: Vec<Vec<B>> = (0..n).map(|_| Vec::new()).collect();
    let mut sent = 0;
    if let Some(mut ports) = world.get_resource_mut::<ShardPorts>() {
        for port in ports.0.iter_mut() {
            let mut batches: Vec<Option<Batch>> = (0..n).map(|_| None).collect();
            let (earliest, count) = port.collect(queue, &mut batches);
            next = next.min(earliest);
            sent += count;
            for (dest, b) in batches.into_iter().enumerate() {
                out[dest].push(pack(port.as_ref(), b));
            }
        }
    }
    Outgoing { next, out, sent }
}

/// What one shard left in a slot for the others at one window's end.
#[derive(Default)]
struct Slot {
    next: SimTime,
    stop: Option<StopCause>,
    /// `out[destination][port]`.
    out: Vec<Vec<Option<Batch>>>,
}

/// The slots of every shard, two sets used in turn: a shard fills one set while a slower one
/// may still be reading the other, and the barrier between two windows keeps them apart.
struct Shared {
    barrier: SpinBarrier,
    slots: [Vec<Mutex<Slot>>; 2],
}

/// A barrier that spins before it yields: windows can be a few microseconds of work apart, and
/// a futex sleep and wake-up (`std::sync::Barrier`) cost more than that.
struct SpinBarrier {
    n: usize,
    arrived: AtomicUsize,
    generation: AtomicU64,
}

impl SpinBarrier {
    fn new(n: usize) -> Self {
        SpinBarrier {
            n,
            arrived: AtomicUsize::new(0),
            generation: AtomicU64::new(0),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            // More shards than free cores: let the others run.
            if spins < 2000 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Shards on threads of one process: they meet at a barrier and pass batches through memory.
pub struct ThreadSync {
    me: usize,
    n: usize,
    lookahead: SimTime,
    shared: Arc<Shared>,
    parity: usize,
    /// Windows synchronized so far.
    pub windows: u64,
    /// Values this shard sent to others.
    pub sent: u64,
}

impl ThreadSync {
    /// One `ThreadSync` per shard, for `n` shards whose crossing channels are at least
    /// `lookahead` long (more than zero).
    pub fn group(n: usize, lookahead: SimTime) -> Vec<ThreadSync> {
        assert!(lookahead > SimTime::ZERO, "shards need a lookahead above zero");
        let slots = || (0..n).map(|_| Mutex::new(Slot::default())).collect();
        let shared = Arc::new(Shared {
            barrier: SpinBarrier::new(n),
            slots: [slots(), slots()],
        });
        (0..n)
            .map(|me| ThreadSync {
                me,
                n,
                lookahead,
                shared: shared.clone(),
                parity: 0,
                windows: 0,
                sent: 0,
            })
            .collect()
    }
}

impl WindowSync for ThreadSync {
    fn sync(
        &mut self,
        world: &mut World,
        queue: &mut EventQueue,
        now: SimTime,
        cap: SimTime,
        wish: Option<StopCause>,
    ) -> Window {
        let outgoing = collect(world, queue, self.n, |_, b| b);
        self.sent += outgoing.sent;
        let (next, out) = (outgoing.next, outgoing.out);
        let set = &self.shared.slots[self.parity];
        *set[self.me].lock().expect("shard slot") = Slot { next, stop: wish, out };
        self.shared.barrier.wait();
        let mut global = SimTime::MAX;
        let mut stop = None;
        let mut incoming: Vec<Vec<Option<Batch>>> = Vec::with_capacity(self.n);
        for slot in set.iter() {
            let mut s = slot.lock().expect("shard slot");
            global = global.min(s.next);
            stop = stop.or(s.stop);
            incoming.push(std::mem::take(&mut s.out[self.me]));
        }
        if let Some(mut ports) = world.get_resource_mut::<ShardPorts>() {
            // Shard order, then port order: the same in every run.
            for batches in incoming {
                for (port, b) in batches.into_iter().enumerate() {
                    if let Some(b) = b {
                        ports.0[port].deliver(queue, b);
                    }
                }
            }
        }
        self.parity ^= 1;
        self.windows += 1;
        debug_assert!(global >= now, "an event before the window's end was left");
        Window {
            end: global.saturating_add(self.lookahead).min(cap),
            stop,
        }
    }
}

/// What one shard's run did, beside its `RunStats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShardStats {
    /// Windows it synchronized at.
    pub windows: u64,
    /// Values it sent to other shards.
    pub sent: u64,
}

/// Runs `apps` as the shards of one run, each on a thread of its own (shard 0 on the calling
/// thread, with `opts.progress`), windows at most `lookahead` apart. Returns each shard's stats.
pub fn run_threads(
    apps: &mut [crate::app::App],
    opts: crate::run::RunOptions<'_>,
    stop_flag: &std::sync::atomic::AtomicUsize,
    lookahead: SimTime,
) -> Vec<(crate::run::RunStats, ShardStats)> {
    let (stop, beacon_interval) = (opts.stop, opts.beacon_interval);
    let mut syncs = ThreadSync::group(apps.len(), lookahead);
    let (first, rest) = apps.split_first_mut().expect("at least one shard");
    let (sync0, others) = syncs.split_first_mut().expect("one sync per shard");
    std::thread::scope(|scope| {
        let handles: Vec<_> = rest
            .iter_mut()
            .zip(others.iter_mut())
            .map(|(app, sync)| {
                scope.spawn(move || {
                    let opts = crate::run::RunOptions {
                        stop,
                        beacon_interval,
                        progress: None,
                    };
                    let stats = app.run_shard(opts, stop_flag, sync);
                    (
                        stats,
                        ShardStats {
                            windows: sync.windows,
                            sent: sync.sent,
                        },
                    )
                })
            })
            .collect();
        let stats = first.run_shard(opts, stop_flag, sync0);
        let mut all = vec![(
            stats,
            ShardStats {
                windows: sync0.windows,
                sent: sync0.sent,
            },
        )];
        // A shard's panic aborts the process (`panic = "abort"`); in tests it is passed on.
        all.extend(
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))),
        );
        all
    })
}
