//! The report of one run: what it ran, how fast the pairs went, how long WQEs took and where the
//! time went, what PFC, ECN and drops did, and whether every packet is accounted for.

use crate::ReportError;
use crate::html::{Page, num};
use crate::load::RunData;
use crate::plot::{Series, lines, stacked_bars};
use crate::stats::{self, Latency, PARTS, PERCENTILES};
use serde_json::Value;

/// CDF points drawn per series: enough for a smooth curve, few enough to keep the file small.
const CDF_POINTS: usize = 400;

/// The beacon's counters plotted per interval, when the run has them.
pub const COUNTERS: [&str; 9] = [
    "pfc_pause_sent",
    "pfc_resume_sent",
    "nic_pfc_pause_sent",
    "ecn_marked",
    "switch_drops",
    "data_dropped",
    "nic_rx_drops",
    "nic_retransmitted",
    "nic_cnp_sent",
];

fn pair_id(prefix: &str, (i, r): (u32, u32)) -> String {
    format!("{prefix}-{i}-{r}")
}

fn pair_name((i, r): (u32, u32)) -> String {
    format!("{i} → {r}")
}

fn latency_cells(l: &Latency) -> Vec<String> {
    let mut cells = vec![l.count().to_string()];
    cells.extend(PERCENTILES.iter().map(|&p| l.percentile(p).map_or("-".into(), num)));
    cells
}

/// The HTML of `run`'s report.
pub fn render(run: &RunData) -> Result<String, ReportError> {
    let m = run.manifest();
    let mut page = Page::default();
    page.text(&format!(
        "job {} · seed {} · rdmasim {} · {} shard(s) · {} events in {:.3} s of wall time",
        m["job_id"].as_str().unwrap_or("?"),
        m["seed"],
        m["version"].as_str().unwrap_or("?"),
        run.manifests.len(),
        run.manifests
            .iter()
            .map(|m| m["events"].as_u64().unwrap_or(0))
            .sum::<u64>(),
        run.manifests
            .iter()
            .map(|m| m["wall_sec"].as_f64().unwrap_or(0.0))
            .fold(0.0, f64::max),
    ));
    let lat = stats::latencies(run);
    goodput(&mut page, run, &lat)?;
    latency(&mut page, &lat)?;
    breakdown(&mut page, &lat)?;
    counters(&mut page, run)?;
    conservation(&mut page, run);
    page.section("scenario", "Scenario and manifest");
    match m["scenario"].as_str() {
        Some(text) => page.pre(text, None),
        None => page.text("The manifest does not hold the scenario (written by an older rdmasim)."),
    }
    page.pre(&serde_json::to_string_pretty(m).unwrap_or_default(), Some("manifest"));
    Ok(page.finish(&format!("rdmasim report: {}", run.simulation)))
}

fn goodput(page: &mut Page, run: &RunData, lat: &stats::Latencies) -> Result<(), ReportError> {
    page.section("goodput", "Goodput per pair");
    let (start, end) = lat.window;
    page.text(&format!(
        "Recording window {start} s to {end} s. WQE goodput: the bytes of the WQEs that completed in the window x 8 / its length. Delivered goodput: the payload the Responder's NIC accepted in the window (the run summary's figure, from the manifest)."
    ));
    let delivered: std::collections::BTreeMap<(u32, u32), f64> = run
        .manifests
        .iter()
        .flat_map(|m| m["pairs"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| {
            Some((
                (p["initiator"].as_u64()? as u32, p["responder"].as_u64()? as u32),
                p["gbps"].as_f64()?,
            ))
        })
        .collect();
    let length = end - start;
    let rows = lat
        .pairs
        .iter()
        .map(|(&pair, l)| {
            let wqe_gbps = if length > 0.0 {
                l.bytes as f64 * 8.0 / length / 1e9
            } else {
                0.0
            };
            let cells = vec![
                pair_name(pair),
                l.count().to_string(),
                num(wqe_gbps),
                delivered.get(&pair).map_or("-".into(), |&g| num(g)),
            ];
            (pair_id("goodput", pair), cells)
        })
        .collect::<Vec<_>>();
    page.table(
        "goodput-table",
        &[
            "pair (Initiator → Responder)",
            "WQEs in window",
            "WQE goodput (Gbps)",
            "delivered goodput (Gbps)",
        ],
        &rows,
    );
    let series: Vec<Series> = stats::goodput_over_time(run)
        .into_iter()
        .map(|(pair, points)| Series {
            name: pair_name(pair),
            points,
        })
        .collect();
    page.plot(&lines(
        "Goodput per pair over time (WQEs completed per beacon interval)",
        "simulated time (s)",
        "Gbps",
        &series,
        true,
    )?);
    Ok(())
}

fn latency(page: &mut Page, lat: &stats::Latencies) -> Result<(), ReportError> {
    page.section("latency", "WQE latency");
    page.text("From the doorbell to the completion (perf_metric_usec), of the WQEs that completed in the recording window; percentiles by nearest rank, in microseconds.");
    let mut rows: Vec<(String, Vec<String>)> = lat
        .pairs
        .iter()
        .map(|(&pair, l)| {
            let mut cells = vec![pair_name(pair)];
            cells.extend(latency_cells(l));
            (pair_id("latency", pair), cells)
        })
        .collect();
    let mut all = vec!["all pairs".to_string()];
    all.extend(latency_cells(&lat.overall));
    rows.push(("latency-all".into(), all));
    page.table(
        "latency-table",
        &["pair", "WQEs", "p50 (µs)", "p99 (µs)", "p99.9 (µs)"],
        &rows,
    );
    let mut series: Vec<Series> = lat
        .pairs
        .iter()
        .map(|(&pair, l)| Series {
            name: pair_name(pair),
            points: l.cdf(CDF_POINTS),
        })
        .collect();
    series.push(Series {
        name: "all pairs".into(),
        points: lat.overall.cdf(CDF_POINTS),
    });
    page.plot(&lines(
        "WQE latency CDF",
        "latency (µs)",
        "fraction of WQEs",
        &series,
        true,
    )?);
    Ok(())
}

fn breakdown(page: &mut Page, lat: &stats::Latencies) -> Result<(), ReportError> {
    page.section("breakdown", "Latency breakdown");
    page.text(
        "The mean of each part of a WQE's latency (the rdma-perf columns doorbell_usec to ack_usec), in microseconds.",
    );
    let mut cats = Vec::new();
    let mut values = Vec::new();
    let mut rows = Vec::new();
    let groups = lat
        .pairs
        .iter()
        .map(|(&p, l)| (pair_name(p), pair_id("breakdown", p), l))
        .chain(std::iter::once((
            "all".to_string(),
            "breakdown-all".to_string(),
            &lat.overall,
        )));
    for (name, id, l) in groups {
        cats.push(name.clone());
        values.push(l.mean_parts_usec.to_vec());
        let mut cells = vec![name];
        cells.extend(l.mean_parts_usec.iter().map(|&v| num(v)));
        rows.push((id, cells));
    }
    let mut header = vec!["pair"];
    header.extend(PARTS);
    page.table("breakdown-table", &header, &rows);
    page.plot(&stacked_bars("Mean latency breakdown", "µs", &cats, &PARTS, &values)?);
    Ok(())
}

fn counters(page: &mut Page, run: &RunData) -> Result<(), ReportError> {
    page.section("counters", "PFC, ECN and drops");
    let times: Vec<f64> = run.beacon.rows.iter().map(|(t, _)| *t).collect();
    let mut series = Vec::new();
    let mut rows = Vec::new();
    for name in COUNTERS {
        let Some(totals) = run.beacon.column(name) else {
            continue;
        };
        rows.push((
            format!("counter-{name}"),
            vec![name.to_string(), format!("{}", totals.last().copied().unwrap_or(0.0))],
        ));
        series.push(Series {
            name: name.to_string(),
            points: stats::per_interval(&times, &totals),
        });
    }
    page.text("Totals at the last beacon row, and each counter's increase per beacon interval (the beacon's running totals, summed over shards).");
    page.table("counters-table", &["counter", "total"], &rows);
    page.plot(&lines(
        "Events per beacon interval",
        "simulated time (s)",
        "count",
        &series,
        true,
    )?);
    Ok(())
}

fn tally(v: &Value) -> [String; 2] {
    [v["packets"].to_string(), v["bytes"].to_string()]
}

fn conservation(page: &mut Page, run: &RunData) {
    page.section("conservation", "Conservation and watchdog");
    for (shard, m) in run.manifests.iter().enumerate() {
        let c = &m["conservation"];
        let mut rows = Vec::new();
        for class in c["classes"].as_array().into_iter().flatten() {
            let k = &class["class"];
            for field in [
                "sent",
                "delivered",
                "dropped_lossy_limit",
                "dropped_headroom",
                "dropped_no_route",
                "dropped_fault",
                "in_flight",
            ] {
                let [p, b] = tally(&class[field]);
                rows.push((
                    format!("conservation-{shard}-{k}-{field}"),
                    vec![format!("class {k}: {field}"), p, b],
                ));
            }
        }
        let title = format!("shard {shard}");
        page.table(&format!("conservation-{shard}"), &[&title, "packets", "bytes"], &rows);
        let verdict = |key: &str| -> Vec<String> {
            c[key]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| v.as_str().map_or(v.to_string(), str::to_string))
                .collect()
        };
        let (violations, warnings) = (verdict("violations"), verdict("warnings"));
        page.text(&if violations.is_empty() {
            "Every data packet is accounted for: sent = delivered + dropped + in flight.".to_string()
        } else {
            format!("Violations: {}", violations.join("; "))
        });
        if !warnings.is_empty() {
            page.text(&format!("Warnings: {}", warnings.join("; ")));
        }
        let w = &m["watchdog"];
        let found: Vec<String> = ["stalls", "deadlocks"]
            .iter()
            .flat_map(|k| w[*k].as_array().cloned().unwrap_or_default())
            .map(|v| v.as_str().map_or(v.to_string(), str::to_string))
            .collect();
        page.text(&if found.is_empty() {
            "Watchdog: no stalled connection, no PFC deadlock.".to_string()
        } else {
            format!(
                "Watchdog{}: {}",
                if w["failed"] == true { " (failed the run)" } else { "" },
                found.join("; ")
            )
        });
    }
}
