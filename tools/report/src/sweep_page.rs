//! The sweep's page: `index.csv` as a table, and each metric against the first varied parameter,
//! one line per combination of the others, the mean over seeds at each value.

use crate::ReportError;
use crate::html::{Page, escape};
use crate::plot::{Series, lines};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The metrics plotted, as `(index.csv column, axis label)`.
pub const METRICS: [(&str, &str); 7] = [
    ("goodput_gbps", "goodput per pair (Gbps)"),
    ("total_goodput_gbps", "goodput of all pairs (Gbps)"),
    ("p50_usec", "WQE latency p50 (µs)"),
    ("p99_usec", "WQE latency p99 (µs)"),
    ("p999_usec", "WQE latency p99.9 (µs)"),
    ("drops", "data packets dropped"),
    ("wall_sec", "wall time (s)"),
];

/// Reads `dir/index.csv` and writes `dir/sweep-report.html`; `title` heads the page.
pub fn write_sweep_report(dir: &Path, title: &str) -> Result<PathBuf, ReportError> {
    let index = dir.join("index.csv");
    let mut r = csv::Reader::from_path(&index).map_err(|e| ReportError::Parse {
        path: index.clone(),
        why: e.to_string(),
    })?;
    let header: Vec<String> = r
        .headers()
        .map_err(|e| ReportError::Parse {
            path: index.clone(),
            why: e.to_string(),
        })?
        .iter()
        .map(str::to_string)
        .collect();
    let rows: Vec<Vec<String>> = r
        .records()
        .map(|rec| rec.map(|r| r.iter().map(str::to_string).collect()))
        .collect::<Result<_, _>>()
        .map_err(|e| ReportError::Parse {
            path: index.clone(),
            why: e.to_string(),
        })?;
    let seed_at = header
        .iter()
        .position(|h| h == "seed")
        .ok_or_else(|| ReportError::Parse {
            path: index.clone(),
            why: "no column `seed`".into(),
        })?;
    let varied = &header[1..seed_at];
    let mut page = Page::default();
    page.text(&format!(
        "{} points; varied: {}; each line is the mean over seeds.",
        rows.len(),
        if varied.is_empty() {
            "nothing (seeds only)".to_string()
        } else {
            varied.join(", ")
        }
    ));
    for (column, label) in METRICS {
        let Some(m) = header.iter().position(|h| h == column) else {
            continue;
        };
        let series = metric_series(&rows, seed_at, m);
        let x_desc = varied.first().map_or("point", String::as_str);
        page.section(column, label);
        page.plot(&lines(label, x_desc, label, &series, true)?);
    }
    page.section("index", "index.csv");
    let headers: Vec<&str> = header.iter().map(String::as_str).collect();
    let table: Vec<(String, Vec<String>)> = rows.iter().map(|r| (format!("point-{}", r[0]), r.clone())).collect();
    page.table("index-table", &headers, &table);
    page.raw(&format!(
        "<p>Each point's records and report are in its folder ({}).</p>",
        escape("point-NNN")
    ));
    let path = dir.join("sweep-report.html");
    std::fs::write(&path, page.finish(title)).map_err(|e| ReportError::io(&path, e))?;
    Ok(path)
}

/// One series per combination of the varied values after the first: `(x, mean of the metric
/// over the rows, seeds included, at that x)`. The x is the first varied value if every one is
/// a number, else its position in first-seen order.
fn metric_series(rows: &[Vec<String>], seed_at: usize, metric: usize) -> Vec<Series> {
    let numeric = seed_at > 1 && rows.iter().all(|r| r[1].parse::<f64>().is_ok());
    let mut order: Vec<String> = Vec::new();
    let mut sums: BTreeMap<String, BTreeMap<usize, (f64, f64, usize)>> = BTreeMap::new();
    for r in rows {
        let Ok(y) = r[metric].parse::<f64>() else { continue };
        let first = if seed_at > 1 { r[1].clone() } else { r[0].clone() };
        let pos = match order.iter().position(|v| *v == first) {
            Some(p) => p,
            None => {
                order.push(first.clone());
                order.len() - 1
            }
        };
        let x = if numeric {
            first.parse::<f64>().unwrap_or(pos as f64)
        } else {
            pos as f64
        };
        let rest = if seed_at > 2 {
            r[2..seed_at].join(", ")
        } else {
            "all".to_string()
        };
        let e = sums.entry(rest).or_default().entry(pos).or_insert((x, 0.0, 0));
        e.1 += y;
        e.2 += 1;
    }
    sums.into_iter()
        .map(|(name, points)| {
            let mut pts: Vec<(f64, f64)> = points.into_values().map(|(x, s, n)| (x, s / n as f64)).collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series { name, points: pts }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn means_over_seeds_per_value() {
        let rows: Vec<Vec<String>> = [
            ["0", "1", "x", "7", "10"],
            ["1", "1", "x", "8", "20"],
            ["2", "2", "x", "7", "40"],
            ["3", "2", "y", "7", ""],
        ]
        .iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect();
        let s = metric_series(&rows, 3, 4);
        assert_eq!(s.len(), 1, "y has no value");
        assert_eq!(s[0].name, "x");
        assert_eq!(s[0].points, vec![(1.0, 15.0), (2.0, 40.0)]);
    }
}
