//! Dotted paths into scenario text (`applications[0].NumConnections`) and their lookup in the
//! span tree, shared by `--set` overrides and by error messages that must point at a field.

use super::span::{Node, NodeKind, ScanError, Span, parse_document};
use std::fmt;
use thiserror::Error;

/// A dotted path to a value: `simulation.RunTime`, `applications[0].NumConnections`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct FieldPath {
    /// The segments, outermost first.
    pub segments: Vec<PathSegment>,
}

/// One step of a `FieldPath`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum PathSegment {
    /// `.name`: a struct's field.
    Field(String),
    /// `[n]`: a list's item, from 0.
    Index(usize),
}

impl FieldPath {
    /// Parses `a.b[2].c`: fields are identifiers, indexes are decimal.
    pub fn parse(text: &str) -> Result<FieldPath, PathError> {
        let bad = |offset: usize, reason: &'static str| PathError::Syntax {
            path: text.to_owned(),
            offset,
            reason,
        };
        let bytes = text.as_bytes();
        let mut segments = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'[' {
                let digits = bytes[i + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
                if digits == 0 || bytes.get(i + 1 + digits) != Some(&b']') {
                    return Err(bad(i, "expected `[` INDEX `]` with a decimal index"));
                }
                let index = text[i + 1..i + 1 + digits]
                    .parse()
                    .map_err(|_| bad(i + 1, "index too large"))?;
                segments.push(PathSegment::Index(index));
                i += digits + 2;
                continue;
            }
            if !segments.is_empty() {
                if bytes[i] != b'.' {
                    return Err(bad(i, "expected `.` or `[` after a segment"));
                }
                i += 1;
            }
            let len = text[i..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(text.len() - i);
            if len == 0 || text[i..].starts_with(|c: char| c.is_ascii_digit()) {
                return Err(bad(i, "expected a field name"));
            }
            segments.push(PathSegment::Field(text[i..i + len].to_owned()));
            i += len;
        }
        if segments.is_empty() {
            return Err(bad(0, "the path is empty"));
        }
        Ok(FieldPath { segments })
    }

    /// The path made of the first `n` segments, as text (`""` for the top level).
    pub fn prefix(&self, n: usize) -> String {
        FieldPath {
            segments: self.segments[..n.min(self.segments.len())].to_vec(),
        }
        .to_string()
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.segments.iter().enumerate() {
            match segment {
                PathSegment::Field(name) if i == 0 => write!(f, "{name}")?,
                PathSegment::Field(name) => write!(f, ".{name}")?,
                PathSegment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// Why a path names no value. `segment` is the index of the segment that failed.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
pub enum PathError {
    /// The path is not written as a path.
    #[error("bad path `{path}` at byte {offset}: {reason}")]
    Syntax {
        /// The path as given.
        path: String,
        /// Where in it the problem is.
        offset: usize,
        /// What is wrong there.
        reason: &'static str,
    },
    /// The scenario's text does not scan.
    #[error("the scenario does not scan: {0}")]
    Scan(ScanError),
    /// A struct has no field of that name.
    #[error("{} has no field `{field}` (fields there: {})", place(.parent), list(.available))]
    MissingField {
        /// The struct's path.
        parent: String,
        /// The field asked for.
        field: String,
        /// The fields it has.
        available: Vec<String>,
        /// The failing segment's index.
        segment: usize,
    },
    /// A list is shorter than the index.
    #[error("index {index} is out of range: `{list}` has {len} item{}", plural(.len))]
    IndexOutOfRange {
        /// The list's path.
        list: String,
        /// The index asked for.
        index: usize,
        /// The list's length.
        len: usize,
        /// The failing segment's index.
        segment: usize,
    },
    /// A field asked of a value that is not a struct.
    #[error("{} is {found}, which has no field `{field}`", place(.path))]
    NotAStruct {
        /// The value's path.
        path: String,
        /// What the value is ("a list", "a number"...).
        found: &'static str,
        /// The field asked for.
        field: String,
        /// The failing segment's index.
        segment: usize,
    },
    /// An index asked of a value that is not a list.
    #[error("{} is {found}, which cannot be indexed", place(.path))]
    NotAList {
        /// The value's path.
        path: String,
        /// What the value is.
        found: &'static str,
        /// The failing segment's index.
        segment: usize,
    },
}

fn place(path: &str) -> String {
    if path.is_empty() {
        "the top-level struct".to_owned()
    } else {
        format!("`{path}`")
    }
}

fn plural(n: &usize) -> &'static str {
    if *n == 1 { "" } else { "s" }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// Finds the value `path` names under `root` (the top-level struct).
pub fn locate<'n>(root: &'n Node, path: &FieldPath) -> Result<&'n Node, PathError> {
    let mut node = root;
    for (i, segment) in path.segments.iter().enumerate() {
        node = match segment {
            PathSegment::Field(field) => match &node.unwrap_newtypes().kind {
                NodeKind::Struct { fields, .. } => match fields.iter().find(|f| &f.name == field) {
                    Some(f) => &f.value,
                    None => {
                        let available = fields.iter().map(|f| f.name.clone()).collect();
                        let (parent, field) = (path.prefix(i), field.clone());
                        return Err(PathError::MissingField {
                            parent,
                            field,
                            available,
                            segment: i,
                        });
                    }
                },
                _ => {
                    let found = node.unwrap_newtypes().describe();
                    return Err(PathError::NotAStruct {
                        path: path.prefix(i),
                        found,
                        field: field.clone(),
                        segment: i,
                    });
                }
            },
            PathSegment::Index(index) => {
                let items = indexable(node).ok_or_else(|| PathError::NotAList {
                    path: path.prefix(i),
                    found: node.unwrap_newtypes().describe(),
                    segment: i,
                })?;
                items.get(*index).ok_or_else(|| PathError::IndexOutOfRange {
                    list: path.prefix(i),
                    index: *index,
                    len: items.len(),
                    segment: i,
                })?
            }
        };
    }
    Ok(node)
}

/// The items an index selects from: a list, or a tuple (looking through newtypes around a list).
fn indexable(mut node: &Node) -> Option<&[Node]> {
    loop {
        match &node.kind {
            NodeKind::List(items) => return Some(items),
            NodeKind::Tuple { items, .. }
                if items.len() == 1 && matches!(items[0].kind, NodeKind::List(_) | NodeKind::Tuple { .. }) =>
            {
                node = &items[0];
            }
            NodeKind::Tuple { items, .. } => return Some(items),
            _ => return None,
        }
    }
}

/// The byte range of the value at `path` in `source`.
pub fn value_span(source: &str, path: &FieldPath) -> Result<Span, PathError> {
    let document = parse_document(source).map_err(PathError::Scan)?;
    locate(&document.root, path).map(|node| node.span)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::SAMPLE;

    fn at<'s>(source: &'s str, path: &str) -> &'s str {
        let span = value_span(source, &FieldPath::parse(path).unwrap()).unwrap();
        span.text(source)
    }

    #[test]
    fn finds_values_through_newtype_variants_and_lists() {
        assert_eq!(at(SAMPLE, "name"), r#""default""#);
        assert_eq!(at(SAMPLE, "simulation.RunTime"), "0.5");
        assert_eq!(
            at(SAMPLE, "topology"),
            "LeafSpine(leaves: 4, spines: 4, hosts_per_leaf: 4)"
        );
        assert_eq!(at(SAMPLE, "topology.hosts_per_leaf"), "4");
        assert_eq!(at(SAMPLE, "nic.PortRate"), r#""400Gbps""#);
        assert_eq!(at(SAMPLE, "applications[0].NumConnections"), "1");
        assert_eq!(at("(topology: Star(hosts: 10))", "topology.hosts"), "10");
        assert_eq!(at("(a: A(B(C((x: 7)))))", "a.x"), "7");
        assert_eq!(at("(a: Some([1, 2, 3]))", "a[2]"), "3");
        assert_eq!(at("(t: (1, \"two\"))", "t[1]"), "\"two\"");
        assert_eq!(parse_document(SAMPLE).unwrap().attributes.len(), 1);
    }

    #[test]
    fn path_errors_say_what_is_there() {
        let err = |p: &str| {
            value_span(SAMPLE, &FieldPath::parse(p).unwrap())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err("simulaton.RunTime"),
            "the top-level struct has no field `simulaton` (fields there: name, simulation, topology, nic, switch, applications)"
        );
        assert_eq!(
            err("applications[3]"),
            "index 3 is out of range: `applications` has 1 item"
        );
        assert_eq!(err("name.x"), "`name` is a string, which has no field `x`");
        assert_eq!(
            err("simulation[0]"),
            "`simulation` is a struct, which cannot be indexed"
        );
    }

    #[test]
    fn path_grammar() {
        let path = FieldPath::parse("a.b[2][0].c_1").unwrap();
        assert_eq!(path.to_string(), "a.b[2][0].c_1");
        assert_eq!(path.segments.len(), 5);
        for bad in ["", "a..b", "a.", ".a", "a[x]", "a[1", "a b", "a.1"] {
            assert!(FieldPath::parse(bad).is_err(), "{bad:?} should not parse");
        }
    }
}
