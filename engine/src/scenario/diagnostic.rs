//! [`ScenarioError`]: the one error a user sees for anything wrong with a scenario — unreadable
//! file, RON syntax, unknown field, bad value, a config's own check, a bad `--set`. It carries the
//! file, 1-based line and column, the dotted field path when known and the message, prints as one
//! `file:line:column: field: message` line, and renders with miette as the offending line with a
//! caret under the value.

use super::overrides::OverrideError;
use super::path::{FieldPath, value_span};
use super::span::{floor_char_boundary, line_col};
use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceCode, SourceSpan};
use std::ops::Range;
use thiserror::Error;

/// Everything wrong with a scenario, located in its text.
///
/// `line` and `column` are 1-based (column in chars); both are 0 when there is no text to point
/// into (an unreadable file), and Display then prints `file: message`.
#[derive(Debug, Error)]
#[error("{}", self.summary())]
pub struct ScenarioError {
    /// The path as the user gave it, or `<--set>` for an override.
    pub file: String,
    /// The text the span points into, named for the report.
    pub source_text: NamedSource<String>,
    /// The bytes at fault, if there is text to point into.
    pub span: Option<SourceSpan>,
    /// The line at fault, from 1 (0: no text).
    pub line: usize,
    /// The column at fault, in chars from 1 (0: no text).
    pub column: usize,
    /// The dotted path of the field at fault, e.g. `applications[0].NumConnections`.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl ScenarioError {
    /// An error at one byte `offset` of `source` (the caret covers the char there).
    pub fn at_offset(
        file: impl Into<String>,
        source: impl Into<String>,
        offset: usize,
        field: Option<String>,
        message: impl Into<String>,
    ) -> Self {
        let source = source.into();
        let start = floor_char_boundary(&source, offset);
        let end = source[start..].chars().next().map_or(start, |c| start + c.len_utf8());
        Self::at_range(file, source, start..end, field, message)
    }

    /// An error covering the bytes `range` of `source` (clamped to the text).
    pub fn at_range(
        file: impl Into<String>,
        source: impl Into<String>,
        range: Range<usize>,
        field: Option<String>,
        message: impl Into<String>,
    ) -> Self {
        let (file, source) = (file.into(), source.into());
        let start = floor_char_boundary(&source, range.start);
        let end = floor_char_boundary(&source, range.end).max(start);
        let (line, column) = line_col(&source, start);
        ScenarioError {
            source_text: NamedSource::new(&file, source),
            file,
            span: Some(SourceSpan::new(start.into(), end - start)),
            line,
            column,
            field: field.filter(|f| !f.is_empty()),
            message: message.into(),
        }
    }

    /// An error about the value at `field_path`; if that value is not in the text (a defaulted
    /// field), it points at the nearest enclosing value that is, and failing that at line 1.
    pub fn at_field(
        file: impl Into<String>,
        source: impl Into<String>,
        field_path: &str,
        message: impl Into<String>,
    ) -> Self {
        let source = source.into();
        let span = FieldPath::parse(field_path).ok().and_then(|path| {
            (1..=path.segments.len()).rev().find_map(|n| {
                value_span(
                    &source,
                    &FieldPath {
                        segments: path.segments[..n].to_vec(),
                    },
                )
                .ok()
            })
        });
        let field = Some(field_path.to_owned());
        match span {
            Some(span) => Self::at_range(file, source, span.start..span.end, field, message),
            None => {
                let mut error = Self::at_range(file, source, 0..0, field, message);
                error.span = None;
                error
            }
        }
    }

    /// An error with no text to show, such as a file that cannot be read.
    pub fn without_source(file: impl Into<String>, message: impl Into<String>) -> Self {
        let file = file.into();
        ScenarioError {
            source_text: NamedSource::new(&file, String::new()),
            file,
            span: None,
            line: 0,
            column: 0,
            field: None,
            message: message.into(),
        }
    }

    /// The one-line form: `file:line:column: field: message`.
    fn summary(&self) -> String {
        let mut out = self.file.clone();
        if self.line > 0 {
            out += &format!(":{}:{}", self.line, self.column);
        }
        if let Some(field) = &self.field {
            out += &format!(": {field}");
        }
        out + ": " + &self.message
    }

    /// The full report: the one-line summary, then the offending line with a caret under the
    /// value. Plain unicode without colour, so it reads the same in a terminal, a log or a test.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor()).with_width(120);
        match handler.render_report(&mut out, self) {
            Ok(()) => out,
            Err(_) => self.to_string(),
        }
    }
}

impl Diagnostic for ScenarioError {
    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.span.map(|_| &self.source_text as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let label = self.field.clone().unwrap_or_else(|| "here".to_owned());
        let span = LabeledSpan::new_primary_with_span(Some(label), self.span?);
        Some(Box::new(std::iter::once(span)))
    }
}

/// A bad `--set` becomes an error in the text of the assignment itself.
impl From<OverrideError> for ScenarioError {
    fn from(error: OverrideError) -> Self {
        let field = Some(error.path_text().to_owned());
        ScenarioError::at_range(
            "<--set>",
            error.assignment.clone(),
            error.blame(),
            field,
            error.kind.to_string(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::SAMPLE;

    #[test]
    fn one_line_display() {
        let err = ScenarioError::at_offset("a.ron", "(x: 1,\n y: 2)", 8, Some("y".into()), "bad");
        assert_eq!((err.line, err.column), (2, 2));
        assert_eq!(err.to_string(), "a.ron:2:2: y: bad");
        let err = ScenarioError::at_offset("a.ron", "(x: 1", 5, None, "`(` is never closed");
        assert_eq!(err.to_string(), "a.ron:1:6: `(` is never closed");
        let err = ScenarioError::without_source("missing.ron", "cannot read the scenario: not found");
        assert_eq!(err.to_string(), "missing.ron: cannot read the scenario: not found");
        assert!(
            err.render()
                .contains("missing.ron: cannot read the scenario: not found")
        );
    }

    #[test]
    fn at_field_finds_the_value_or_its_nearest_ancestor() {
        let err = ScenarioError::at_field("s.ron", SAMPLE, "applications[0].NumConnections", "too many");
        assert_eq!((err.line, err.column), (9, 74));
        assert_eq!(err.span, Some(SourceSpan::new(SAMPLE.find("1))]").unwrap().into(), 1)));
        assert_eq!(err.to_string(), "s.ron:9:74: applications[0].NumConnections: too many");
        // A defaulted field is not in the text: point at the struct it belongs in.
        let err = ScenarioError::at_field("s.ron", SAMPLE, "simulation.Warmup", "must be shorter than RunTime");
        assert_eq!((err.line, err.column), (5, 17));
        let err = ScenarioError::at_field("s.ron", "(", "simulation", "m");
        assert_eq!((err.line, err.column, err.span), (1, 1, None));
    }

    #[test]
    fn render_shows_the_line_and_a_caret() {
        let err = ScenarioError::at_field("s.ron", SAMPLE, "simulation.RunTime", "must be positive");
        let report = err.render();
        assert!(
            report.contains("s.ron:5:27: simulation.RunTime: must be positive"),
            "{report}"
        );
        assert!(
            report.contains("simulation: (RunTime: 0.5, RandomSeed: 18760),"),
            "{report}"
        );
        assert!(report.contains("[s.ron:5:27]"), "{report}");
        // The caret sits under the middle char of `0.5` (columns counted in chars: the gutter
        // and underline are multi-byte).
        let column_of = |line: &str, pattern: &str| line.find(pattern).map(|i| line[..i].chars().count());
        let caret = report.lines().find_map(|l| column_of(l, "┬"));
        let value = report
            .lines()
            .find_map(|l| column_of(l, "RunTime: 0.5").map(|c| c + "RunTime: ".len()));
        assert_eq!(caret, value.map(|c| c + 1), "{report}");
    }

    #[test]
    fn override_errors_point_into_the_assignment() {
        let err: ScenarioError = crate::scenario::apply_override(SAMPLE, "simulation.RunTme.x=1")
            .unwrap_err()
            .into();
        assert_eq!(err.file, "<--set>");
        assert_eq!(err.field.as_deref(), Some("simulation.RunTme.x"));
        assert_eq!((err.line, err.column), (1, 1));
        assert!(err.message.contains("did you mean `RunTime`?"), "{}", err.message);
        assert!(err.render().contains("simulation.RunTme.x=1"));
    }
}
