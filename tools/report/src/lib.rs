//! Reports: one self-contained HTML file per run (`write_run_report`) and per sweep
//! (`sweep_page::write_sweep_report`), with SVG
//! plots drawn by plotters and tables, computed from the output files alone (any shard count),
//! so a report can be made again, or elsewhere, from a folder of records.
//!
//! ```no_run
//! let path = report::write_run_report("out".as_ref(), None).unwrap();
//! println!("wrote {}", path.display());
//! ```

pub mod html;
pub mod load;
pub mod plot;
pub mod run_page;
pub mod stats;
pub mod sweep_page;

use std::path::{Path, PathBuf};

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// No manifest in the folder.
    #[error("{}: no run's manifest ({{simulation}}-manifest-{{shard}}.json) here: give the folder `rdmasim run --out` wrote", dir.display())]
    NoRun {
        /// The folder.
        dir: PathBuf,
    },
    /// Several simulations in one folder, and none chosen.
    #[error("{}: holds several runs ({}): choose one with --name", dir.display(), names.join(", "))]
    SeveralRuns {
        /// The folder.
        dir: PathBuf,
        /// Their names.
        names: Vec<String>,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file's content is not what rdmasim writes.
    #[error("{}: {why}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line when known.
        why: String,
    },
    /// A plot could not be drawn.
    #[error("drawing a plot: {0}")]
    Plot(String),
}

impl ReportError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        ReportError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Reads the run `simulation` (or the folder's only run) in `dir` and writes
/// `dir/{simulation}-report.html`; returns its path.
pub fn write_run_report(dir: &Path, simulation: Option<&str>) -> Result<PathBuf, ReportError> {
    let run = load::read_run(dir, simulation)?;
    let html = run_page::render(&run)?;
    let path = dir.join(format!("{}-report.html", run.simulation));
    std::fs::write(&path, html).map_err(|e| ReportError::io(&path, e))?;
    Ok(path)
}
