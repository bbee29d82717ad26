//! What `rdmasim serve` hands the results service (`rdmasim-serve`): this crate's loader as its
//! [`ScenarioCheck`], so a configuration is refused for exactly what `rdmasim run` refuses.

use crate::scenario::{fnv1a, load_text};
use rdmasim_serve::{Rejection, ScenarioCheck};

/// The name a configuration's text has in messages, and in the run folder the service gives
/// `rdmasim run` (so the manifest's `scenario_file` reads `scenario.ron`).
pub const SCENARIO_FILE: &str = "scenario.ron";

/// Loads a configuration as `rdmasim run scenario.ron --set ...` does.
#[derive(Clone, Copy, Debug, Default)]
pub struct Loader;

impl ScenarioCheck for Loader {
    fn check(&self, text: &str, overrides: &[String]) -> Result<(), Rejection> {
        let loaded = load_text(SCENARIO_FILE, text, overrides).map_err(|e| Rejection {
            error: e.to_string(),
            file: e.file.clone(),
            line: e.line,
            column: e.column,
            field: e.field.clone(),
            message: e.message.clone(),
        })?;
        // A run's folder holds only its scenario: one that reads other files (a Flows traffic
        // matrix) would not find them there.
        if loaded.hash != fnv1a(&loaded.text) {
            let message = "the service runs self-contained scenarios: an application here reads another file (e.g. a Flows matrix); run it with `rdmasim run`".to_string();
            return Err(Rejection {
                error: format!("{SCENARIO_FILE}: applications: {message}"),
                file: SCENARIO_FILE.into(),
                field: Some("applications".into()),
                message,
                ..Rejection::default()
            });
        }
        Ok(())
    }
}
