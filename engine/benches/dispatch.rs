//! The dispatch path's cost per event, beside a bare `BinaryHeap` doing the same pops and pushes.
//!
//! A closed system: `PENDING` events wait at all times; each handled event schedules one new event
//! at `now + delay`, the delay and the scheduling source drawn from a cheap deterministic generator
//! (the same sequence in both loops). The dispatch side goes through the real path: a plugin
//! declares an event kind and its handler, and `App::run` runs them with `Handlers::run`. Each
//! `App::run` call handles ~`EVENTS_PER_RUN` events, so its phases (a few microseconds) stay well
//! under 1% of the measured time. Criterion's "time" is nanoseconds per event.
//!
//! ```text
//! cargo bench -p rdmasim-engine --bench dispatch -- --warm-up-time 1 --measurement-time 5
//! ```

use bevy_ecs::world::World;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use engine::prelude::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::{Duration as WallDuration, Instant};

/// Sources that schedule events; a power of two so the draw is a mask.
const SOURCES: usize = 1024;
/// Delays are uniform in [1, 2^21] ps, so the mean is ~1.05 us.
const DELAY_BITS: u32 = 21;
const MEAN_DELAY_PS: u64 = 1 << (DELAY_BITS - 1);
/// Events one `App::run` call handles, on average.
const EVENTS_PER_RUN: u64 = 200_000;

/// A 64-bit LCG (Knuth's MMIX constants): one multiply-add per draw. Its high bits are good enough
/// for spreading delays and sources; the low bits are not used.
struct Draws(u64);

impl Draws {
    #[inline]
    fn next(&mut self) -> (u64, usize) {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let delay = 1 + (self.0 >> (64 - DELAY_BITS));
        let source = (self.0 >> 32) as usize & (SOURCES - 1);
        (delay, source)
    }
}

/// The closed system as a plugin: sources, one event kind, its handler and the initial events.
struct ClosedLoopPlugin {
    pending: usize,
    seed: u64,
}

impl Plugin for ClosedLoopPlugin {
    fn build(&self, app: &mut App) {
        let kind = app.add_event_kind("bench.tick");
        let sources: [SourceId; SOURCES] = std::array::from_fn(|_| app.queue().add_source());
        let mut draws = Draws(self.seed);
        {
            let mut q = app.queue();
            for i in 0..self.pending {
                let (delay, s) = draws.next();
                q.schedule(SimTime(delay), sources[s], kind, i as u32, 0);
            }
        }
        app.set_handler(kind, move |_: &mut World, q: &mut EventQueue, ev: SimEvent| {
            let (delay, s) = draws.next();
            q.schedule(ev.time + SimTime(delay), sources[s], ev.kind, ev.target, ev.data + 1);
        });
    }
}

/// Runs the app in windows of simulated time until at least `iters` events have been handled,
/// and returns the wall time scaled to exactly `iters` events.
fn run_events(app: &mut App, stop: &mut SimTime, window: SimTime, iters: u64) -> WallDuration {
    let first = app.world.resource::<EventQueue>().processed();
    let started = Instant::now();
    let mut handled = 0;
    while handled < iters {
        *stop += window;
        let stats = app.run(RunOptions {
            stop: *stop,
            beacon_interval: SimTime::MAX,
            progress: None,
        });
        handled = stats.events - first;
    }
    started.elapsed().mul_f64(iters as f64 / handled as f64)
}

/// The baseline: the same pops and pushes on a `BinaryHeap` of packed `u128` keys
/// (time, source, sequence), with nothing else around them.
fn bare_heap(pending: usize, seed: u64) -> (BinaryHeap<Reverse<u128>>, Draws) {
    let mut draws = Draws(seed);
    let mut heap = BinaryHeap::with_capacity(pending);
    for i in 0..pending {
        let (delay, s) = draws.next();
        heap.push(Reverse(key(delay, s, i as u64)));
    }
    (heap, draws)
}

#[inline]
fn key(time: u64, source: usize, seq: u64) -> u128 {
    ((time as u128) << 64) | ((source as u128) << 40) | seq as u128
}

fn dispatch(c: &mut Criterion) {
    let mut group = c.benchmark_group("dispatch");
    for pending in [1_000usize, 10_000] {
        group.bench_function(BenchmarkId::new("bare_binary_heap", pending), |b| {
            let (mut heap, mut draws) = bare_heap(pending, 7);
            let mut seq = pending as u64;
            b.iter_custom(|iters| {
                let started = Instant::now();
                for _ in 0..iters {
                    let Reverse(k) = heap.pop().expect("the system is closed");
                    let (delay, s) = draws.next();
                    heap.push(Reverse(key((k >> 64) as u64 + delay, s, seq)));
                    seq += 1;
                }
                black_box(heap.peek());
                started.elapsed()
            });
        });

        group.bench_function(BenchmarkId::new("app_handlers", pending), |b| {
            let mut app = App::new();
            app.add_plugins(ClosedLoopPlugin { pending, seed: 7 });
            let window = SimTime(EVENTS_PER_RUN * MEAN_DELAY_PS / pending as u64);
            let mut stop = SimTime::ZERO;
            b.iter_custom(|iters| run_events(&mut app, &mut stop, window, iters));
            assert_eq!(app.world.resource::<EventQueue>().pending(), pending);
        });
    }
    group.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
