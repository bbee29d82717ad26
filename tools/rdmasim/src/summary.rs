//! The run summary printed at the end of `run`, and the manifest written beside the records.

use crate::interrupt::Interrupted;
use crate::scenario::Loaded;
use bevy_ecs::prelude::*;
use engine::prelude::*;
use models::application::AppReporters;
use models::fabric::conservation::Conservation;
use models::fabric::faults::FaultCounters;
use models::nic::{DeliveredInWindow, NicLosses};
use models::watchdog::WatchdogReport;
use serde::Serialize;
use std::collections::BTreeMap;

/// One Initiator-Responder pair's goodput in the recording window.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct PairGoodput {
    /// The Initiator's host id.
    pub initiator: u32,
    /// The Responder's host id.
    pub responder: u32,
    /// WQEs completed in the recording window.
    pub wqes: u64,
    /// Payload bytes the Responder's NIC accepted in the recording window.
    pub bytes: u64,
    /// `bytes` x 8 / `RunTime` (of an interrupted run: the part of the window before it stopped).
    pub gbps: f64,
}

/// What a run did: printed at its end, and the core of its manifest.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Summary {
    /// The run's name.
    pub simulation: String,
    /// Simulated seconds run.
    pub sim_time_sec: f64,
    /// Wall-clock seconds the run took.
    pub wall_sec: f64,
    /// Of `wall_sec`, the seconds before the first event (building the world, starting it,
    /// opening the records); of a sharded run, the longest shard's.
    #[serde(default)]
    pub setup_sec: f64,
    /// Events handled.
    pub events: u64,
    /// Events handled per wall-clock second.
    pub events_per_sec: f64,
    /// Data packets the hosts' NICs put on the wire.
    pub data_packets: u64,
    /// Data packets per wall-clock second (the performance target's measure).
    pub data_packets_per_wall_sec: f64,
    /// WQEs the applications posted.
    pub wqes_posted: u64,
    /// WQEs that completed.
    pub wqes_completed: u64,
    /// Each pair's goodput.
    pub pairs: Vec<PairGoodput>,
    /// Every data packet accounted for, per class, and the verdict (`scenarios/README.md`,
    /// "Conservation").
    pub conservation: Conservation,
    /// What the NICs lost or resent.
    pub nic_losses: NicLosses,
    /// What the progress watchdog found (`models::watchdog`): stalled connections, PFC deadlocks.
    pub watchdog: WatchdogReport,
    /// What the injected faults dropped; absent when the scenario injects none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub faults: Option<FaultCounters>,
    /// Set when a signal stopped the run early (absent from the JSON otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<Interrupted>,
}

impl Summary {
    /// Whether the run broke an invariant the simulator guarantees (exit code 1).
    pub fn failed(&self) -> bool {
        !self.conservation.ok()
    }
}

/// The summary of the run in `world`, named `name`, from the run loop's `stats`.
pub fn summarize(world: &mut World, name: &str, stats: &RunStats) -> Summary {
    let data_packets: u64 = world
        .get_resource::<engine::store::Store<models::nic::HostPort>>()
        .map_or(0, |s| s.rows().iter().map(|p| p.wire.data_packets).sum());
    let mut run_time = world.resource::<SimulationParameters>().RunTime.0.as_secs_f64();
    // A run stopped early recorded only the part of its window before the stop.
    if let (Some(_), Some(t)) = (stats.stopped, world.get_resource::<Timeline>()) {
        run_time = stats
            .sim_time
            .min(t.recording_end)
            .saturating_sub(t.recording_start)
            .as_secs_f64();
    }
    // WQEs completed in the window, and the payload delivered in it: a WQE completed early in
    // a short window mostly crossed the fabric before it, so counting whole WQEs can exceed line
    // rate; the bytes the Responders' NICs accepted in the window cannot.
    let mut per_pair: BTreeMap<(u32, u32), (u64, u64)> = BTreeMap::new();
    let delivered = world
        .get_resource::<DeliveredInWindow>()
        .map(|d| d.bytes.clone())
        .unwrap_or_default();
    let reporters = world
        .get_resource::<AppReporters>()
        .map(|r| r.0.clone())
        .unwrap_or_default();
    let (mut posted, mut completed) = (0, 0);
    for report in reporters {
        let figures = report(world);
        posted += figures.wqes_posted;
        completed += figures.wqes_completed;
        for c in figures.connections {
            let e = per_pair.entry((c.initiator, c.responder)).or_default();
            e.0 += c.recorded_wqes;
            e.1 += delivered.get(c.connection as usize).copied().unwrap_or(0);
        }
    }
    let pairs = per_pair
        .into_iter()
        .map(|((initiator, responder), (wqes, bytes))| PairGoodput {
            initiator,
            responder,
            wqes,
            bytes,
            gbps: if run_time > 0.0 {
                bytes as f64 * 8.0 / run_time / 1e9
            } else {
                0.0
            },
        })
        .collect();
    let wall = stats.wall.as_secs_f64().max(1e-9);
    Summary {
        simulation: name.to_string(),
        sim_time_sec: stats.sim_time.as_secs_f64(),
        wall_sec: stats.wall.as_secs_f64(),
        setup_sec: stats.setup.as_secs_f64(),
        events: stats.events,
        events_per_sec: stats.events as f64 / wall,
        data_packets,
        data_packets_per_wall_sec: data_packets as f64 / wall,
        wqes_posted: posted,
        wqes_completed: completed,
        pairs,
        conservation: world.get_resource::<Conservation>().cloned().unwrap_or_default(),
        nic_losses: world.get_resource::<NicLosses>().copied().unwrap_or_default(),
        watchdog: world.get_resource::<WatchdogReport>().cloned().unwrap_or_default(),
        faults: world.get_resource::<FaultCounters>().cloned(),
        interrupted: None,
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "simulation      {}", self.simulation)?;
        writeln!(f, "simulated time  {:.6} s", self.sim_time_sec)?;
        if let Some(i) = &self.interrupted {
            writeln!(f, "interrupted by {} at {:.6} s", i.signal, i.at_sim_time_sec)?;
        }
        writeln!(
            f,
            "wall time       {:.3} s (set-up {:.3} s)",
            self.wall_sec, self.setup_sec
        )?;
        // The rate of the events alone: building a large fabric and its routes is no event.
        let running = (self.wall_sec - self.setup_sec).max(1e-9);
        writeln!(
            f,
            "events          {} ({:.2} M events/s; {:.2} M after set-up)",
            self.events,
            self.events_per_sec / 1e6,
            self.events as f64 / running / 1e6
        )?;
        writeln!(
            f,
            "data packets    {} ({:.2} M per wall second)",
            self.data_packets,
            self.data_packets_per_wall_sec / 1e6
        )?;
        writeln!(
            f,
            "WQEs            {} posted, {} completed",
            self.wqes_posted, self.wqes_completed
        )?;
        writeln!(f, "goodput per pair in the recording window:")?;
        for p in &self.pairs {
            writeln!(
                f,
                "  {:>5} -> {:<5} {:>9} WQEs {:>9.2} Gbps",
                p.initiator, p.responder, p.wqes, p.gbps
            )?;
        }
        write_conservation(f, &self.conservation, &self.nic_losses)?;
        if let Some(c) = &self.faults {
            write_faults(f, c)?;
        }
        let w = &self.watchdog;
        if w.is_empty() {
            writeln!(f, "watchdog        no stalled connection, no PFC deadlock")?;
        } else {
            writeln!(
                f,
                "watchdog        {} stalled connections, {} PFC deadlocks:",
                w.stalls.len(),
                w.deadlocks.len()
            )?;
            for s in &w.stalls {
                writeln!(f, "  stalled: {s}")?;
            }
            for d in &w.deadlocks {
                writeln!(f, "  {d}")?;
            }
        }
        Ok(())
    }
}

/// The injected faults' line: what they dropped, and how much each entry did.
fn write_faults(f: &mut std::fmt::Formatter<'_>, c: &FaultCounters) -> std::fmt::Result {
    let data: u64 = c.data.iter().map(|t| t.packets).sum();
    let entries: Vec<String> = c
        .by_fault
        .iter()
        .enumerate()
        .map(|(i, n)| format!("faults[{i}] {n}"))
        .collect();
    writeln!(
        f,
        "faults          {} data packets and {} other frames lost ({})",
        data,
        c.other.packets,
        entries.join(", ")
    )
}

/// The conservation check's lines of the summary.
fn write_conservation(f: &mut std::fmt::Formatter<'_>, c: &Conservation, nic: &NicLosses) -> std::fmt::Result {
    let [sent, delivered, dropped, in_flight] = c.totals();
    writeln!(
        f,
        "conservation    {}: {} data packets sent = {} delivered + {} dropped + {} in flight",
        if c.ok() { "ok" } else { "VIOLATED" },
        sent.packets,
        delivered.packets,
        dropped.packets,
        in_flight.packets
    )?;
    for b in c.classes.iter().filter(|b| b.dropped().packets > 0) {
        writeln!(
            f,
            "  class {} drops: {} lossy limit, {} headroom, {} no route, {} injected fault",
            b.class,
            b.dropped_lossy_limit.packets,
            b.dropped_headroom.packets,
            b.dropped_no_route.packets,
            b.dropped_fault.packets
        )?;
    }
    writeln!(
        f,
        "NIC losses      {} receive drops, {} out of sequence, {} timeouts, {} resent",
        nic.receive_drops, nic.out_of_sequence, nic.timeouts, nic.retransmitted
    )?;
    for w in &c.warnings {
        writeln!(f, "warning: {w}")?;
    }
    for v in &c.violations {
        writeln!(f, "violation: {v}")?;
    }
    Ok(())
}

/// The manifest: what ran, with what, and how long it took.
#[derive(Debug, Serialize)]
pub struct Manifest<'a> {
    /// The run's name.
    pub simulation: &'a str,
    /// The scenario file, as given.
    pub scenario_file: &'a str,
    /// FNV-1a of the scenario text after overrides, 16 hex digits.
    pub scenario_hash: String,
    /// The records' `job_id`.
    pub job_id: String,
    /// `RandomSeed`.
    pub seed: u64,
    /// rdmasim's version.
    pub version: &'static str,
    /// Parts the world ran in (1).
    pub shards: u32,
    /// Wall-clock seconds the run took.
    pub wall_sec: f64,
    /// Events handled.
    pub events: u64,
    /// The record files written.
    pub files: Vec<String>,
    /// The scenario as run: its text after `--set`, so a report or a rerun needs nothing else.
    pub scenario: &'a str,
    /// The recording window, `[start, end]` in simulated seconds.
    pub recording_window_sec: [f64; 2],
    /// `BeaconReportInterval`, in seconds.
    pub beacon_interval_sec: f64,
    /// Each pair's goodput in the recording window, as in the summary.
    pub pairs: &'a [PairGoodput],
    /// The conservation check, as in the summary.
    pub conservation: &'a Conservation,
    /// The NICs' losses, as in the summary.
    pub nic_losses: NicLosses,
    /// The watchdog's findings (as in the summary) and whether they fail the run.
    pub watchdog: ManifestWatchdog<'a>,
    /// What the injected faults dropped (as in the summary); absent without faults.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub faults: Option<&'a FaultCounters>,
    /// A signal stopped the run at this tick; absent when the run reached its stop time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<&'a Interrupted>,
}

/// The manifest's `watchdog`: the report and its verdict.
#[derive(Debug, Serialize)]
pub struct ManifestWatchdog<'a> {
    /// `Fatal` (or `--strict`) and something found: `rdmasim run` exits 1.
    pub failed: bool,
    /// What the watchdog found.
    #[serde(flatten)]
    pub report: &'a WatchdogReport,
}

/// The manifest of a run of `loaded` named `name` that wrote `files`.
pub fn manifest<'a>(loaded: &'a Loaded, name: &'a str, summary: &'a Summary, files: Vec<String>) -> Manifest<'a> {
    shard_manifest(loaded, name, summary, files, 1)
}

/// The manifest of one of `shards` shards of a run (`manifest` for one).
pub fn shard_manifest<'a>(
    loaded: &'a Loaded,
    name: &'a str,
    summary: &'a Summary,
    files: Vec<String>,
    shards: u32,
) -> Manifest<'a> {
    Manifest {
        simulation: name,
        scenario_file: &loaded.file,
        scenario_hash: format!("{:016x}", loaded.hash),
        job_id: crate::assemble::job_id(name, loaded),
        seed: loaded.scenario.simulation.RandomSeed,
        version: env!("CARGO_PKG_VERSION"),
        shards,
        wall_sec: summary.wall_sec,
        events: summary.events,
        files,
        scenario: &loaded.text,
        recording_window_sec: [
            loaded.timeline.recording_start.as_secs_f64(),
            loaded.timeline.recording_end.as_secs_f64(),
        ],
        beacon_interval_sec: loaded.timeline.beacon_interval.as_secs_f64(),
        pairs: &summary.pairs,
        conservation: &summary.conservation,
        nic_losses: summary.nic_losses,
        watchdog: ManifestWatchdog {
            failed: summary.watchdog_failed(loaded),
            report: &summary.watchdog,
        },
        faults: summary.faults.as_ref(),
        interrupted: summary.interrupted.as_ref(),
    }
}

impl Summary {
    /// Whether the watchdog's findings fail the run: `watchdog.Fatal` (`--strict` sets it) and
    /// something found.
    pub fn watchdog_failed(&self, loaded: &Loaded) -> bool {
        loaded.scenario.watchdog.Fatal && !self.watchdog.is_empty()
    }
}
