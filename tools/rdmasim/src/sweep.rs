//! `rdmasim sweep`: runs a scenario over the cartesian product of `--vary` values and seeds, each
//! point a child `rdmasim run` process in its own folder, as many at once as there are cores, and
//! writes `index.csv` (one row per point) and the sweep's report page.
//!
//! Every point is loaded and checked before any runs, so bad input fails at once (exit 2).

use crate::scenario::load_path;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One `--vary PATH=v1,v2,...`.
#[derive(Clone, Debug, PartialEq)]
pub struct Vary {
    /// The dotted path, as `--set` takes it.
    pub path: String,
    /// The RON values, in order.
    pub values: Vec<String>,
}

impl std::str::FromStr for Vary {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (path, values) = s
            .split_once('=')
            .ok_or_else(|| format!("`{s}`: write PATH=v1,v2,... (e.g. applications[0].NumConnections=1,2,4,8)"))?;
        let values = split_top_level(values);
        if path.trim().is_empty() || values.iter().any(|v| v.trim().is_empty()) {
            return Err(format!("`{s}`: a path and at least one value, none of them empty"));
        }
        Ok(Vary {
            path: path.trim().to_string(),
            values: values.into_iter().map(|v| v.trim().to_string()).collect(),
        })
    }
}

/// Splits at the commas that are not inside brackets, parentheses or quotes, so that a value may
/// be any RON (`topology=Star(hosts: 8),Star(hosts: 16)`).
fn split_top_level(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth, mut quoted) = (Vec::new(), String::new(), 0i32, false);
    for c in s.chars() {
        match c {
            '"' => quoted = !quoted,
            '(' | '[' | '{' if !quoted => depth += 1,
            ')' | ']' | '}' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out
}

/// One point of the sweep.
#[derive(Clone, Debug)]
pub struct Point {
    /// Its number, from 0, and its folder's name `point-NNN`.
    pub index: usize,
    /// The value of each `--vary`, in order.
    pub values: Vec<String>,
    /// `RandomSeed`.
    pub seed: u64,
}

/// The points: every combination of the varied values (the first `--vary` slowest), each with
/// `seeds` seeds from the scenario's own `RandomSeed` up.
pub fn points(vary: &[Vary], base_seed: u64, seeds: u64) -> Vec<Point> {
    let mut combos: Vec<Vec<String>> = vec![Vec::new()];
    for v in vary {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                v.values.iter().map(move |x| {
                    let mut c = c.clone();
                    c.push(x.clone());
                    c
                })
            })
            .collect();
    }
    let mut out = Vec::new();
    for values in combos {
        for k in 0..seeds {
            out.push(Point {
                index: out.len(),
                values: values.clone(),
                seed: base_seed.wrapping_add(k),
            });
        }
    }
    out
}

/// What the sweep needs besides the points.
pub struct Sweep<'a> {
    /// The scenario file.
    pub scenario: &'a Path,
    /// `--set`s applied to every point, before the varied values.
    pub set: &'a [String],
    /// The varied paths.
    pub vary: &'a [Vary],
    /// The output folder.
    pub out: &'a Path,
    /// Points run at once.
    pub jobs: usize,
    /// The `rdmasim` executable the points run.
    pub exe: PathBuf,
}

impl Sweep<'_> {
    /// The `--set`s of `p`: the common ones, the varied values, the seed.
    pub fn sets(&self, p: &Point) -> Vec<String> {
        let mut sets = self.set.to_vec();
        sets.extend(self.vary.iter().zip(&p.values).map(|(v, x)| format!("{}={x}", v.path)));
        sets.push(format!("simulation.RandomSeed={}", p.seed));
        sets
    }

    /// Loads and checks every point's scenario; the first that fails is the error.
    pub fn check(&self, points: &[Point]) -> Result<(), Box<engine::scenario::ScenarioError>> {
        for p in points {
            load_path(self.scenario, &self.sets(p))?;
        }
        Ok(())
    }

    /// The folder of point `p`.
    pub fn folder(&self, p: &Point) -> PathBuf {
        self.out.join(format!("point-{:03}", p.index))
    }

    /// Runs every point, `jobs` at once; `done` is told after each. Returns each point's result
    /// in point order.
    pub fn run(&self, points: &[Point], done: &(dyn Fn() + Sync)) -> Vec<Outcome> {
        let next = AtomicUsize::new(0);
        let results = Mutex::new(vec![None; points.len()]);
        std::thread::scope(|s| {
            for _ in 0..self.jobs.clamp(1, points.len().max(1)) {
                s.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(p) = points.get(i) else { break };
                        let o = self.run_point(p);
                        results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(o);
                        done();
                    }
                });
            }
        });
        results
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .into_iter()
            .map(|o| o.unwrap_or_else(|| Outcome::failed(None, "not run".into())))
            .collect()
    }

    fn run_point(&self, p: &Point) -> Outcome {
        let folder = self.folder(p);
        let mut cmd = Command::new(&self.exe);
        cmd.arg("run")
            .arg(self.scenario)
            .arg("--out")
            .arg(&folder)
            .args(["--quiet", "--json"]);
        for s in self.sets(p) {
            cmd.arg("--set").arg(s);
        }
        let out = match cmd.stdin(Stdio::null()).output() {
            Ok(o) => o,
            Err(e) => return Outcome::failed(None, format!("cannot start {}: {e}", self.exe.display())),
        };
        let code = out.status.code();
        if !out.status.success() {
            let why = String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            return Outcome::failed(code, why);
        }
        match Outcome::read(&out.stdout, &folder) {
            Ok(o) => o,
            Err(why) => Outcome::failed(code, why),
        }
    }
}

/// What one point gave (`None` where it failed).
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The child's exit code.
    pub exit_code: Option<i32>,
    /// Why it failed, if it did.
    pub error: Option<String>,
    /// Mean goodput per pair in the recording window, Gbps.
    pub goodput_gbps: Option<f64>,
    /// Goodput of all pairs together, Gbps.
    pub total_goodput_gbps: Option<f64>,
    /// WQE latency p50, p99, p99.9 over all pairs, microseconds.
    pub latency_usec: Option<[f64; 3]>,
    /// Data packets the fabric dropped (every cause).
    pub drops: Option<u64>,
    /// Data the NICs dropped on arrival (receive pool full).
    pub nic_drops: Option<u64>,
    /// The run's wall time, seconds.
    pub wall_sec: Option<f64>,
}

impl Outcome {
    fn failed(exit_code: Option<i32>, why: String) -> Self {
        Outcome {
            exit_code,
            error: Some(why),
            ..Default::default()
        }
    }

    /// Reads a point's JSON summary (standard output) and its records' latencies.
    fn read(stdout: &[u8], folder: &Path) -> Result<Self, String> {
        let s: serde_json::Value = serde_json::from_slice(stdout).map_err(|e| format!("its summary: {e}"))?;
        let gbps: Vec<f64> = s["pairs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["gbps"].as_f64())
            .collect();
        let drops = s["conservation"]["classes"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|c| {
                [
                    "dropped_lossy_limit",
                    "dropped_headroom",
                    "dropped_no_route",
                    "dropped_fault",
                ]
                .map(|k| c[k]["packets"].as_u64().unwrap_or(0))
            })
            .sum();
        let run = report::load::read_run(folder, None).map_err(|e| e.to_string())?;
        let lat = report::stats::latencies(&run);
        let latency_usec = report::stats::PERCENTILES
            .iter()
            .map(|&p| lat.overall.percentile(p))
            .collect::<Option<Vec<f64>>>()
            .map(|v| [v[0], v[1], v[2]]);
        Ok(Outcome {
            exit_code: Some(0),
            error: None,
            goodput_gbps: (!gbps.is_empty()).then(|| gbps.iter().sum::<f64>() / gbps.len() as f64),
            total_goodput_gbps: Some(gbps.iter().sum()),
            latency_usec,
            drops: Some(drops),
            nic_drops: s["nic_losses"]["receive_drops"].as_u64(),
            wall_sec: s["wall_sec"].as_f64(),
        })
    }
}

/// The columns of `index.csv` after the varied paths.
pub const INDEX_COLUMNS: [&str; 12] = [
    "seed",
    "goodput_gbps",
    "total_goodput_gbps",
    "p50_usec",
    "p99_usec",
    "p999_usec",
    "drops",
    "nic_drops",
    "wall_sec",
    "folder",
    "exit_code",
    "error",
];

/// Writes `index.csv` in `out`: a header (`point`, the varied paths, `INDEX_COLUMNS`), then one
/// row per point.
pub fn write_index(out: &Path, sweep: &Sweep, points: &[Point], outcomes: &[Outcome]) -> std::io::Result<PathBuf> {
    let path = out.join("index.csv");
    let mut w = csv::Writer::from_path(&path).map_err(std::io::Error::other)?;
    let mut header = vec!["point".to_string()];
    header.extend(sweep.vary.iter().map(|v| v.path.clone()));
    header.extend(INDEX_COLUMNS.iter().map(|c| c.to_string()));
    w.write_record(&header).map_err(std::io::Error::other)?;
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.6}"));
    for (p, o) in points.iter().zip(outcomes) {
        let mut row = vec![p.index.to_string()];
        row.extend(p.values.iter().cloned());
        let lat = |i: usize| opt(o.latency_usec.map(|l| l[i]));
        let folder = sweep.folder(p);
        row.extend([
            p.seed.to_string(),
            opt(o.goodput_gbps),
            opt(o.total_goodput_gbps),
            lat(0),
            lat(1),
            lat(2),
            o.drops.map_or(String::new(), |d| d.to_string()),
            o.nic_drops.map_or(String::new(), |d| d.to_string()),
            opt(o.wall_sec),
            folder
                .file_name()
                .map_or(String::new(), |f| f.to_string_lossy().into_owned()),
            o.exit_code.map_or(String::new(), |c| c.to_string()),
            o.error.clone().unwrap_or_default(),
        ]);
        w.write_record(&row).map_err(std::io::Error::other)?;
    }
    w.flush()?;
    let mut f = w.into_inner().map_err(|e| std::io::Error::other(e.to_string()))?;
    f.flush()?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vary_splits_at_top_level_commas() {
        let v: Vary = "topology=Star(hosts: 8),Star(hosts: 16)".parse().unwrap();
        assert_eq!(v.values, ["Star(hosts: 8)", "Star(hosts: 16)"]);
        let v: Vary = r#"nic.Mss="1,024B","4KiB""#.parse().unwrap();
        assert_eq!(v.values, [r#""1,024B""#, r#""4KiB""#]);
        assert!("NumConnections".parse::<Vary>().is_err());
        assert!("a=1,,2".parse::<Vary>().is_err());
    }

    #[test]
    fn points_are_the_product_times_the_seeds() {
        let vary = [
            Vary {
                path: "a".into(),
                values: vec!["1".into(), "2".into()],
            },
            Vary {
                path: "b".into(),
                values: vec!["x".into(), "y".into(), "z".into()],
            },
        ];
        let p = points(&vary, 10, 2);
        assert_eq!(p.len(), 2 * 3 * 2);
        assert_eq!(
            (p[0].values.clone(), p[0].seed),
            (vec!["1".to_string(), "x".to_string()], 10)
        );
        assert_eq!(
            (p[1].values.clone(), p[1].seed),
            (vec!["1".to_string(), "x".to_string()], 11)
        );
        assert_eq!(p[11].values, ["2", "z"]);
        assert!(p.iter().enumerate().all(|(i, q)| q.index == i));
    }
}
