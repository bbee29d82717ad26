//! What a run would cost, estimated from the scenario alone before it starts: rows of each
//! record and memory held by outstanding WQEs. A run past [`MAX_ROWS`] or [`MAX_MEMORY_BYTES`]
//! is refused (unless `run --force`) naming the fields that drive it: a BeaconReportInterval of
//! 1 ps or a StartTime of 1e6 s would otherwise write for days and fill the disk.

use crate::scenario::Loaded;
use engine::SimTime;
use engine::scenario::ScenarioError;
use scala_rdma::config::TRANSFER_SIZE_BYTES;

/// The most rows of one record a run may write: 100 million (about 10 GB of CSV at ~100 B a
/// row). The default scenario writes 506 beacon rows and under a million rdma-perf rows.
pub const MAX_ROWS: u64 = 100_000_000;
/// The most memory outstanding WQEs may hold: 8 GiB.
pub const MAX_MEMORY_BYTES: u64 = 8 << 30;
/// Bytes one outstanding WQE holds at least: its `Wqe` record (ids, size, timestamps).
pub const WQE_BYTES: u64 = std::mem::size_of::<models::nic::Wqe>() as u64;

/// The estimates for one scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    /// One per tick: the ticks at k x BeaconReportInterval up to the stop time.
    pub beacon_rows: u64,
    /// At most one per WQE the Initiators' links can carry from the client start window to
    /// the stop time: line rate x time / (8 x 250,000 B).
    pub perf_rows: u64,
    /// Connections x MaxPendingWQEs, summed over the applications.
    pub outstanding_wqes: u64,
}

/// Beacon ticks in `(0, stop]` at every `interval`.
pub fn beacon_rows(stop: SimTime, interval: SimTime) -> u64 {
    stop.0 / interval.0.max(1)
}

/// Upper bound on completed WQEs: `rate_bps` (summed over the Initiators' links) for `span`,
/// each WQE at least `TRANSFER_SIZE_BYTES` of payload. Rounded up.
pub fn perf_rows(rate_bps: u128, span: SimTime) -> u64 {
    let bits = rate_bps * span.0 as u128;
    let per_wqe = 8 * TRANSFER_SIZE_BYTES as u128 * SimTime::PS_PER_SEC as u128;
    u64::try_from(bits.div_ceil(per_wqe)).unwrap_or(u64::MAX)
}

impl Estimate {
    pub fn of(l: &Loaded) -> Estimate {
        let initiators: Vec<u32> = l
            .plan
            .hosts
            .iter()
            .filter(|h| h.component == "initiator")
            .map(|h| h.node_id)
            .collect();
        let rate: u128 = l
            .topology
            .links
            .iter()
            .map(|k| initiators.iter().filter(|&&n| n == k.a.0 || n == k.b.0).count() as u128 * k.rate.0 as u128)
            .sum();
        let apps = l.scala_apps();
        let outstanding_wqes = l
            .plan
            .connections
            .iter()
            .map(|c| apps.get(c.app).map_or(0, |a| a.max_pending_wqes.get() as u64))
            .sum();
        Estimate {
            beacon_rows: beacon_rows(l.timeline.stop, l.timeline.beacon_interval),
            perf_rows: perf_rows(rate, l.timeline.stop.saturating_sub(l.timeline.client_window_start)),
            outstanding_wqes,
        }
    }

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
        if self.perf_rows > MAX_ROWS {
            return at(
                "simulation.RunTime",
                format!(
                    "the rdma-perf record could have {} rows (the Initiators' line rate over {} s, one row per {TRANSFER_SIZE_BYTES} B WQE), over the limit of {MAX_ROWS}: shorten simulation.RunTime (or the timeline)",
                    self.perf_rows,
                    l.timeline
                        .stop
                        .saturating_sub(l.timeline.client_window_start)
                        .as_secs_f64()
                ),
            );
        }
        if self.memory_bytes() > MAX_MEMORY_BYTES {
            return at(
                "applications[0].MaxPendingWQEs",
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
        write!(
            f,
            "estimate: {} beacon rows, at most {} rdma-perf rows, {} outstanding WQEs (at least {} bytes)",
            self.beacon_rows,
            self.perf_rows,
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
        // 8 Initiators at 400 Gbps for 0.504 s (0.002 to 0.506 s): 3.2e12 bit/s x 0.504 s
        // / 2e6 bit per WQE = 806,400 WQEs.
        assert_eq!(perf_rows(8 * 400_000_000_000, SimTime(504_000_000_000)), 806_400);
        // Not a whole WQE: rounded up.
        assert_eq!(perf_rows(1, SimTime(1)), 1);
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
                perf_rows: 806_400,
                outstanding_wqes: 80
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
