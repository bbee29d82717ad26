//! The `rdmasim` program's library: load and check a scenario, assemble the simulation, run it,
//! summarize. The command line (`main.rs`) and the integration tests both go through `run`.
//!
//! ```no_run
//! let loaded = rdmasim::scenario::load_path("scenarios/default.ron".as_ref(), &[]).unwrap();
//! let setup = rdmasim::RunSetup {
//!     output: engine::records::Output::Folder("out".into()),
//!     name: None,
//!     clock: engine::clock::WallClock::from_env(),
//! };
//! let outcome = rdmasim::run(&loaded, &setup, None).unwrap();
//! println!("{}", outcome.summary);
//! ```

pub mod assemble;
pub mod capture;
pub mod interrupt;
pub mod limits;
#[cfg(feature = "mpi")]
pub mod mpi_shard;
pub mod scenario;
pub mod service;
pub mod shards;
pub mod summary;
pub mod sweep;
pub mod switch_choice;

pub use assemble::{RunSetup, build_app};
use engine::prelude::*;
use summary::Summary;

/// What a run leaves: its summary and the world, for callers that inspect it (tests).
pub struct Outcome {
    /// What the run did, as printed and as in the manifest.
    pub summary: Summary,
    /// The app after the run, its world as the run left it.
    pub app: App,
    /// The files written: the records and the manifest.
    pub files: Vec<std::path::PathBuf>,
}

/// Runs a loaded scenario to its stop time. `progress` is told the simulated time and events
/// after every beacon tick. An output folder or file that cannot be created is an error holding
/// an `engine::records::OpenError` (see `open_error`), found before the run's first event.
pub fn run(
    loaded: &scenario::Loaded,
    setup: &RunSetup,
    progress: Option<&mut dyn FnMut(SimTime, u64)>,
) -> std::io::Result<Outcome> {
    run_stoppable(loaded, setup, progress, &std::sync::atomic::AtomicUsize::new(0))
}

/// As `run`, but stops at the first beacon tick after `stop` holds a signal number
/// (`interrupt::install`): the records end there and the manifest says `interrupted`.
pub fn run_stoppable(
    loaded: &scenario::Loaded,
    setup: &RunSetup,
    progress: Option<&mut dyn FnMut(SimTime, u64)>,
    stop: &std::sync::atomic::AtomicUsize,
) -> std::io::Result<Outcome> {
    run_group(loaded, setup, assemble::plugins(loaded), progress, stop)
}

/// As `run_stoppable`, with the caller's plugin group (`assemble::plugins` and, say, a capture's
/// `pcap::PcapPlugin` added).
pub fn run_group(
    loaded: &scenario::Loaded,
    setup: &RunSetup,
    group: engine::app::PluginGroupBuilder,
    progress: Option<&mut dyn FnMut(SimTime, u64)>,
    stop: &std::sync::atomic::AtomicUsize,
) -> std::io::Result<Outcome> {
    let mut app = assemble::build_app_with(loaded, setup, group)?;
    let opts = RunOptions {
        stop: loaded.timeline.stop,
        beacon_interval: loaded.timeline.beacon_interval,
        progress,
    };
    let stats = app.run_stoppable(opts, stop);
    if let Some(e) = app.world.resource_mut::<Records>().take_open_error() {
        return Err(std::io::Error::other(e));
    }
    let name = setup.simulation_name(loaded).to_string();
    let mut summary = summary::summarize(&mut app.world, &name, &stats);
    let records = app.world.resource::<Records>();
    if let Some(e) = records.error() {
        // "writing PATH: <os error>"; the files end at their last whole row.
        return Err(std::io::Error::other(e.to_string()));
    }
    if let Some(StopCause::Flag(sig)) = stats.stopped {
        summary.interrupted = Some(interrupt::Interrupted::new(sig, stats.sim_time.as_secs_f64()));
    }
    let mut files: Vec<std::path::PathBuf> = records.paths().into_iter().map(|p| p.to_path_buf()).collect();
    if let engine::records::Output::Folder(dir) = &setup.output {
        let names = files
            .iter()
            .filter_map(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        let manifest = summary::manifest(loaded, &name, &summary, names);
        let path = dir.join(format!("{name}-manifest-0.json"));
        write_json(&path, &manifest)?;
        files.push(path);
    }
    Ok(Outcome { summary, app, files })
}

/// The output folder or file that `run`'s error could not create, if that is what it is.
pub fn open_error(e: &std::io::Error) -> Option<&engine::records::OpenError> {
    e.get_ref()?.downcast_ref()
}

/// Writes `value` as pretty JSON, one line feed at the end.
pub(crate) fn write_json(path: &std::path::Path, value: &impl serde::Serialize) -> std::io::Result<()> {
    let json = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    let mut file = engine::records::create_file(path).map_err(std::io::Error::other)?;
    std::io::Write::write_all(&mut file, (json + "\n").as_bytes())
        .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))
}
