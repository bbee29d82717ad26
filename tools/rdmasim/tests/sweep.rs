//! `rdmasim sweep`: NumConnections 1, 2, 4, 8 on the star, read back from index.csv. One WQE per
//! connection is on the wire at a time, so more connections keep the Initiator's port busier,
//! until the pair runs at the payload line rate: 400 Gbps x 250,000 bytes over the bytes the
//! WQE puts on the wire, 250,000 + ceil(250,000 / 4,096) x 58 = 253,596 (394.3 Gbps).

mod common;

use common::{TempDir, rdmasim, refused, render_every_plot, stderr, stdout};

/// The star's ideal goodput per pair, in Gbps, from the spec's figures.
fn ideal_gbps() -> f64 {
    let (wqe, mss, headers) = (250_000u64, 4_096u64, 58u64);
    let wire = wqe + wqe.div_ceil(mss) * headers;
    assert_eq!(wire, 253_596);
    400.0 * wqe as f64 / wire as f64
}

#[test]
fn more_connections_reach_the_line_rate() {
    let dir = TempDir::new("sweep");
    let star = common::scenario("star");
    let o = rdmasim(&[
        "sweep",
        star.to_str().expect("utf-8"),
        "--vary",
        "applications[0].NumConnections=1,2,4,8",
        "--seeds",
        "2",
        "--set",
        "simulation.RunTime=0.002",
        "--out",
        dir.path(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("8 points (0 failed)"), "{}", stdout(&o));

    let mut r = csv::Reader::from_path(dir.0.join("index.csv")).expect("index.csv");
    let h = r.headers().expect("header").clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap_or_else(|| panic!("no column {n}"));
    let (conns, seed, goodput, folder) = (
        col("applications[0].NumConnections"),
        col("seed"),
        col("goodput_gbps"),
        col("folder"),
    );
    for c in ["p50_usec", "p99_usec", "p999_usec", "drops", "wall_sec", "exit_code"] {
        col(c);
    }
    let rows: Vec<csv::StringRecord> = r.records().map(|r| r.expect("row")).collect();
    assert_eq!(rows.len(), 4 * 2, "4 values x 2 seeds");
    // Each seed of each value, in its own folder with its own records.
    let seeds: std::collections::BTreeSet<&str> = rows.iter().map(|r| &r[seed]).collect();
    assert_eq!(seeds.len(), 2);
    for r in &rows {
        assert!(dir.0.join(&r[folder]).join("star-rdma-perf-0.csv").is_file());
    }
    let mean = |n: &str| {
        let g: Vec<f64> = rows
            .iter()
            .filter(|r| &r[conns] == n)
            .map(|r| r[goodput].parse::<f64>().expect("number"))
            .collect();
        g.iter().sum::<f64>() / g.len() as f64
    };
    let g = ["1", "2", "4", "8"].map(mean);
    let ideal = ideal_gbps();
    assert!(
        g[0] < g[1] && g[1] < g[2] && g[2] <= g[3],
        "goodput rises with connections: {g:?}"
    );
    assert!(g[3] <= ideal * (1.0 + 1e-9), "above the line rate: {} > {ideal}", g[3]);
    assert!(
        (ideal - g[3]) / ideal < 0.02,
        "8 connections: {} Gbps, not within 2% of {ideal}",
        g[3]
    );

    // The page plots each metric against NumConnections: seven plots, each renders.
    let page = std::fs::read_to_string(dir.0.join("sweep-report.html")).expect("the sweep's page");
    assert_eq!(render_every_plot(&page), 7);
    assert!(page.contains("<tr id=\"point-7\">"));
}

#[test]
fn bad_sweeps_are_refused_before_anything_runs() {
    let dir = TempDir::new("sweep-bad");
    let star = common::scenario("star");
    let star = star.to_str().expect("utf-8");
    let base = ["sweep", star, "--out", dir.path(), "--quiet"];
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        refused(&a)
    };
    assert!(with(&["--vary", "applications[0].NumConnections"]).contains("PATH=v1,v2"));
    // NumConnections 0 is out of range: the point is checked before any runs.
    let first = with(&["--vary", "applications[0].NumConnections=1,0"]);
    assert!(first.contains("applications[0].NumConnections"), "{first}");
    assert!(with(&["--vary", "applications[0].NoSuchField=1"]).contains("NoSuchField"));
    assert!(with(&["--seeds", "0"]).contains("--seeds"));
    assert!(with(&["--jobs", "0"]).contains("--jobs"));
    assert!(!dir.0.join("index.csv").exists(), "nothing ran");
}
