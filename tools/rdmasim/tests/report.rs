//! `rdmasim run --report` and `rdmasim report`: the numbers in the report equal those computed
//! here from the CSVs (nearest-rank percentiles, means, goodput over the recording window), the
//! report reads several shards as one, and every plot is an SVG that resvg parses and renders.

mod common;

use common::{TempDir, rdmasim, refused, render_every_plot, stderr, stdout};
use std::collections::BTreeMap;
use std::path::Path;

/// The cells of the table row `id` in `html`.
fn row(html: &str, id: &str) -> Vec<String> {
    let start = html
        .find(&format!("<tr id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no row {id}"));
    let end = start + html[start..].find("</tr>").expect("row end");
    html[start..end]
        .split("<td>")
        .skip(1)
        .map(|c| c.trim_end_matches("</td>").to_string())
        .collect()
}

/// The smallest value with at least `tenths`/10 % of the values at or below it: rank
/// ceil(tenths x n / 1000), in integers.
fn nearest_rank(sorted: &[f64], tenths: usize) -> f64 {
    let k = (tenths * sorted.len()).div_ceil(1000);
    sorted[k.max(1) - 1]
}

struct Wqe {
    latency: f64,
    bytes: f64,
    parts: [f64; 5],
}

/// The rdma-perf rows of `dir` that completed in the recording window, by pair.
fn window_rows(dir: &Path, window: (f64, f64)) -> BTreeMap<(u32, u32), Vec<Wqe>> {
    let mut out: BTreeMap<(u32, u32), Vec<Wqe>> = BTreeMap::new();
    let mut r = csv::Reader::from_path(dir.join("default-rdma-perf-0.csv")).expect("rdma-perf");
    let h = r.headers().expect("headers").clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap_or_else(|| panic!("column {n}"));
    let parts = [
        "doorbell_usec",
        "nic_wait_usec",
        "fetch_usec",
        "network_usec",
        "ack_usec",
    ]
    .map(col);
    let (t, lat, size, ini, resp) = (
        col("sim_time_sec"),
        col("perf_metric_usec"),
        col("transfer_size"),
        col("node_id"),
        col("responder_node_id"),
    );
    for rec in r.records() {
        let rec = rec.expect("row");
        let f = |i: usize| rec[i].parse::<f64>().expect("number");
        if f(t) < window.0 || f(t) > window.1 {
            continue;
        }
        out.entry((rec[ini].parse().unwrap(), rec[resp].parse().unwrap()))
            .or_default()
            .push(Wqe {
                latency: f(lat),
                bytes: f(size),
                parts: parts.map(f),
            });
    }
    out
}

/// The latency row's cells the test expects: WQEs, p50, p99, p99.9.
fn expected_latency(wqes: &[&Wqe]) -> Vec<String> {
    let mut v: Vec<f64> = wqes.iter().map(|w| w.latency).collect();
    v.sort_by(f64::total_cmp);
    let mut cells = vec![v.len().to_string()];
    cells.extend([500, 990, 999].map(|p| format!("{:.3}", nearest_rank(&v, p))));
    cells
}

fn expected_breakdown(wqes: &[&Wqe]) -> Vec<String> {
    (0..5)
        .map(|k| {
            format!(
                "{:.3}",
                wqes.iter().map(|w| w.parts[k]).sum::<f64>() / wqes.len() as f64
            )
        })
        .collect()
}

#[test]
fn the_report_shows_what_the_csvs_say() {
    let dir = TempDir::new("report");
    let default = common::default_ron();
    let o = rdmasim(&[
        "run",
        default.to_str().expect("utf-8"),
        "--out",
        dir.path(),
        "--quiet",
        "--report",
        "--set",
        "simulation.RunTime=0.003",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let path = dir.0.join("default-report.html");
    assert!(
        stdout(&o).contains(&format!("wrote {}", path.display())),
        "{}",
        stdout(&o)
    );
    let html = std::fs::read_to_string(&path).expect("the report");

    // Self-contained: nothing fetched, nothing run.
    assert!(!html.contains("<script") && !html.contains(" src=") && !html.contains("<link"));

    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.0.join("default-manifest-0.json")).expect("manifest"))
            .expect("json");
    let w = manifest["recording_window_sec"].as_array().expect("the window");
    let window = (w[0].as_f64().unwrap(), w[1].as_f64().unwrap());
    // The spec's default timeline with RunTime 0.003: 0.005 s to 0.008 s.
    assert!(
        (window.0 - 0.005).abs() < 1e-12 && (window.1 - 0.008).abs() < 1e-12,
        "{window:?}"
    );
    let pairs = window_rows(&dir.0, window);
    assert_eq!(pairs.len(), 8, "the spec's 16 hosts make 8 pairs");
    let all: Vec<&Wqe> = pairs.values().flatten().collect();
    for (&(i, r), wqes) in &pairs {
        let wqes: Vec<&Wqe> = wqes.iter().collect();
        let lat = row(&html, &format!("latency-{i}-{r}"));
        assert_eq!(lat[1..], expected_latency(&wqes)[..], "pair {i} -> {r}");
        let parts = row(&html, &format!("breakdown-{i}-{r}"));
        assert_eq!(parts[1..], expected_breakdown(&wqes)[..], "pair {i} -> {r}");
        let goodput = row(&html, &format!("goodput-{i}-{r}"));
        let bytes: f64 = wqes.iter().map(|w| w.bytes).sum();
        assert_eq!(goodput[1], wqes.len().to_string());
        assert_eq!(goodput[2], format!("{:.3}", bytes * 8.0 / (window.1 - window.0) / 1e9));
        // A pair's WQE goodput cannot pass the payload line rate, 400 x 4,096 / 4,154 Gbps.
        assert!(bytes * 8.0 / (window.1 - window.0) / 1e9 < 400.0 * 4096.0 / 4154.0 * 1.02);
    }
    assert_eq!(row(&html, "latency-all")[1..], expected_latency(&all)[..]);
    assert_eq!(row(&html, "breakdown-all")[1..], expected_breakdown(&all)[..]);

    // Counter totals are the beacon's last row.
    let mut beacon = csv::Reader::from_path(dir.0.join("default-beacon-0.csv")).expect("beacon");
    let header = beacon.headers().expect("headers").clone();
    let last = beacon.records().last().expect("a beacon row").expect("row");
    for name in ["pfc_pause_sent", "ecn_marked", "switch_drops", "nic_rx_drops"] {
        let i = header.iter().position(|c| c == name).expect("column");
        let total: f64 = last[i].parse().expect("number");
        assert_eq!(row(&html, &format!("counter-{name}"))[1], format!("{total}"), "{name}");
    }
    assert!(html.contains("Every data packet is accounted for"));
    assert!(html.contains("name: &quot;default&quot;"), "the scenario's text");

    // Goodput over time, latency CDF, breakdown bars, counters: four plots, each renders.
    assert_eq!(render_every_plot(&html), 4);

    // The same records cut into two shards report the same numbers.
    let shards = TempDir::new("report-shards");
    let perf = std::fs::read_to_string(dir.0.join("default-rdma-perf-0.csv")).expect("rdma-perf");
    let mut lines = perf.lines();
    let head = lines.next().expect("header");
    let (mut a, mut b) = (vec![head], vec![head]);
    for (k, l) in lines.enumerate() {
        if k % 2 == 0 { a.push(l) } else { b.push(l) }
    }
    std::fs::write(shards.0.join("default-rdma-perf-0.csv"), a.join("\n") + "\n").unwrap();
    std::fs::write(shards.0.join("default-rdma-perf-1.csv"), b.join("\n") + "\n").unwrap();
    for f in ["default-beacon-0.csv", "default-manifest-0.json"] {
        std::fs::copy(dir.0.join(f), shards.0.join(f)).unwrap();
    }
    let o = rdmasim(&["report", shards.path()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let sharded = std::fs::read_to_string(shards.0.join("default-report.html")).expect("report");
    for &(i, r) in pairs.keys() {
        let id = format!("latency-{i}-{r}");
        assert_eq!(row(&sharded, &id), row(&html, &id));
    }
    assert_eq!(row(&sharded, "latency-all"), row(&html, "latency-all"));
}

#[test]
fn a_folder_without_a_run_is_refused() {
    let empty = TempDir::new("report-empty");
    let first = refused(&["report", empty.path()]);
    assert!(first.contains("no run's manifest"), "{first}");
    let missing = format!("{}/nowhere", empty.path());
    let first = refused(&["report", &missing]);
    assert!(first.contains("nowhere"), "{first}");
    // A record that is not rdmasim's.
    std::fs::write(empty.0.join("x-manifest-0.json"), "{}").unwrap();
    std::fs::write(empty.0.join("x-rdma-perf-0.csv"), "a,b\n1,2\n").unwrap();
    let first = refused(&["report", empty.path()]);
    assert!(first.contains("no column `sim_time_sec`"), "{first}");
}
