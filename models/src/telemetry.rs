//! Telemetry records, sampled every `telemetry.Interval` of simulated time (the engine's `Sample`
//! phase, handlers paused), so congestion control can be plotted rather than guessed:
//!
//! - `cc-rate`: one row per queue pair with a congestion controller, per sample: its rate
//!   (`CongestionControl::rate`), window and bytes in flight. The NIC that keeps the controllers
//!   writes them (`write_cc_rate`); a NIC without controllers writes none.
//! - `queue-depth`: one row per switch egress queue (port and class) holding bytes at a sample,
//!   and one with 0 bytes at the first sample it is empty again, so a plot steps down to zero
//!   rather than holding its last value; whatever the switch model (`SwitchModel::for_each_queue`).
//!
//! Both are off by default; a scenario turns them on with
//! `telemetry: (Interval: "10us", CcRate: true, QueueDepth: true)`. Off, no sample runs.

use crate::cc::QpCc;
use crate::sets::BuildSet;
use crate::switch::Switches;
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::IntoScheduleConfigs;
use engine::params::PositiveDuration;
use engine::prelude::*;
use engine::run::SampleInterval;
use serde::{Deserialize, Serialize};

/// The scenario's `telemetry` section.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Resource)]
#[serde(deny_unknown_fields, default)]
pub struct TelemetryConfig {
    /// Time between samples; above 0. Default 10 us (ours: a few RTTs of the default fabric,
    /// fine enough to see DCQCN's rate steps).
    pub Interval: PositiveDuration,
    /// Write the `cc-rate` record. Default false.
    pub CcRate: bool,
    /// Write the `queue-depth` record. Default false.
    pub QueueDepth: bool,
}

impl Default for TelemetryConfig {
    fn default() -> Self {
        TelemetryConfig {
            Interval: PositiveDuration(Duration(SimTime::from_us(10))),
            CcRate: false,
            QueueDepth: false,
        }
    }
}

/// The `cc-rate` record's columns.
pub const CC_RATE_COLUMNS: [&str; 7] = [
    "sim_time_sec",
    "host",
    "qpn",
    "connection",
    "rate_bps",
    "window_bytes",
    "in_flight_bytes",
];

/// The `queue-depth` record's columns.
pub const QUEUE_DEPTH_COLUMNS: [&str; 6] = ["sim_time_sec", "switch", "node_id", "port", "class", "bytes"];

/// The open `cc-rate` record (present only when the scenario asks for it).
#[derive(Resource, Clone, Copy)]
pub struct CcRateRecord(pub RecordId);

/// The open `queue-depth` record, and the queues that held bytes at the last sample.
#[derive(Resource)]
struct QueueDepthRecord {
    id: RecordId,
    last: Vec<(u32, u16, u8)>,
}

/// Adds the sampling the scenario's `telemetry` asks for (none: nothing at all).
pub struct TelemetryPlugin(pub TelemetryConfig);

impl Plugin for TelemetryPlugin {
    fn build(&self, app: &mut App) {
        let c = &self.0;
        if !(c.CcRate || c.QueueDepth) {
            return;
        }
        app.insert_resource(c.clone());
        app.insert_resource(SampleInterval(c.Interval.0.0));
        // After every plugin's own `Start` (an exclusive system must be ordered against them).
        app.add_systems(Start, open.after(BuildSet::Applications));
        if c.QueueDepth {
            // NICs sample in `BuildSet::Nics`: one order, so the phase has no ambiguity.
            app.add_systems(Sample, sample_queues.in_set(BuildSet::Fabric));
        }
    }
}

/// Opens the records asked for (`Start`); one that cannot be created stays closed and `Records`
/// reports it.
fn open(world: &mut World) {
    let c = world.resource::<TelemetryConfig>().clone();
    let Some(mut records) = world.get_resource_mut::<Records>() else {
        return;
    };
    let cc = c
        .CcRate
        .then(|| records.register("cc-rate", &CC_RATE_COLUMNS).ok())
        .flatten();
    let qd = c
        .QueueDepth
        .then(|| records.register("queue-depth", &QUEUE_DEPTH_COLUMNS).ok())
        .flatten();
    if let Some(id) = cc {
        world.insert_resource(CcRateRecord(id));
    }
    if let Some(id) = qd {
        world.insert_resource(QueueDepthRecord { id, last: Vec::new() });
    }
}

/// One `cc-rate` row: queue pair `qpn` of `host` (on `connection`), sampled at `now`. A
/// controller without a rate, or a gate without a window, leaves that field empty.
pub fn write_cc_rate(
    records: &mut Records,
    id: CcRateRecord,
    now: SimTime,
    (host, qpn, connection): (u32, u32, u32),
    cc: &QpCc,
    in_flight: u64,
) {
    let rate = cc.controller.rate();
    let window = cc.gate.window;
    records.write_built(id.0, |r, _| {
        r.secs(now).u64(host.into()).u64(qpn.into()).u64(connection.into());
        match rate {
            Some(rate) => r.u64(rate.0),
            None => r.str(""),
        };
        if window == u64::MAX {
            r.str("");
        } else {
            r.u64(window);
        }
        r.u64(in_flight);
    });
}

/// Writes a `queue-depth` row for every queue holding bytes now or at the previous sample, in
/// (switch, port, class) order.
fn sample_queues(world: &mut World) {
    let now = world.resource::<EventQueue>().now();
    let mut held = Vec::new();
    Switches::for_each_queue(world, &mut |node, port, class, bytes| {
        if bytes > 0 {
            held.push((node, port, class, bytes));
        }
    });
    held.sort_unstable();
    let fabric = world.get_resource::<crate::fabric::Fabric>().map(|f| f.0.clone());
    let name = |node: u32| {
        fabric
            .as_ref()
            .map_or("", |f| f.topology.nodes[node as usize].name.as_str())
    };
    let Some(mut rec) = world.remove_resource::<QueueDepthRecord>() else {
        return;
    };
    let mut rows: Vec<(u32, u16, u8, u64)> = held.clone();
    // Queues that emptied since the last sample get one row of 0.
    rows.extend(
        rec.last
            .iter()
            .filter(|k| held.binary_search_by(|h| (h.0, h.1, h.2).cmp(k)).is_err())
            .map(|&(n, p, c)| (n, p, c, 0)),
    );
    rows.sort_unstable();
    if let Some(mut records) = world.get_resource_mut::<Records>() {
        for &(node, port, class, bytes) in &rows {
            records.write_built(rec.id, |r, _| {
                r.secs(now)
                    .str(name(node))
                    .u64(node.into())
                    .u64(port.into())
                    .u64(class.into())
                    .u64(bytes);
            });
        }
    }
    rec.last = held.iter().map(|&(n, p, c, _)| (n, p, c)).collect();
    world.insert_resource(rec);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_off_and_ten_microseconds() {
        let c: TelemetryConfig = ron::from_str("()").unwrap();
        assert_eq!(c, TelemetryConfig::default());
        assert!(!c.CcRate && !c.QueueDepth);
        assert_eq!(c.Interval.0.0, SimTime::from_us(10));
        let c: TelemetryConfig = ron::from_str("(Interval: \"2us\", QueueDepth: true)").unwrap();
        assert_eq!(c.Interval.0.0, SimTime::from_us(2));
        assert!(c.QueueDepth);
        assert!(ron::from_str::<TelemetryConfig>("(Interval: 0)").is_err());
        assert!(ron::from_str::<TelemetryConfig>("(Intervl: 1)").is_err());
    }
}
