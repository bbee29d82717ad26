//! Running an assembled `App`: the phases in order and the event loop between beacon ticks.
//!
//! ```text
//! Build -> Start -> [events before the next tick -> BeaconTick -> beacon row]* -> Finish
//! ```
//! With a `SampleInterval`, the events between ticks also stop at every sample time for the
//! `Sample` phase (handlers paused, so its systems see every model's state).
//! Events at exactly a tick's time run after that tick's row, so a row shows the state at the
//! instant of its timestamp. Events at or after the stop time never run.
//!
//! A run stops early, at a tick, when its stop flag is set (`run_stoppable`: a signal) or a record
//! write failed (a full disk): `Finish` then runs at that tick's time. Both are looked at once per
//! tick, never per event, so the stop latency is at most one beacon interval of simulated time.

use crate::app::App;
use crate::beacon::BeaconColumns;
use crate::event::EventQueue;
use crate::phases::{BeaconTick, Build, Finish, Sample, Start};
use crate::records::{RecordId, Records};
use crate::shard::WindowSync;
use crate::time::SimTime;
use bevy_ecs::prelude::Resource;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Who this run is: what every record row names.
#[derive(Resource, Clone, Debug)]
pub struct RunInfo {
    /// The run's name.
    pub simulation: String,
    /// The spec's `job_id`: the simulation's name and a hash of its scenario, so identical
    /// scenarios give identical files.
    pub job_id: String,
    /// `RandomSeed`.
    pub seed: u64,
    /// This part's number, from 0.
    pub shard: u32,
    /// The parts the world runs in.
    pub shards: u32,
}

/// How often the `Sample` phase runs (from this interval on, while before the stop time): a
/// telemetry plugin inserts it at `Build`; without it the phase never runs and costs nothing.
#[derive(Resource, Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleInterval(pub SimTime);

/// What a run did, for the summary and the manifest.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    /// Simulated time reached.
    pub sim_time: SimTime,
    /// Wall-clock time taken, set-up included.
    pub wall: std::time::Duration,
    /// Of `wall`, the time before the first event: `Build`, `Start` and opening the records.
    pub setup: std::time::Duration,
    /// Events handled.
    pub events: u64,
    /// Beacon ticks run.
    pub beacons: u64,
    /// Set when the run stopped before its stop time; `sim_time` is then the tick it stopped at.
    pub stopped: Option<StopCause>,
}

/// Why a run stopped before its stop time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopCause {
    /// The stop flag held this (non-zero) value at a tick: the caller's code, a signal number.
    Flag(usize),
    /// A record write failed (`Records::error` says which and why).
    WriteError,
}

impl RunStats {
    /// Events handled per wall-clock second.
    pub fn events_per_sec(&self) -> f64 {
        self.events as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

/// How often to tick and whom to tell about progress.
pub struct RunOptions<'a> {
    /// Stop before the first event at or after this time.
    pub stop: SimTime,
    /// Time between beacon ticks.
    pub beacon_interval: SimTime,
    /// Called after every beacon tick with the simulated time and events so far.
    pub progress: Option<&'a mut dyn FnMut(SimTime, u64)>,
}

impl App {
    /// Runs the `Build` phase alone (for `plan` and tests that inspect the built world).
    pub fn build_world(&mut self) {
        self.world.run_schedule(Build);
    }

    /// Runs every phase and the event loop to `opts.stop`. `build_world` must not have been
    /// called before (it runs here).
    pub fn run(&mut self, opts: RunOptions<'_>) -> RunStats {
        self.run_inner(opts, None, None)
    }

    /// As `run`, but stops at the first beacon tick at which `stop_flag` is non-zero (a signal
    /// handler sets it), or a record write has failed, and runs `Finish` there.
    pub fn run_stoppable(&mut self, opts: RunOptions<'_>, stop_flag: &AtomicUsize) -> RunStats {
        self.run_inner(opts, Some(stop_flag), None)
    }

    /// As `run_stoppable`, as one shard of several (`crate::shard`): windows end where `sync`
    /// says and at every beacon tick, where the shards exchange what crosses between them and
    /// agree on stopping.
    pub fn run_shard(&mut self, opts: RunOptions<'_>, stop_flag: &AtomicUsize, sync: &mut dyn WindowSync) -> RunStats {
        self.run_inner(opts, Some(stop_flag), Some(sync))
    }

    fn run_inner(
        &mut self,
        mut opts: RunOptions<'_>,
        stop_flag: Option<&AtomicUsize>,
        mut sync: Option<&mut dyn WindowSync>,
    ) -> RunStats {
        let started = std::time::Instant::now();
        let missing = self.unhandled_kinds();
        assert!(
            missing.is_empty(),
            "event kinds without a handler: {missing:?} (a plugin is missing)"
        );
        self.world.run_schedule(Build);
        self.world.run_schedule(Start);
        let beacon = self.open_beacon();
        // A record that could not be opened: nothing to run for, the caller reports it.
        let open_failed = self.world.get_resource::<Records>().is_some_and(Records::open_failed);
        let mut queue = self.world.remove_resource::<EventQueue>().expect("EventQueue");
        let interval = opts.beacon_interval.max(SimTime(1));
        let mut next_tick = interval;
        let sample_every = self.world.get_resource::<SampleInterval>().map(|s| s.0.max(SimTime(1)));
        let mut next_sample = sample_every.unwrap_or(SimTime::MAX);
        // Without shards, one window to the end.
        let mut window = SimTime::MAX;
        if let Some(s) = sync.as_deref_mut() {
            // Every shard stops when one could not open its records.
            let wish = open_failed.then_some(StopCause::WriteError);
            let w = s.sync(&mut self.world, &mut queue, SimTime::ZERO, next_tick, wish);
            window = w.end;
            if w.stop.is_some() {
                opts.stop = SimTime(0);
            }
        } else if open_failed {
            opts.stop = SimTime(0);
        }
        let setup = started.elapsed();
        let mut beacons = 0;
        let mut stopped = None;
        let mut end = opts.stop;
        loop {
            let until = next_tick.min(opts.stop);
            if next_sample <= until.min(window) && next_sample < opts.stop {
                // A sample inside this stretch: the events before it, then the phase, paused.
                self.handlers.run(&mut self.world, &mut queue, next_sample);
                queue.advance_to(next_sample);
                self.world.insert_resource(queue);
                self.world.run_schedule(Sample);
                self.world.clear_trackers();
                queue = self.world.remove_resource::<EventQueue>().expect("EventQueue");
                let every = sample_every.expect("a sample time comes from an interval");
                next_sample = next_sample.checked_add(every).unwrap_or(SimTime::MAX);
                continue;
            }
            if window < until {
                // A window ends before the next tick: exchange with the other shards, go on.
                self.handlers.run_window(&mut self.world, &mut queue, window);
                let s = sync.as_deref_mut().expect("windows end early only in shards");
                window = s.sync(&mut self.world, &mut queue, window, next_tick, None).end;
                continue;
            }
            self.handlers.run(&mut self.world, &mut queue, until);
            if next_tick > opts.stop {
                break;
            }
            queue.advance_to(next_tick);
            let events = queue.processed();
            self.world.insert_resource(queue);
            self.world.run_schedule(BeaconTick);
            // Removal messages (a resource taken out and put back) would pile up for the whole
            // run: nothing else in the event loop ever clears them.
            self.world.clear_trackers();
            if let Some(id) = beacon {
                self.write_beacon_row(id, next_tick, events);
            }
            beacons += 1;
            queue = self.world.remove_resource::<EventQueue>().expect("EventQueue");
            if let Some(p) = opts.progress.as_deref_mut() {
                p(next_tick, events);
            }
            // Once per tick: the rows up to this tick are flushed (`write_beacon_row`). A tick at
            // the stop time itself ends the run anyway: that is no early stop.
            stopped = (next_tick < opts.stop).then(|| self.stop_cause(stop_flag)).flatten();
            if let Some(s) = sync.as_deref_mut() {
                // Every tick ends a window: the shards agree on stopping here, all or none.
                let cap = next_tick.checked_add(interval).unwrap_or(SimTime::MAX);
                let w = s.sync(&mut self.world, &mut queue, next_tick, cap, stopped);
                window = w.end;
                stopped = w.stop.filter(|_| next_tick < opts.stop);
            }
            if stopped.is_some() {
                end = next_tick;
                break;
            }
            // Wrapping here would restart the ticks at 0 forever; past the clock's end the one
            // tick left is never reached (`Timeline` keeps the stop below it).
            next_tick = next_tick.checked_add(interval).unwrap_or(SimTime(u64::MAX));
        }
        queue.advance_to(end);
        let events = queue.processed();
        self.world.insert_resource(queue);
        self.world.run_schedule(Finish);
        if let Some(mut r) = self.world.get_resource_mut::<Records>() {
            r.flush();
        }
        RunStats {
            sim_time: end,
            wall: started.elapsed(),
            setup,
            events,
            beacons,
            stopped,
        }
    }

    fn stop_cause(&self, stop_flag: Option<&AtomicUsize>) -> Option<StopCause> {
        if let Some(v) = stop_flag.map(|f| f.load(Ordering::Relaxed)).filter(|&v| v != 0) {
            return Some(StopCause::Flag(v));
        }
        let failed = self
            .world
            .get_resource::<Records>()
            .is_some_and(|r| r.error().is_some());
        failed.then_some(StopCause::WriteError)
    }

    fn open_beacon(&mut self) -> Option<RecordId> {
        let names = self.world.resource::<BeaconColumns>().names();
        let mut records = self.world.get_resource_mut::<Records>()?;
        let mut header = vec!["job_id", "time_utc", "sim_time_sec"];
        header.extend(names);
        header.push("events");
        // An error is kept in `Records` (`open_failed`) and reported by the caller.
        records.register("beacon", &header).ok()
    }

    fn write_beacon_row(&mut self, id: RecordId, t: SimTime, events: u64) {
        let values = self.world.resource::<BeaconColumns>().values(&self.world);
        let job = self
            .world
            .get_resource::<RunInfo>()
            .map(|r| r.job_id.clone())
            .unwrap_or_default();
        let mut records = self.world.resource_mut::<Records>();
        // The same row builder as every other record, so a column type is formatted one way.
        records.write_built(id, |r, clock| {
            r.str(&job).time_utc(clock).secs(t);
            for &v in &values {
                r.u64(v);
            }
            r.u64(events);
        });
        records.flush();
    }
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;
    use crate::store::{Held, Store};
    use bevy_ecs::prelude::*;

    struct Counter(u64);
    struct Count(Held<Counter>);
    impl Handler for Count {
        fn handle(&mut self, world: &mut World, q: &mut EventQueue, ev: &SimEvent) {
            self.0.rows(world)[0].0 += 1;
            // One event every 3 us, to 30 us.
            if q.now() < SimTime::from_us(30) {
                q.schedule(q.now() + SimTime::from_us(3), SourceId(0), ev.kind, 0, 0);
            }
        }
        fn pause(&mut self, world: &mut World) {
            self.0.put_back(world);
        }
    }

    #[derive(Resource, Default)]
    struct Seen(Vec<(SimTime, u64)>);

    #[test]
    fn the_sample_phase_runs_every_interval_and_sees_the_events_before_it() {
        let mut app = App::new();
        let mut store = Store::default();
        let e = app.world.spawn_empty().id();
        store.push(e, Counter(0));
        app.insert_resource(store);
        app.insert_resource(Seen::default());
        app.insert_resource(SampleInterval(SimTime::from_us(4)));
        app.add_systems(
            Sample,
            |s: Res<Store<Counter>>, q: Res<EventQueue>, mut seen: ResMut<Seen>| {
                seen.0.push((q.now(), s.rows()[0].0));
            },
        );
        let kind = app.add_handler("count", Count(Held::new("count")));
        let source = app.queue().add_source();
        app.queue().schedule(SimTime::ZERO, source, kind, 0, 0);
        app.run(RunOptions {
            stop: SimTime::from_us(20),
            beacon_interval: SimTime::from_us(10),
            progress: None,
        });
        // Events at 0, 3, 6, ...: a sample at t counts those before t (an event at t runs after
        // it), and none is taken at the stop time (20 us) or later.
        let us = SimTime::from_us;
        let want = [(us(4), 2), (us(8), 3), (us(12), 4), (us(16), 6)];
        assert_eq!(app.world.resource::<Seen>().0, want);
    }
}
