//! Scenario text: loading a RON scenario into a config type, `--set PATH=VALUE` overrides, and
//! one error type, [`ScenarioError`], that says the file, line, column and field of whatever is
//! wrong and renders the offending line with a caret. The text tools (`span`, `path`) know RON's
//! structure but no Rust type; `load` hands the text to ron and maps its errors back to the text.
//!
//! ```
//! # #[derive(serde::Deserialize)] struct Sim { #[serde(rename = "RunTime")] run_time: f64 }
//! # #[derive(serde::Deserialize)] struct Scenario { simulation: Sim }
//! let text = "(simulation: (RunTime: 0.5))";
//! let text = engine::scenario::apply_override(text, "simulation.RunTime=0.01").unwrap();
//! let scenario: Scenario = engine::scenario::load("inline.ron", &text).unwrap();
//! assert_eq!(scenario.simulation.run_time, 0.01);
//!
//! let Err(err) = engine::scenario::load::<Scenario>("inline.ron", "(simulation: (RunTime: \"x\"))")
//! else { panic!("a string is not a number") };
//! assert!(err.to_string().starts_with("inline.ron:1:24: simulation.RunTime: "), "{err}");
//! println!("{}", err.render()); // the line, with a caret under `"x"`
//! ```

// An error here ends the run and is built once; its named fields (file, line, column, field,
// message) are the API callers match on, so they are not boxed away.
#![allow(clippy::result_large_err)]

pub mod diagnostic;
pub mod field;
pub mod lex;
pub mod load;
pub mod overrides;
pub mod path;
pub mod read;
pub mod span;

pub use diagnostic::ScenarioError;
pub use field::FieldError;
pub use load::{load, load_file, ron_options};
pub use overrides::{OverrideError, apply_override, apply_overrides, did_you_mean};
pub use path::{FieldPath, PathError, value_span};
pub use read::{MAX_SCENARIO_BYTES, read_scenario};
pub use span::Span;

/// The scenario the module tests share (the shape of `scenarios/default.ron`).
#[cfg(test)]
pub(crate) const SAMPLE: &str = r#"// comments allowed
#![enable(implicit_some)]
(
    name: "default",
    simulation: (RunTime: 0.5, RandomSeed: 18760),
    topology: LeafSpine(leaves: 4, spines: 4, hosts_per_leaf: 4),
    nic: RoceNic((PortRate: "400Gbps", Mss: "4KiB")),
    switch: (buffer: "32MiB"),
    applications: [ScalaRdma((prScalaRdmaInitiator: 0.5, NumConnections: 1))],
)
"#;
