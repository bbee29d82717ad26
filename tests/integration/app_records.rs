//! The records of a run of the default scenario, checked against the spec: the rdma-perf
//! columns and fixed values, the per-connection counters of the closed loop, the latency
//! breakdown, Little's law, the beacon's WQE counters, and the file names.
//!
//! One run serves every test here (a `OnceLock`); its files are read into memory and the
//! scratch folder removed at once.

use rdmasim_tests::{Csv, PS_PER_SEC, run_scenario, scenario_path, sec_ps, usec_ps};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// `RunTime` 0.002 s: the default timeline becomes responders 0.001 s, data from 0.003 s,
/// recording 0.005-0.007 s, stop 0.008 s. A connection completes a WQE every ~17-21 us (see
/// `littles_law_per_connection`), so about 100 in the recording window: enough for Little's
/// law to hold within 2% (the boundary terms are a few latencies over 100).
const RUN_TIME_PS: u64 = 2 * PS_PER_SEC / 1000;
const RECORDING_START_PS: u64 = 5 * PS_PER_SEC / 1000;
const STOP_PS: u64 = 8 * PS_PER_SEC / 1000;
/// The spec's defaults.
const MAX_PENDING: u64 = 10;
const CONNECTIONS: usize = 8;

/// The spec's 13 rdma-perf columns, in the spec's order.
const SPEC_COLUMNS: [&str; 13] = [
    "job_id",
    "time_utc",
    "sim_time_sec",
    "metric_name",
    "perf_metric_usec",
    "transfer_size",
    "start_time_sec",
    "application_name",
    "node_id",
    "rdma_verb",
    "wqe_id",
    "num_wqe_sent",
    "num_wqe_complete",
];

struct DefaultRun {
    perf: Csv,
    beacon: Csv,
    file_names: Vec<String>,
}

fn default_run() -> &'static DefaultRun {
    static RUN: OnceLock<DefaultRun> = OnceLock::new();
    RUN.get_or_init(|| {
        let (outcome, dir) = run_scenario(&scenario_path("default.ron"), &["simulation.RunTime=0.002"]);
        let file_names = outcome
            .files
            .iter()
            .map(|p| p.file_name().expect("a file").to_string_lossy().into_owned())
            .collect();
        DefaultRun {
            perf: Csv::read(&dir.file("default-rdma-perf-0.csv")),
            beacon: Csv::read(&dir.file("default-beacon-0.csv")),
            file_names,
        }
    })
}

/// The rows of each connection (`application_name`), in file order.
fn by_connection(perf: &Csv) -> BTreeMap<&str, Vec<&Vec<String>>> {
    let c = perf.col("application_name");
    let mut m: BTreeMap<&str, Vec<&Vec<String>>> = BTreeMap::new();
    for r in &perf.rows {
        m.entry(r[c].as_str()).or_default().push(r);
    }
    m
}

fn num(s: &str) -> u64 {
    s.parse().unwrap_or_else(|_| panic!("{s} is not a count"))
}

#[test]
fn files_are_named_after_the_simulation() {
    let names = &default_run().file_names;
    assert!(names.contains(&"default-rdma-perf-0.csv".to_string()), "{names:?}");
    assert!(names.contains(&"default-beacon-0.csv".to_string()), "{names:?}");
}

#[test]
fn rdma_perf_has_the_spec_columns_first_in_order() {
    let perf = &default_run().perf;
    assert_eq!(&perf.header[..13], &SPEC_COLUMNS);
    assert!(perf.rows.iter().all(|r| r.len() == perf.header.len()));
}

#[test]
fn every_row_is_a_250kb_rdma_write() {
    let perf = &default_run().perf;
    assert!(perf.rows.len() > 500, "only {} rows", perf.rows.len());
    assert!(perf.column("transfer_size").iter().all(|&v| v == "250000"));
    assert!(perf.column("metric_name").iter().all(|&v| v == "RDMA-WRITE"));
    assert!(perf.column("rdma_verb").iter().all(|&v| v == "RDMA_VERB_POST_WRITE"));
    // With the clock fixed, one value for the whole run.
    assert!(perf.column("time_utc").iter().all(|&v| v == "2026-01-01T00:00:00Z"));
    // No row at or after the stop time: outstanding WQEs are not recorded.
    assert!(perf.column("sim_time_sec").iter().all(|&t| sec_ps(t) < STOP_PS));
}

#[test]
fn counters_follow_the_closed_loop_in_order() {
    let perf = &default_run().perf;
    let (id, sent, done) = (
        perf.col("wqe_id"),
        perf.col("num_wqe_sent"),
        perf.col("num_wqe_complete"),
    );
    let conns = by_connection(perf);
    assert_eq!(conns.len(), CONNECTIONS, "one Initiator instance per pair, 8 pairs");
    for (name, rows) in conns {
        for (k, r) in rows.iter().enumerate() {
            let k = k as u64 + 1;
            // The k-th completion of a connection is its WQE k (one WQE of a connection at a
            // time, completed in post order) and its k-th completion.
            assert_eq!(num(&r[id]), k, "{name}");
            assert_eq!(num(&r[done]), k, "{name}");
            // Posted so far: MaxPendingWQEs at data start plus one per earlier completion (the
            // row is written before this completion's replacement is posted): 10 + (k - 1).
            // So sent - complete is exactly MaxPendingWQEs - 1, never above MaxPendingWQEs.
            assert_eq!(num(&r[sent]) - num(&r[done]), MAX_PENDING - 1, "{name} row {k}");
        }
    }
}

#[test]
fn latency_breakdown_adds_up_exactly() {
    // Every time column is printed with picosecond digits, so the sums are exact integers:
    // the parts add up to perf_metric_usec, and perf_metric_usec is completion minus doorbell.
    let perf = &default_run().perf;
    let parts = [
        "doorbell_usec",
        "nic_wait_usec",
        "fetch_usec",
        "network_usec",
        "ack_usec",
    ]
    .map(|c| perf.col(c));
    let (lat, end, start) = (
        perf.col("perf_metric_usec"),
        perf.col("sim_time_sec"),
        perf.col("start_time_sec"),
    );
    for r in &perf.rows {
        let total = usec_ps(&r[lat]);
        assert_eq!(parts.iter().map(|&c| usec_ps(&r[c])).sum::<u64>(), total, "{r:?}");
        assert_eq!(sec_ps(&r[end]) - sec_ps(&r[start]), total, "{r:?}");
    }
}

#[test]
fn littles_law_per_connection() {
    // Closed loop: from data start each connection has exactly MaxPendingWQEs = 10 WQEs in the
    // system (posted, not yet completed) at every instant, so by Little's law
    // L = lambda x W: 10 = (completions in the window / RunTime) x (their mean latency).
    // Over a finite window the two sides differ by the ages of the WQEs outstanding at the
    // window's start minus those at its end, both about 10 x W / 2 in steady state and nearly
    // cancelling; with ~100 completions per connection in 0.002 s the gap is well under 2%.
    let perf = &default_run().perf;
    let (end, lat) = (perf.col("sim_time_sec"), perf.col("perf_metric_usec"));
    let window = RECORDING_START_PS..RECORDING_START_PS + RUN_TIME_PS;
    for (name, rows) in by_connection(perf) {
        let latencies: Vec<u64> = rows
            .iter()
            .filter(|r| window.contains(&sec_ps(&r[end])))
            .map(|r| usec_ps(&r[lat]))
            .collect();
        let n = latencies.len() as f64;
        assert!(n >= 50.0, "{name}: only {n} completions in the window");
        let mean = latencies.iter().sum::<u64>() as f64 / n;
        let rate = n / RUN_TIME_PS as f64;
        let l = mean * rate;
        assert!(
            (l / MAX_PENDING as f64 - 1.0).abs() < 0.02,
            "{name}: mean latency {:.3} us x rate {:.0}/s = {l:.3}, not {MAX_PENDING}",
            mean / 1e6,
            rate * PS_PER_SEC as f64
        );
    }
}

#[test]
fn beacon_counts_wqes() {
    let run = default_run();
    let (beacon, perf) = (&run.beacon, &run.perf);
    let (t, tx, rx) = (
        beacon.col("sim_time_sec"),
        beacon.col("tx_client"),
        beacon.col("rx_client"),
    );
    // One row per 0.001 s interval from 0.001 s to the stop at 0.008 s.
    let times: Vec<u64> = beacon.rows.iter().map(|r| sec_ps(&r[t])).collect();
    assert_eq!(times, (1..=8).map(|k| k * PS_PER_SEC / 1000).collect::<Vec<_>>());
    let completions: Vec<u64> = perf.column("sim_time_sec").into_iter().map(sec_ps).collect();
    let mut last = (0, 0);
    for r in &beacon.rows {
        let (now, tx, rx) = (sec_ps(&r[t]), num(&r[tx]), num(&r[rx]));
        assert!(tx >= last.0 && rx >= last.1, "running totals never go down");
        last = (tx, rx);
        // rx_client counts rdma-perf rows; a completion at the very instant of the tick may
        // fall on either side of it.
        let before = completions.iter().filter(|&&c| c < now).count() as u64;
        let by = completions.iter().filter(|&&c| c <= now).count() as u64;
        assert!(
            (before..=by).contains(&rx),
            "at {now} ps: rx_client {rx}, rows {before}..={by}"
        );
    }
    // Nothing happens at or after the stop: the last row has every completion, and every
    // connection still has its 10 outstanding, so tx_client = rx_client + 8 x 10.
    assert_eq!(last.1, completions.len() as u64);
    assert_eq!(last.0, last.1 + CONNECTIONS as u64 * MAX_PENDING);
    // Before the data start at 0.003 s, nothing is posted.
    assert_eq!(num(&beacon.rows[1][tx]), 0);
}
