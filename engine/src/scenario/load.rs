//! Deserializing scenario text into a config type with ron, turning every failure — syntax, an
//! unknown or missing field, a wrong type, a type's own `Deserialize`/`TryFrom` check — into a
//! [`ScenarioError`] at ron's position, with the field path `serde_path_to_error` tracked.
//!
//! Accepted syntax (ron 0.12 with `implicit_some` on by default):
//! - an optional field takes `5`, `Some(5)` or `None`;
//! - a struct variant takes its fields directly: `Star(hosts: 10)`;
//! - a newtype variant holding a struct takes it in its own parentheses: `RoceNic((Mss: "4KiB"))`,
//!   `RoceNic(())` for all defaults. A file may opt into `#![enable(unwrap_variant_newtypes)]` and
//!   write `RoceNic(Mss: "4KiB")` instead, but then every newtype variant in it must be written
//!   that way: ron 0.12 rejects the double-parenthesis form under that extension, which is why it
//!   is not on by default.

use super::diagnostic::ScenarioError;
use super::overrides::{OverrideErrorKind, apply_overrides, did_you_mean};
use super::path::FieldPath;
use super::span::offset_of;
use ron::error::{Error as RonError, SpannedError};
use ron::extensions::Extensions;
use serde::de::{Deserialize, DeserializeOwned};
use serde_path_to_error::{Segment, Track};
use std::path::Path;

/// The ron options every scenario is read with.
pub fn ron_options() -> ron::Options {
    ron::Options::default().with_default_extension(Extensions::IMPLICIT_SOME)
}

/// Deserializes scenario `text`; `file` is only used in messages.
pub fn load<T: DeserializeOwned>(file: &str, text: &str) -> Result<T, ScenarioError> {
    let options = ron_options();
    let mut de = ron::Deserializer::from_str_with_options(text, &options)
        .map_err(|error| from_ron(file, text, &error, None))?;
    let mut track = Track::new();
    let result = T::deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track));
    let value = match result {
        Ok(value) => value,
        Err(error) => {
            // The parser still sits where it stopped, so the span is taken from it now.
            let error = de.span_error(error);
            return Err(from_ron(file, text, &error, field_path(&track.path())));
        }
    };
    de.end().map_err(|error| from_ron(file, text, &de.span_error(error), None))?;
    Ok(value)
}

/// Reads the scenario at `path`, applies `--set` assignments in order, then [`load`]s it.
/// Errors in the overridden text point into that text and say which `--set` was applied.
pub fn load_file<T: DeserializeOwned>(path: &Path, overrides: &[String]) -> Result<T, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| ScenarioError::without_source(&file, format!("cannot read the scenario: {e}")))?;
    if overrides.is_empty() {
        return load(&file, &text);
    }
    let overridden = match apply_overrides(&text, overrides) {
        Ok(overridden) => overridden,
        Err(error) => {
            let OverrideErrorKind::Scenario { error: scan, .. } = &error.kind else {
                return Err(error.into());
            };
            // The file itself is broken: report that in the file's own text, as ron sees it.
            return Err(match load::<T>(&file, &text) {
                Err(error) => error,
                Ok(_) => ScenarioError::at_offset(&file, text.clone(), scan.offset(), None, scan.to_string()),
            });
        }
    };
    load(&file, &overridden).map_err(|mut error| {
        error.message += &override_note(error.field.as_deref(), overrides);
        error
    })
}

/// Which `--set` an error in overridden text came from: the last one whose path contains or is
/// contained in the error's field, else all of them.
fn override_note(field: Option<&str>, overrides: &[String]) -> String {
    let segments = |text: &str| FieldPath::parse(text.trim()).map(|p| p.segments).unwrap_or_default();
    let field = field.map(segments).unwrap_or_default();
    let culprit = overrides.iter().rev().find(|assignment| {
        let set = segments(assignment.split_once('=').map_or("", |(path, _)| path));
        let n = set.len().min(field.len());
        n > 0 && set[..n] == field[..n]
    });
    match culprit {
        Some(assignment) => format!(" (set by --set {assignment})"),
        None => {
            let all: Vec<String> = overrides.iter().map(|a| format!("--set {a}")).collect();
            format!(" (in the scenario after {})", all.join(", "))
        }
    }
}

/// The dotted path of the field ron was reading, without enum variant names, so it reads like a
/// `--set` path: `applications[0].NumConnections`, not `applications[0].ScalaRdma.NumConnections`.
fn field_path(path: &serde_path_to_error::Path) -> Option<String> {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Seq { index } => out += &format!("[{index}]"),
            Segment::Map { key } if out.is_empty() => out += key,
            Segment::Map { key } => out += &format!(".{key}"),
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    (!out.is_empty()).then_some(out)
}

fn from_ron(file: &str, text: &str, error: &SpannedError, field: Option<String>) -> ScenarioError {
    let start = offset_of(text, error.span.start.line, error.span.start.col);
    let end = offset_of(text, error.span.end.line, error.span.end.col);
    let message = message(&error.code);
    if end > start {
        ScenarioError::at_range(file, text, start..end, field, message)
    } else {
        ScenarioError::at_offset(file, text, start, field, message)
    }
}

/// ron's message, plus a suggestion where a name was mistyped or a newtype variant's
/// parentheses were left out.
fn message(code: &RonError) -> String {
    let suggestion = match code {
        RonError::NoSuchStructField { expected, found, .. } | RonError::NoSuchEnumVariant { expected, found, .. } => {
            did_you_mean(found, expected.iter().copied()).map(|s| format!("; did you mean `{s}`?"))
        }
        RonError::ExpectedDifferentStructName { expected, .. } => Some(format!(
            "; a newtype variant takes its struct in its own parentheses, e.g. `Variant(({expected} fields))`"
        )),
        _ => None,
    };
    format!("{code}{}", suggestion.unwrap_or_default())
}
