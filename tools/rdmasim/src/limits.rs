//! What a run would cost, estimated from the scenario alone before it starts: rows of each
//! record and memory held by outstanding WQEs. A run past [`MAX_ROWS`] or [`MAX_MEMORY_BYTES`]
//! is refused (unless `run --force`) naming the fields that drive it: a BeaconReportInterval of
//! 1 ps or a StartTime of 1e6 s would otherwise write for days and fill the disk.

use crate::scenario::Loaded;
use engine::SimTime;
use engine::scenario::ScenarioError;
use models::application::EstimateContext;

/// The most rows of one record a run may write: 100 million (about 10 GB of CSV at ~100 B a
/// row). The default scenario writes 506 beacon rows and under a million rdma-perf rows.
pub const MAX_ROWS: u64 = 100_000_000;
/// The most memory outstanding WQEs may hold: 8 GiB.
pub const MAX_MEMORY_BYTES: u64 = 8 << 30;
/// Bytes one outstanding WQE holds at least: its `Wqe` record (ids, size, timestamps).
pub const WQE_BYTES: u64 = std::mem::size_of::<models::nic::Wqe>() as u64;

/// The estimates for one scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Estimate {
    /// One per tick: the ticks at k x BeaconReportInterval up to the stop time.
    pub beacon_rows: u64,
    /// Each application record's rows at most, summed over the applications that write it
    /// (rdma-perf: one per WQE the Initiators' links can carry from the client start window to
    /// the stop time, line rate x time / (8 x 250,000 B)), in the order first written.
    pub records: Vec<(&'static str, u64)>,
    /// WQEs outstanding at most (connections x MaxPendingWQEs), summed over the applications.
    pub outstanding_wqes: u64,
    /// The field that drives most of them (`applications[0].MaxPendingWQEs`).
    pub outstanding_field: String,
}

/// Beacon ticks in `(0, stop]` at every `interval`.
pub fn beacon_rows(stop: SimTime, interval: SimTime) -> u64 {
    stop.0 / interval.0.max(1)
}

impl Estimate {
    /// Each application estimates its own part (`ApplicationModel::estimate`).
    pub fn of(l: &Loaded) -> Estimate {
        let mut host_rate_bps = vec![0u128; l.topology.num_hosts];
        for k in &l.topology.links {
            for n in [k.a.0, k.b.0] {
                if let Some(r) = host_rate_bps.get_mut(n as usize) {
                    *r += k.rate.0 as u128;
                }
            }
        }
        let ctx = EstimateContext {
            host_rate_bps: &host_rate_bps,
            span: l.timeline.stop.saturating_sub(l.timeline.client_window_start),
        };
        let mut records: Vec<(&'static str, u64)> = Vec::new();
        let (mut outstanding_wqes, mut most) = (0u64, (0u64, String::new()));
        for (i, (a, part)) in l.scenario.applications.iter().zip(&l.parts).enumerate() {
            let e = a.value.estimate(part, &ctx);
            if let Some((name, rows)) = e.record {
                match records.iter_mut().find(|r| r.0 == name) {
                    Some(r) => r.1 = r.1.saturating_add(rows),
                    None => records.push((name, rows)),
                }
            }
            outstanding_wqes = outstanding_wqes.saturating_add(e.outstanding_wqes);
            if most.1.is_empty() || e.outstanding_wqes > most.0 {
                let field = match e.outstanding_field {
                    "" => format!("applications[{i}]"),
                    f => format!("applications[{i}].{f}"),
                };
                most = (e.outstanding_wqes, field);
            }
        }
        Estimate {
            beacon_rows: beacon_rows(l.timeline.stop, l.timeline.beacon_interval),
            records,
            outstanding_wqes,
            outstanding_field: most.1,
        }
    }

    /// The memory the outstanding WQEs take at most, at `WQE_BYTES` each.
    pub fn memory_bytes(&self) -> u64 {
        self.outstanding_wqes.saturating_mul(WQE_BYTES)
    }

    /// The first limit passed, as an error at the field that drives it.
    pub fn check(&self, l: &Loaded) -> Result<(), Box<ScenarioError>> {
        let at = |field: &str, msg: String| {
            Err(Box::new(ScenarioError::at_field(
                &l.file,
                l.text.clone(),
                field,
                format!("{msg} (`run --force` runs it anyway)"),
            )))
        };
        if self.beacon_rows > MAX_ROWS {
            return at(
                "simulation.BeaconReportInterval",
                format!(
                    "the beacon record would have {} rows (stop time {} s / BeaconReportInterval {} s), over the limit of {MAX_ROWS}: raise simulation.BeaconReportInterval or shorten the timeline (simulation.StartTime to CoolDown)",
                    self.beacon_rows,
                    l.timeline.stop.as_secs_f64(),
                    l.timeline.beacon_interval.as_secs_f64()
                ),
            );
        }
        for &(record, rows) in &self.records {
            if rows > MAX_ROWS {
                return at(
                    "simulation.RunTime",
                    format!(
                        "the {record} record could have {rows} rows (what the applications can complete over {} s), over the limit of {MAX_ROWS}: shorten simulation.RunTime (or the timeline)",
                        l.timeline
                            .stop
                            .saturating_sub(l.timeline.client_window_start)
                            .as_secs_f64()
                    ),
                );
            }
        }
        if self.memory_bytes() > MAX_MEMORY_BYTES {
            return at(
                &self.outstanding_field,
                format!(
                    "{} outstanding WQEs (connections x MaxPendingWQEs) would hold {} bytes at {WQE_BYTES} B each, over the limit of {MAX_MEMORY_BYTES} (8 GiB): lower MaxPendingWQEs or NumConnections",
                    self.outstanding_wqes,
                    self.memory_bytes()
                ),
            );
        }
        Ok(())
    }
}

impl std::fmt::Display for Estimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "estimate: {} beacon rows, ", self.beacon_rows)?;
        for (record, rows) in &self.records {
            write!(f, "at most {rows} {record} rows, ")?;
        }
        write!(
            f,
            "{} outstanding WQEs (at least {} bytes)",
            self.outstanding_wqes,
            self.memory_bytes()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beacon_rows_are_ticks_up_to_the_stop() {
        // Default: stop 0.506 s, 1 ms beacons: ticks at 1..=506 ms.
        assert_eq!(beacon_rows(SimTime(506_000_000_000), SimTime(1_000_000_000)), 506);
        // 1 ps beacons: one per picosecond, 5.06e11.
        assert_eq!(beacon_rows(SimTime(506_000_000_000), SimTime(1)), 506_000_000_000);
        // StartTime 1e6 s, 0.1 ms beacons: 1e6 / 1e-4 = 1e10 ticks (plus the default tail).
        assert_eq!(
            beacon_rows(SimTime(1_000_000_506_000_000_000), SimTime(100_000_000)),
            10_000_005_060
        );
    }

    #[test]
    fn perf_rows_are_bounded_by_line_rate() {
        use scala_rdma::record::max_rows;
        // 8 Initiators at 400 Gbps for 0.504 s (0.002 to 0.506 s): 3.2e12 bit/s x 0.504 s
        // / 2e6 bit per WQE = 806,400 WQEs.
        assert_eq!(max_rows(8 * 400_000_000_000, SimTime(504_000_000_000)), 806_400);
        // Not a whole WQE: rounded up.
        assert_eq!(max_rows(1, SimTime(1)), 1);
    }

    #[test]
    fn default_scenario_is_well_within_the_limits() {
        let l = crate::scenario::load_path("../../scenarios/default.ron".as_ref(), &[]).unwrap();
        let e = Estimate::of(&l);
        // 8 connections x 10 WQEs; 8 Initiator links of 400 Gbps from 0.002 s to 0.506 s.
        assert_eq!(
            e,
            Estimate {
                beacon_rows: 506,
                records: vec![("rdma-perf", 806_400)],
                outstanding_wqes: 80,
                outstanding_field: "applications[0].MaxPendingWQEs".into(),
            }
        );
        assert!(e.check(&l).is_ok());
    }

    #[test]
    fn runaways_are_refused_naming_the_driving_field() {
        let refused = |sets: &[&str]| {
            let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
            let l = crate::scenario::load_path("../../scenarios/default.ron".as_ref(), &sets).unwrap();
            Estimate::of(&l).check(&l).unwrap_err().field.unwrap()
        };
        assert_eq!(
            refused(&["simulation.BeaconReportInterval=1e-12"]),
            "simulation.BeaconReportInterval"
        );
        assert_eq!(
            refused(&["simulation.StartTime=1e6", "simulation.BeaconReportInterval=0.0001"]),
            "simulation.BeaconReportInterval"
        );
        // 1,024 connections x 8 pairs x 32,768 WQEs = 268,435,456 WQEs, at least 16 GiB at
        // 64 B: past 8 GiB whatever the exact size of a `Wqe` beyond 32 B.
        const { assert!(WQE_BYTES >= 32) };
        assert_eq!(
            refused(&[
                "applications[0].NumConnections=1024",
                "applications[0].MaxPendingWQEs=32768"
            ]),
            "applications[0].MaxPendingWQEs"
        );
    }
}
