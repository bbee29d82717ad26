//! Reading a run's output folder: its manifest(s) and every shard of its records
//! (`{simulation}-{record}-{shard}.csv`), as plain rows the statistics and plots work on.

use crate::ReportError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One completed WQE (an `rdma-perf` row), the columns the report uses.
#[derive(Clone, Debug, PartialEq)]
pub struct WqeRow {
    /// `sim_time_sec`: the completion.
    pub done_sec: f64,
    /// `perf_metric_usec`: doorbell to completion.
    pub latency_usec: f64,
    /// `transfer_size`, bytes.
    pub bytes: u64,
    /// `node_id`: the Initiator's host.
    pub initiator: u32,
    /// `responder_node_id`.
    pub responder: u32,
    /// `doorbell_usec`, `nic_wait_usec`, `fetch_usec`, `network_usec`, `ack_usec`.
    pub parts_usec: [f64; 5],
}

/// The beacon's numeric columns, summed over shards, one row per tick.
#[derive(Clone, Debug, Default)]
pub struct Beacon {
    /// Column names, `sim_time_sec` excluded.
    pub columns: Vec<String>,
    /// `(sim_time_sec, values in column order)`.
    pub rows: Vec<(f64, Vec<f64>)>,
}

impl Beacon {
    /// The column `name`'s values, one per row; `None` if the beacon has no such column.
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let i = self.columns.iter().position(|c| c == name)?;
        Some(self.rows.iter().map(|(_, v)| v[i]).collect())
    }
}

/// Everything the report reads from a run's folder.
#[derive(Clone, Debug)]
pub struct RunData {
    /// The simulation's name.
    pub simulation: String,
    /// Each shard's manifest, by shard index.
    pub manifests: Vec<serde_json::Value>,
    /// Every rdma-perf row of every shard.
    pub wqes: Vec<WqeRow>,
    /// The beacon.
    pub beacon: Beacon,
    /// The record files read.
    pub files: Vec<PathBuf>,
}

impl RunData {
    /// The first shard's manifest.
    pub fn manifest(&self) -> &serde_json::Value {
        &self.manifests[0]
    }

    /// The recording window `[start, end]` in seconds, from the manifest; the whole run without it.
    pub fn window(&self) -> (f64, f64) {
        match self.manifest()["recording_window_sec"].as_array() {
            Some(w) if w.len() == 2 => (w[0].as_f64().unwrap_or(0.0), w[1].as_f64().unwrap_or(f64::MAX)),
            _ => (0.0, f64::MAX),
        }
    }
}

/// `(simulation, record, shard)` of a file named `{simulation}-{record}-{shard}.{ext}`, for a
/// known record name (the simulation's name may hold dashes itself).
fn split_name<'a>(file: &'a str, record: &str, ext: &str) -> Option<(&'a str, u32)> {
    let stem = file.strip_suffix(ext)?;
    let (rest, shard) = stem.rsplit_once('-')?;
    let shard = shard.parse().ok()?;
    let simulation = rest.strip_suffix(record)?.strip_suffix('-')?;
    Some((simulation, shard))
}

/// The files of `record` for `simulation` in `dir`, by shard.
fn shards(dir: &Path, simulation: &str, record: &str, ext: &str) -> Result<BTreeMap<u32, PathBuf>, ReportError> {
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(dir).map_err(|e| ReportError::io(dir, e))? {
        let entry = entry.map_err(|e| ReportError::io(dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some((sim, shard)) = split_name(name, record, ext)
            && sim == simulation
        {
            found.insert(shard, entry.path());
        }
    }
    Ok(found)
}

/// The simulations whose manifests are in `dir`.
pub fn simulations(dir: &Path) -> Result<Vec<String>, ReportError> {
    let mut names = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(dir).map_err(|e| ReportError::io(dir, e))? {
        let entry = entry.map_err(|e| ReportError::io(dir, e))?;
        if let Some((sim, _)) = entry
            .file_name()
            .to_str()
            .and_then(|n| split_name(n, "manifest", ".json"))
        {
            names.insert(sim.to_string());
        }
    }
    Ok(names.into_iter().collect())
}

/// Reads the run `simulation` (or the only one) in `dir`.
pub fn read_run(dir: &Path, simulation: Option<&str>) -> Result<RunData, ReportError> {
    let simulation = match simulation {
        Some(s) => s.to_string(),
        None => {
            let mut all = simulations(dir)?;
            match all.len() {
                0 => return Err(ReportError::NoRun { dir: dir.to_path_buf() }),
                1 => all.remove(0),
                _ => {
                    return Err(ReportError::SeveralRuns {
                        dir: dir.to_path_buf(),
                        names: all,
                    });
                }
            }
        }
    };
    let mut files = Vec::new();
    let mut manifests = Vec::new();
    for path in shards(dir, &simulation, "manifest", ".json")?.into_values() {
        let text = std::fs::read_to_string(&path).map_err(|e| ReportError::io(&path, e))?;
        let value = serde_json::from_str(&text).map_err(|e| ReportError::Parse {
            path: path.clone(),
            why: e.to_string(),
        })?;
        manifests.push(value);
        files.push(path);
    }
    if manifests.is_empty() {
        return Err(ReportError::NoRun { dir: dir.to_path_buf() });
    }
    let mut wqes = Vec::new();
    for path in shards(dir, &simulation, "rdma-perf", ".csv")?.into_values() {
        read_perf(&path, &mut wqes)?;
        files.push(path);
    }
    let mut beacon = Beacon::default();
    for path in shards(dir, &simulation, "beacon", ".csv")?.into_values() {
        add_beacon(&path, &mut beacon)?;
        files.push(path);
    }
    Ok(RunData {
        simulation,
        manifests,
        wqes,
        beacon,
        files,
    })
}

/// A CSV file's rows with a lookup of named columns.
struct Table {
    path: PathBuf,
    headers: Vec<String>,
    reader: csv::Reader<std::fs::File>,
}

impl Table {
    fn open(path: &Path) -> Result<Self, ReportError> {
        let mut reader = csv::Reader::from_path(path).map_err(|e| ReportError::Parse {
            path: path.to_path_buf(),
            why: e.to_string(),
        })?;
        let headers = reader
            .headers()
            .map_err(|e| ReportError::Parse {
                path: path.to_path_buf(),
                why: e.to_string(),
            })?
            .iter()
            .map(str::to_string)
            .collect();
        Ok(Self {
            path: path.to_path_buf(),
            headers,
            reader,
        })
    }

    fn index(&self, column: &str) -> Result<usize, ReportError> {
        self.headers
            .iter()
            .position(|h| h == column)
            .ok_or_else(|| ReportError::Parse {
                path: self.path.clone(),
                why: format!("no column `{column}`"),
            })
    }

    /// Calls `f` with each row's fields and its line number.
    fn rows(&mut self, mut f: impl FnMut(&csv::StringRecord, u64) -> Result<(), String>) -> Result<(), ReportError> {
        let mut record = csv::StringRecord::new();
        loop {
            match self.reader.read_record(&mut record) {
                Ok(false) => return Ok(()),
                Ok(true) => {
                    let line = record.position().map_or(0, |p| p.line());
                    f(&record, line).map_err(|why| ReportError::Parse {
                        path: self.path.clone(),
                        why: format!("line {line}: {why}"),
                    })?;
                }
                Err(e) => {
                    return Err(ReportError::Parse {
                        path: self.path.clone(),
                        why: e.to_string(),
                    });
                }
            }
        }
    }
}

fn field<T: std::str::FromStr>(r: &csv::StringRecord, i: usize, name: &str) -> Result<T, String> {
    let v = r.get(i).unwrap_or("");
    v.parse()
        .map_err(|_| format!("`{v}` in column `{name}` is not a number"))
}

fn read_perf(path: &Path, out: &mut Vec<WqeRow>) -> Result<(), ReportError> {
    let mut t = Table::open(path)?;
    let names = [
        "sim_time_sec",
        "perf_metric_usec",
        "transfer_size",
        "node_id",
        "responder_node_id",
        "doorbell_usec",
        "nic_wait_usec",
        "fetch_usec",
        "network_usec",
        "ack_usec",
    ];
    let mut ix = [0usize; 10];
    for (i, n) in names.iter().enumerate() {
        ix[i] = t.index(n)?;
    }
    t.rows(|r, _| {
        let mut parts = [0.0; 5];
        for (k, p) in parts.iter_mut().enumerate() {
            *p = field(r, ix[5 + k], names[5 + k])?;
        }
        out.push(WqeRow {
            done_sec: field(r, ix[0], names[0])?,
            latency_usec: field(r, ix[1], names[1])?,
            bytes: field(r, ix[2], names[2])?,
            initiator: field(r, ix[3], names[3])?,
            responder: field(r, ix[4], names[4])?,
            parts_usec: parts,
        });
        Ok(())
    })
}

/// Adds one shard's beacon to `beacon`: the shards tick at the same times, so row i of each adds up.
fn add_beacon(path: &Path, beacon: &mut Beacon) -> Result<(), ReportError> {
    let mut t = Table::open(path)?;
    let time = t.index("sim_time_sec")?;
    let numeric: Vec<(usize, String)> = t
        .headers
        .iter()
        .enumerate()
        .filter(|(i, h)| *i != time && h.as_str() != "job_id" && h.as_str() != "time_utc")
        .map(|(i, h)| (i, h.clone()))
        .collect();
    let first = beacon.rows.is_empty();
    if first {
        beacon.columns = numeric.iter().map(|(_, h)| h.clone()).collect();
    }
    let columns = beacon.columns.clone();
    let mut row = 0;
    t.rows(|r, _| {
        let at: f64 = field(r, time, "sim_time_sec")?;
        let mut values = vec![0.0; columns.len()];
        for (i, name) in &numeric {
            if let Some(k) = columns.iter().position(|c| c == name) {
                values[k] = field(r, *i, name)?;
            }
        }
        if first {
            beacon.rows.push((at, values));
        } else if let Some((_, sum)) = beacon.rows.get_mut(row) {
            sum.iter_mut().zip(values).for_each(|(s, v)| *s += v);
        }
        row += 1;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_at_the_record() {
        assert_eq!(
            split_name("my-run-rdma-perf-3.csv", "rdma-perf", ".csv"),
            Some(("my-run", 3))
        );
        assert_eq!(
            split_name("default-beacon-0.csv", "beacon", ".csv"),
            Some(("default", 0))
        );
        assert_eq!(split_name("default-beacon-x.csv", "beacon", ".csv"), None);
        assert_eq!(split_name("default-rdma-perf-0.csv", "beacon", ".csv"), None);
    }
}
