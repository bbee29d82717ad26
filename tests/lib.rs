//! Shared helpers for the integration tests: find the workspace's scenarios, load one with
//! `--set`-style overrides, run it into a scratch folder that is removed when dropped, and read
//! the CSV records back with exact (integer picosecond) time columns.
//!
//! Runs use a fixed wall clock so that `time_utc` does not depend on when the test ran, and the
//! records can be compared byte for byte.

use engine::clock::WallClock;
use engine::prelude::*;
use engine::records::Output;
use rdmasim::scenario::{Loaded, load_path, load_text};
use rdmasim::{Outcome, RunSetup};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The instant every test run's `time_utc` is fixed at (2026-01-01T00:00:00Z).
pub const FIXED_EPOCH_SECS: i64 = 1_767_225_600;

/// The workspace root (the tests crate lives in `tests/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// `scenarios/<file>` in the workspace.
pub fn scenario_path(file: &str) -> PathBuf {
    workspace_root().join("scenarios").join(file)
}

/// Every `scenarios/*.ron`, sorted by name.
pub fn all_scenarios() -> Vec<PathBuf> {
    ron_files_in("scenarios")
}

/// Every `scenarios/cc/*.ron` (the congestion-control scenarios), sorted by name. Kept apart
/// from `all_scenarios`: their flows never end and share one port, so they need a longer
/// `RunTime` to complete a WRITE, and the full-length and digest runs leave them out.
pub fn cc_scenarios() -> Vec<PathBuf> {
    ron_files_in("scenarios/cc")
}

fn ron_files_in(folder: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(workspace_root().join(folder))
        .unwrap_or_else(|e| panic!("{folder}/ is not readable: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ron"))
        .collect();
    files.sort();
    files
}

fn owned(overrides: &[&str]) -> Vec<String> {
    overrides.iter().map(|s| s.to_string()).collect()
}

/// Loads a scenario file with overrides (`"simulation.RunTime=0.001"`); panics with the
/// loader's message if it is rejected.
pub fn load(path: &Path, overrides: &[&str]) -> Loaded {
    load_path(path, &owned(overrides)).unwrap_or_else(|e| panic!("{} rejected: {e}", path.display()))
}

/// Loads scenario text (named `file` in messages) with overrides.
pub fn load_str(file: &str, text: &str, overrides: &[&str]) -> Loaded {
    load_text(file, text, &owned(overrides)).unwrap_or_else(|e| panic!("{file} rejected: {e}"))
}

/// A scratch folder under the system's temp dir, unique to this process and call, removed
/// with everything in it when dropped.
#[derive(Debug)]
pub struct ScratchDir {
    /// The folder.
    pub path: PathBuf,
}

impl ScratchDir {
    /// A new, empty folder whose name carries `tag`.
    pub fn new(tag: &str) -> ScratchDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("rdmasim-it-{tag}-{}-{n}", std::process::id()));
        // A leftover from a killed run with a recycled pid: start clean.
        std::fs::remove_dir_all(&path).ok();
        std::fs::create_dir_all(&path).expect("create a scratch folder");
        ScratchDir { path }
    }

    /// The path of `name` in the folder.
    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// The records a run wrote here, by name, sorted: every file but the manifest (which holds
    /// the wall time).
    pub fn records(&self) -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<_> = std::fs::read_dir(&self.path)
            .expect("the run's folder")
            .map(|e| e.expect("a folder entry").path())
            .filter(|p| !p.to_string_lossy().ends_with(".json"))
            .collect();
        files.sort();
        files
            .into_iter()
            .map(|f| {
                let name = f.file_name().expect("a name").to_string_lossy().into_owned();
                (name, std::fs::read(&f).expect("an output file"))
            })
            .collect()
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.path).ok();
    }
}

/// Runs a loaded scenario into a fresh scratch folder, with the wall clock fixed.
pub fn run_loaded(loaded: &Loaded, tag: &str) -> (Outcome, ScratchDir) {
    let dir = ScratchDir::new(tag);
    let setup = RunSetup {
        output: Output::Folder(dir.path.clone()),
        name: None,
        clock: WallClock::fixed_at(FIXED_EPOCH_SECS),
    };
    let outcome = rdmasim::run(loaded, &setup, None).unwrap_or_else(|e| panic!("{} failed: {e}", loaded.file));
    (outcome, dir)
}

/// A run setup that writes no records, with the wall clock fixed: for tests that read the
/// world after the run rather than its files.
pub fn quiet_setup() -> RunSetup {
    RunSetup {
        output: Output::Null,
        name: None,
        clock: WallClock::fixed_at(FIXED_EPOCH_SECS),
    }
}

/// Builds `loaded`'s app with `quiet_setup`, for a test that subscribes a tracer or reads the
/// world before running it with `run_built`.
pub fn build_quiet(loaded: &Loaded) -> App {
    rdmasim::build_app(loaded, &quiet_setup()).unwrap_or_else(|e| panic!("{} does not build: {e}", loaded.file))
}

/// Runs an app built from `loaded` over the scenario's timeline.
pub fn run_built(app: &mut App, loaded: &Loaded) -> RunStats {
    app.run(RunOptions {
        stop: loaded.timeline.stop,
        beacon_interval: loaded.timeline.beacon_interval,
        progress: None,
    })
}

/// Loads `path` with `overrides` and runs it (see `run_loaded`).
pub fn run_scenario(path: &Path, overrides: &[&str]) -> (Outcome, ScratchDir) {
    let loaded = load(path, overrides);
    let tag = path
        .file_stem()
        .map_or("run".into(), |s| s.to_string_lossy().into_owned());
    run_loaded(&loaded, &tag)
}

/// A CSV file read whole: its header and rows, as text.
#[derive(Clone, Debug)]
pub struct Csv {
    /// The header row's fields.
    pub header: Vec<String>,
    /// The rows' fields, in file order.
    pub rows: Vec<Vec<String>>,
}

impl Csv {
    /// Reads the CSV file at `path`; panics if it cannot.
    pub fn read(path: &Path) -> Csv {
        let mut reader = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
        let header = reader
            .headers()
            .expect("a header row")
            .iter()
            .map(str::to_string)
            .collect();
        let rows = reader
            .records()
            .map(|r| r.expect("a well-formed row").iter().map(str::to_string).collect())
            .collect();
        Csv { header, rows }
    }

    /// The index of column `name`; panics if there is none.
    pub fn col(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", self.header))
    }

    /// Every row's value in column `name`.
    pub fn column(&self, name: &str) -> Vec<&str> {
        let c = self.col(name);
        self.rows.iter().map(|r| r[c].as_str()).collect()
    }
}

/// Every pair's goodput is within `lo..=hi` Gbps.
pub fn assert_goodput_between(summary: &rdmasim::summary::Summary, lo: f64, hi: f64) {
    assert!(!summary.pairs.is_empty(), "no pairs");
    for p in &summary.pairs {
        assert!(
            (lo..=hi).contains(&p.gbps),
            "pair {} -> {}: {:.2} Gbps, not within {lo:.2}-{hi:.2}",
            p.initiator,
            p.responder,
            p.gbps
        );
    }
}

/// Parses a decimal with at most `digits` fraction digits as an integer count of
/// 10^-digits units, exactly: `fixed_point("17.152122", 6)` is 17_152_122.
pub fn fixed_point(text: &str, digits: u32) -> u64 {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    assert!(frac.len() <= digits as usize, "{text} has more than {digits} decimals");
    let pad = 10u64.pow(digits - frac.len() as u32);
    let int: u64 = int.parse().unwrap_or_else(|_| panic!("{text} is not a decimal"));
    let frac: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().expect("digits")
    };
    int * 10u64.pow(digits) + frac * pad
}

/// A `*_usec` column (six decimals) in picoseconds.
pub fn usec_ps(text: &str) -> u64 {
    fixed_point(text, 6)
}

/// A `*_sec` column (twelve decimals) in picoseconds.
pub fn sec_ps(text: &str) -> u64 {
    fixed_point(text, 12)
}

/// Picoseconds in one second.
pub const PS_PER_SEC: u64 = 1_000_000_000_000;
