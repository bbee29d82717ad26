//! The rdmasim results service: the spec's API for configurations, simulations and their records,
//! served over HTTP from one machine (`rdmasim serve`). A configuration is a RON scenario and the
//! spec's global simulation parameters; a simulation runs one in a child `rdmasim run` process,
//! into the data directory; its records are listed and downloaded through signed links.
//!
//! This crate does not depend on the simulator: the `rdmasim` command passes in a
//! [`ScenarioCheck`] (its loader) and the path of its own executable, which runs the simulations.
//!
//! ```no_run
//! use rdmasim_serve::{Auth, Rejection, ScenarioCheck, ServeConfig};
//! use std::sync::Arc;
//!
//! struct AcceptAll;
//! impl ScenarioCheck for AcceptAll {
//!     fn check(&self, _text: &str, _overrides: &[String]) -> Result<(), Rejection> {
//!         Ok(())
//!     }
//! }
//!
//! let mut config = ServeConfig::new("rdmasim-data".into(), "/usr/local/bin/rdmasim".into());
//! config.auth = Auth::Token("s3cret".into());
//! rdmasim_serve::serve_blocking(config, Arc::new(AcceptAll), |url| println!("listening on {url}")).unwrap();
//! ```

mod api;
mod config;
mod db;
mod files;
mod params;
mod runner;
mod signing;

pub use api::{Route, route_table};
pub use config::{Auth, ServeConfig, ServeError, default_workers, resolve_auth};
pub use params::PARAMETERS;

use std::sync::Arc;

/// Where a scenario is wrong, as the loader reports it: the `rdmasim` command's
/// `engine::scenario::ScenarioError`, flattened for JSON.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Rejection {
    /// The whole report on one line, `file:line:column: field: message`.
    pub error: String,
    /// The file as messages name it (`scenario.ron`, or `<--set>` for an override).
    pub file: String,
    /// The line at fault, from 1 (0: none).
    pub line: usize,
    /// The column at fault, in chars from 1 (0: none).
    pub column: usize,
    /// The dotted path of the field at fault, e.g. `simulation.RunTime`.
    pub field: Option<String>,
    /// What is wrong, without the location.
    pub message: String,
}

/// The simulator's scenario loader, as the service needs it. The `rdmasim` command implements it
/// with its own loader, so a configuration is checked exactly as `rdmasim run` checks a file.
pub trait ScenarioCheck: Send + Sync + 'static {
    /// Loads `text` (named `scenario.ron`) with `overrides` applied in order, each a `--set`
    /// argument `PATH=VALUE`, and runs every check that `rdmasim run` runs before it starts.
    fn check(&self, text: &str, overrides: &[String]) -> Result<(), Rejection>;
}

/// Runs the service until SIGINT or SIGTERM on a runtime of its own: binds `config.listen`,
/// recovers the data directory (runs in flight when the server last stopped are marked failed),
/// starts the workers, then calls `ready` with the base URL (e.g. `http://127.0.0.1:8080`).
pub fn serve_blocking(
    config: ServeConfig,
    check: Arc<dyn ScenarioCheck>,
    ready: impl FnOnce(&str),
) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| ServeError::Io("the async runtime".into(), e))?;
    runtime.block_on(api::serve(config, check, ready))
}
