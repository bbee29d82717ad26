//! `--set PATH=VALUE` overrides, applied to the scenario's text before it is deserialized, so the
//! overridden scenario is checked by exactly the same loader (and errors point at the same kind of
//! text) as one written by hand. An existing value is replaced; a field missing from a struct that
//! exists is inserted, since it is a defaulted field the author left out. Whether the inserted name
//! is a real field is for the deserializer to judge: it knows the type, this module only the text.

use super::span::{self, FieldPath, Node, NodeKind, PathError, PathSegment, ScanError};
use thiserror::Error;

/// An override that could not be applied; its Display names the `--set` assignment.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
#[error("--set {assignment}: {kind}")]
pub struct OverrideError {
    /// The `--set` argument as given.
    pub assignment: String,
    /// What is wrong with it.
    pub kind: OverrideErrorKind,
}

/// Why an override could not be applied.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
pub enum OverrideErrorKind {
    /// The argument has no `=`.
    #[error("expected PATH=VALUE, e.g. `simulation.RunTime=0.01`")]
    MissingEquals,
    /// The path is not a path.
    #[error("{0}")]
    BadPath(PathError),
    /// The value is not exactly one RON value.
    #[error("`{value}` is not one RON value: {error}")]
    BadValue {
        /// The value as given.
        value: String,
        /// Why it does not scan.
        error: ScanError,
    },
    /// The scenario's own text does not scan, so no path can be found in it.
    #[error("the scenario itself does not scan at line {line}, column {column}: {error}")]
    Scenario {
        /// The line, from 1.
        line: usize,
        /// The column, from 1.
        column: usize,
        /// Why it does not scan.
        error: ScanError,
    },
    #[error("{error}{}", .suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default())]
    /// The path names no value in the scenario.
    NotFound {
        /// Why.
        error: PathError,
        /// A path that does name one and is spelled nearly the same.
        suggestion: Option<String>,
    },
}

impl OverrideError {
    /// The path part of the assignment, trimmed (the whole assignment if it has no `=`).
    pub fn path_text(&self) -> &str {
        self.assignment
            .split_once('=')
            .map_or(self.assignment.as_str(), |(path, _)| path)
            .trim()
    }

    /// Byte range in `assignment` of the part the error is about: the value for a bad value, the
    /// path otherwise.
    pub fn blame(&self) -> std::ops::Range<usize> {
        let whole = 0..self.assignment.len();
        let Some(eq) = self.assignment.find('=') else {
            return whole;
        };
        let trimmed = |range: std::ops::Range<usize>| {
            let text = &self.assignment[range.clone()];
            let start = range.start + (text.len() - text.trim_start().len());
            start..start + text.trim().len()
        };
        match self.kind {
            OverrideErrorKind::BadValue { .. } => trimmed(eq + 1..self.assignment.len()),
            _ => trimmed(0..eq),
        }
    }
}

/// Applies one `PATH=VALUE` assignment to scenario text and returns the new text.
pub fn apply_override(source: &str, assignment: &str) -> Result<String, OverrideError> {
    let fail = |kind| OverrideError {
        assignment: assignment.to_owned(),
        kind,
    };
    let (path_text, value) = assignment
        .split_once('=')
        .ok_or_else(|| fail(OverrideErrorKind::MissingEquals))?;
    let path = FieldPath::parse(path_text.trim()).map_err(|e| fail(OverrideErrorKind::BadPath(e)))?;
    let value = value.trim();
    span::parse_value(value).map_err(|error| {
        fail(OverrideErrorKind::BadValue {
            value: value.to_owned(),
            error,
        })
    })?;
    let document = span::parse_document(source).map_err(|error| {
        let (line, column) = span::line_col(source, error.offset());
        fail(OverrideErrorKind::Scenario { line, column, error })
    })?;

    let edits = match span::locate(&document.root, &path) {
        Ok(node) => vec![(node.span.start..node.span.end, value.to_owned())],
        // A name one or two edits from an existing field is a typo, not a struct to make up.
        Err(
            ref error @ PathError::MissingField {
                segment,
                ref field,
                ref available,
                ..
            },
        ) if segment + 1 == path.segments.len()
            || did_you_mean(field, available.iter().map(String::as_str)).is_none() =>
        {
            // The fields below the missing one are missing too: build them as nested structs, so
            // `switch.PfcXoff=1` on a file without `switch` inserts `switch: (PfcXoff: 1)`.
            let Some(nested) = nested_value(&path.segments[segment + 1..], value) else {
                return Err(fail(not_found(error.clone())));
            };
            let parent_path = FieldPath {
                segments: path.segments[..segment].to_vec(),
            };
            let parent = span::locate(&document.root, &parent_path).map_err(|error| fail(not_found(error)))?;
            insertion(source, parent.unwrap_newtypes(), field, &nested)
        }
        Err(error) => return Err(fail(not_found(error))),
    };
    let mut text = source.to_owned();
    // Back to front, so earlier offsets stay valid.
    for (range, replacement) in edits.into_iter().rev() {
        text.replace_range(range, &replacement);
    }
    Ok(text)
}

/// Applies assignments in order; a later one sees the text the earlier ones produced.
pub fn apply_overrides(source: &str, assignments: &[String]) -> Result<String, OverrideError> {
    assignments
        .iter()
        .try_fold(source.to_owned(), |text, assignment| apply_override(&text, assignment))
}

/// `value` wrapped in one struct per remaining field segment (`a.b=1` below the insertion point
/// gives `(a: (b: 1))`); `None` if a segment is an index, since a list cannot be made up.
fn nested_value(rest: &[PathSegment], value: &str) -> Option<String> {
    rest.iter()
        .rev()
        .try_fold(value.to_owned(), |inner, segment| match segment {
            PathSegment::Field(name) => Some(format!("({name}: {inner})")),
            PathSegment::Index(_) => None,
        })
}

fn not_found(error: PathError) -> OverrideErrorKind {
    let suggestion = match &error {
        PathError::MissingField { field, available, .. } => did_you_mean(field, available.iter().map(String::as_str)),
        _ => None,
    };
    OverrideErrorKind::NotFound { error, suggestion }
}

/// The candidate closest to `name`, if it differs only in case or by at most two edits.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| {
            let distance = if c.eq_ignore_ascii_case(name) {
                0
            } else {
                edit_distance(c, name)
            };
            (distance, c)
        })
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.to_owned())
}

/// Levenshtein distance in chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// Edits that add `field: value` to `node` (a struct): on its own line before the `)` when the
/// struct is laid out one field per line, otherwise after the last field.
fn insertion(source: &str, node: &Node, field: &str, value: &str) -> Vec<(std::ops::Range<usize>, String)> {
    let NodeKind::Struct {
        fields,
        close,
        trailing_comma,
        ..
    } = &node.kind
    else {
        return Vec::new();
    };
    let entry = format!("{field}: {value}");
    let Some(last) = fields.last() else {
        // `()` or `Name()`: the field goes right after the `(`.
        return vec![(*close..*close, entry)];
    };
    let after_last = last.value.span.end;
    let close_line_start = source[..*close].rfind('\n').map_or(0, |i| i + 1);
    let close_on_own_line = source[close_line_start..*close].trim().is_empty() && close_line_start > after_last;
    let mut edits = Vec::new();
    if close_on_own_line {
        if trailing_comma.is_none() {
            edits.push((after_last..after_last, ",".to_owned()));
        }
        let last_line_start = source[..last.name_span.start].rfind('\n').map_or(0, |i| i + 1);
        let indent: String = source[last_line_start..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        edits.push((close_line_start..close_line_start, format!("{indent}{entry},\n")));
    } else if let Some(comma) = trailing_comma {
        edits.push((comma + 1..comma + 1, format!(" {entry},")));
    } else {
        edits.push((after_last..after_last, format!(", {entry}")));
    }
    edits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::SAMPLE;

    fn set(source: &str, assignment: &str) -> String {
        apply_override(source, assignment).unwrap_or_else(|e| panic!("{e}"))
    }
    fn error(source: &str, assignment: &str) -> String {
        apply_override(source, assignment).unwrap_err().to_string()
    }

    #[test]
    fn replaces_existing_values() {
        let out = set(SAMPLE, "simulation.RunTime=0.01");
        assert!(out.contains("simulation: (RunTime: 0.01, RandomSeed: 18760),"), "{out}");
        let out = set(SAMPLE, "applications[0].NumConnections=4");
        assert!(out.contains("NumConnections: 4))],"), "{out}");
        let out = set(SAMPLE, "topology=Star(hosts: 10)");
        assert!(out.contains("    topology: Star(hosts: 10),\n"), "{out}");
        let out = set(SAMPLE, r#" name = "x" "#);
        assert!(out.contains("    name: \"x\",\n"), "{out}");
        let out = set(SAMPLE, "nic.PortRate=\"100Gbps\"");
        assert!(out.contains(r#"RoceNic((PortRate: "100Gbps", Mss: "4KiB"))"#), "{out}");
        // Everything else is untouched, comments included.
        assert_eq!(out.replace("100Gbps", "400Gbps"), SAMPLE);
    }

    #[test]
    fn inserts_missing_fields() {
        assert_eq!(set("(a: 1, s: ())", "s.x=2"), "(a: 1, s: (x: 2))");
        assert_eq!(set("(nic: RoceNic(()))", "nic.Mtu=4096"), "(nic: RoceNic((Mtu: 4096)))");
        assert_eq!(
            set("(nic: RoceNic((a: 1)))", "nic.Mtu=4096"),
            "(nic: RoceNic((a: 1, Mtu: 4096)))"
        );
        assert_eq!(
            set("(nic: RoceNic((a: 1,)))", "nic.Mtu=4096"),
            "(nic: RoceNic((a: 1, Mtu: 4096,)))"
        );
        assert_eq!(set("(a: 1 /* c */ )", "b=2"), "(a: 1, b: 2 /* c */ )");
        assert_eq!(set("()", "b=[1, 2]"), "(b: [1, 2])");
        assert_eq!(set("(nic: RoceNic())", "nic.Mtu=1"), "(nic: RoceNic(Mtu: 1))");
        assert_eq!(set("(\n    a: 1\n)", "b=2"), "(\n    a: 1,\n    b: 2,\n)");
        let out = set(SAMPLE, "seed=5");
        assert!(
            out.ends_with("ScalaRdma((prScalaRdmaInitiator: 0.5, NumConnections: 1))],\n    seed: 5,\n)\n"),
            "{out}"
        );
        let out = set(SAMPLE, "applications[0].MaxPendingWQEs=8");
        assert!(out.contains("NumConnections: 1, MaxPendingWQEs: 8))]"), "{out}");
    }

    #[test]
    fn creates_missing_structs() {
        // A top-level struct the file leaves out, a nested struct, and one under an empty newtype.
        assert_eq!(set("(a: 1)", "switch.PfcXoff=5"), "(a: 1, switch: (PfcXoff: 5))");
        assert_eq!(
            set("(nic: RoceNic(()))", "nic.EgressBufferManager.BufferSize=0"),
            "(nic: RoceNic((EgressBufferManager: (BufferSize: 0))))"
        );
        assert_eq!(
            set("(s: (Rate: 1))", "s.Pool.Size.Bytes=2"),
            "(s: (Rate: 1, Pool: (Size: (Bytes: 2))))"
        );
        // An existing intermediate struct gains the field instead of a second copy of itself.
        let once = set("(nic: RoceNic(()))", "nic.EgressBufferManager.BufferSize=1");
        assert_eq!(
            set(&once, "nic.EgressBufferManager.Other=2"),
            "(nic: RoceNic((EgressBufferManager: (BufferSize: 1, Other: 2))))"
        );
        // A list cannot be made up: the missing field is named.
        assert!(
            error("(a: 1)", "apps[0].x=1").contains("has no field `apps`"),
            "{}",
            error("(a: 1)", "apps[0].x=1")
        );
        let out = set(SAMPLE, "switch.PfcXoff=\"1KiB\"");
        assert!(out.contains("PfcXoff: \"1KiB\""), "{out}");
    }

    #[test]
    fn applies_in_order() {
        let sets = ["topology=Star(hosts: 10)".to_owned(), "topology.hosts=3".to_owned()];
        assert_eq!(
            apply_overrides("(topology: Ring)", &sets).unwrap(),
            "(topology: Star(hosts: 3))"
        );
    }

    #[test]
    fn reports_what_is_wrong() {
        assert_eq!(
            error(SAMPLE, "simulaton.RunTime=0.01"),
            "--set simulaton.RunTime=0.01: the top-level struct has no field `simulaton` (fields there: name, \
             simulation, topology, nic, switch, applications); did you mean `simulation`?"
        );
        assert_eq!(
            error(SAMPLE, "simulation.RunTme.x=0.01"),
            "--set simulation.RunTme.x=0.01: `simulation` has no field `RunTme` (fields there: RunTime, RandomSeed); \
             did you mean `RunTime`?"
        );
        assert_eq!(
            error(SAMPLE, "applications[2].NumConnections=4"),
            "--set applications[2].NumConnections=4: index 2 is out of range: `applications` has 1 item"
        );
        assert_eq!(
            error(SAMPLE, "name.first=1"),
            "--set name.first=1: `name` is a string, which has no field `first`"
        );
        assert_eq!(
            error(SAMPLE, "simulation.RunTime"),
            "--set simulation.RunTime: expected PATH=VALUE, e.g. `simulation.RunTime=0.01`"
        );
        assert_eq!(
            error(SAMPLE, "simulation.RunTime=0.01, x: 2"),
            "--set simulation.RunTime=0.01, x: 2: `0.01, x: 2` is not one RON value: expected the end of the text \
             after the value, found `,`"
        );
        assert!(error(SAMPLE, "topology=Star(hosts: 10").contains("`(` is never closed"));
        assert!(error(SAMPLE, "simulation..RunTime=1").contains("bad path `simulation..RunTime`"));
        assert!(error("(a: [1,)", "a=1").contains("the scenario itself does not scan at line 1, column 8"));
    }

    #[test]
    fn blame_points_at_the_faulty_part() {
        let err = apply_override(SAMPLE, "simulaton.RunTime = 0.01").unwrap_err();
        assert_eq!(&err.assignment[err.blame()], "simulaton.RunTime");
        let err = apply_override(SAMPLE, "name= (1").unwrap_err();
        assert_eq!(&err.assignment[err.blame()], "(1");
    }

    #[test]
    fn suggestions() {
        assert_eq!(
            did_you_mean("RunTme", ["RunTime", "RandomSeed"]),
            Some("RunTime".to_owned())
        );
        assert_eq!(did_you_mean("runtime", ["RunTime"]), Some("RunTime".to_owned()));
        assert_eq!(did_you_mean("Bogus", ["RunTime"]), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn never_panics_on_prefixes() {
        for end in (0..=SAMPLE.len()).filter(|&i| SAMPLE.is_char_boundary(i)) {
            for assignment in ["nic.Mtu=1", "applications[0].X=2", "name=\"y\"", "switch=("] {
                let _ = apply_override(&SAMPLE[..end], assignment);
            }
        }
    }
}
