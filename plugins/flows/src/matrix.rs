//! htsim's connection-matrix format, as its `-tm` option reads it:
//!
//! ```text
//! Nodes 16
//! Connections 8
//! 0->8 id 1 start 0 size 0
//! ```
//!
//! `Nodes N` and `Connections M` first (in either order), then one line per flow:
//! `SRC->DST id ID start T size S`, `T` in microseconds (a decimal), `S` in bytes, `0` for a
//! flow that never ends. Blank lines and lines starting with `#` are skipped. htsim's triggers
//! (`trigger`, `send_done_trigger`, `recv_done_trigger`) and priorities are not supported and are
//! refused by name, as is anything else this parser does not know.

use crate::config::Flow;
use engine::SimTime;
use std::collections::BTreeSet;
use thiserror::Error;

/// Why a matrix cannot be read; `line` counts from 1.
#[derive(Debug, Error, PartialEq)]
#[error("{}{message}", line.map_or(String::new(), |l| format!("line {l}: ")))]
pub struct MatrixError {
    /// The line at fault, if the problem is on one.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

fn at(line: usize, message: impl Into<String>) -> MatrixError {
    MatrixError {
        line: Some(line),
        message: message.into(),
    }
}

/// The matrix's node count and flows, in file order.
#[derive(Debug, PartialEq)]
pub struct Matrix {
    /// The `Nodes` the matrix declares.
    pub nodes: u32,
    /// Its flows, in file order.
    pub flows: Vec<Flow>,
}

/// Parses a matrix's text.
pub fn parse(text: &str) -> Result<Matrix, MatrixError> {
    let (mut nodes, mut connections) = (None, None);
    let mut flows = Vec::new();
    let mut ids = BTreeSet::new();
    for (k, raw) in text.lines().enumerate() {
        let line = k + 1;
        let words: Vec<&str> = raw.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            [first, ..] if first.starts_with('#') => {}
            ["Nodes", n] => nodes = Some(number::<u32>(line, "Nodes", n)?),
            ["Connections", n] => connections = Some(number::<usize>(line, "Connections", n)?),
            ["Nodes" | "Connections", ..] => {
                return Err(at(line, format!("expected `{} COUNT`, got `{}`", words[0], raw.trim())));
            }
            [pair, rest @ ..] if pair.contains("->") => {
                let flow = flow_line(line, pair, rest)?;
                if !ids.insert(flow.id) {
                    return Err(at(line, format!("flow id {} is used twice", flow.id)));
                }
                flows.push(flow);
            }
            _ => {
                return Err(at(
                    line,
                    format!(
                        "expected `Nodes N`, `Connections M` or `SRC->DST id ID start T size S`, got `{}`",
                        raw.trim()
                    ),
                ));
            }
        }
    }
    let missing = |what: &str| MatrixError {
        line: None,
        message: format!("the matrix has no `{what}` line"),
    };
    let nodes = nodes.ok_or_else(|| missing("Nodes N"))?;
    let connections = connections.ok_or_else(|| missing("Connections M"))?;
    if connections != flows.len() {
        return Err(MatrixError {
            line: None,
            message: format!("`Connections {connections}` but the matrix lists {} flows", flows.len()),
        });
    }
    for (k, f) in flows.iter().enumerate() {
        if f.src >= nodes || f.dst >= nodes {
            return Err(MatrixError {
                line: None,
                message: format!(
                    "flow {} ({}->{}, flow line {}) names a node outside `Nodes {nodes}` (0 to {})",
                    f.id,
                    f.src,
                    f.dst,
                    k + 1,
                    nodes.saturating_sub(1)
                ),
            });
        }
    }
    Ok(Matrix { nodes, flows })
}

fn number<T: std::str::FromStr>(line: usize, what: &str, text: &str) -> Result<T, MatrixError> {
    text.parse().map_err(|_| {
        at(
            line,
            format!("{what}: `{text}` is not a whole number of the right size"),
        )
    })
}

fn flow_line(line: usize, pair: &str, rest: &[&str]) -> Result<Flow, MatrixError> {
    let (a, b) = pair.split_once("->").unwrap_or((pair, ""));
    let src = number::<u32>(line, "the source node", a)?;
    let dst = number::<u32>(line, "the destination node", b)?;
    if src == dst {
        return Err(at(line, format!("flow {src}->{dst} goes from a node to itself")));
    }
    let (mut id, mut start, mut size) = (None, None, None);
    let mut words = rest.iter();
    while let Some(&key) = words.next() {
        let Some(&value) = words.next() else {
            return Err(at(line, format!("`{key}` has no value")));
        };
        match key {
            "id" => id = Some(number::<u64>(line, "id", value)?),
            "start" => {
                let us: f64 = value
                    .parse()
                    .map_err(|_| at(line, format!("start: `{value}` is not a number of microseconds")))?;
                let t = SimTime::from_secs_f64(us / 1e6)
                    .ok_or_else(|| at(line, format!("start: {value} us is negative or too large")))?;
                start = Some(t);
            }
            "size" => size = Some(number::<u64>(line, "size", value)?),
            "trigger" | "send_done_trigger" | "recv_done_trigger" | "prio" | "priority" => {
                return Err(at(line, format!("htsim's `{key}` is not supported")));
            }
            other => return Err(at(line, format!("unknown key `{other}` (expected id, start, size)"))),
        }
    }
    let need = |what: &str| at(line, format!("the flow has no `{what}`"));
    Ok(Flow {
        id: id.ok_or_else(|| need("id"))?,
        src,
        dst,
        bytes: size.ok_or_else(|| need("size"))?,
        start: start.ok_or_else(|| need("start"))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn htsim_permutation_parses() {
        let m = parse("Nodes 16\nConnections 2\n0->8 id 1 start 0 size 0\n1->9 id 2 start 2.5 size 250000\n").unwrap();
        assert_eq!(m.nodes, 16);
        assert_eq!(
            m.flows,
            vec![
                Flow {
                    id: 1,
                    src: 0,
                    dst: 8,
                    bytes: 0,
                    start: SimTime::ZERO
                },
                // 2.5 us = 2,500,000 ps.
                Flow {
                    id: 2,
                    src: 1,
                    dst: 9,
                    bytes: 250_000,
                    start: SimTime(2_500_000)
                },
            ]
        );
    }

    #[test]
    fn bad_lines_are_named() {
        let err = |text: &str| parse(text).unwrap_err().to_string();
        assert_eq!(
            err("Nodes 4\nConnections 1\n0->0 id 1 start 0 size 1\n"),
            "line 3: flow 0->0 goes from a node to itself"
        );
        assert_eq!(
            err("Nodes 4\nConnections 1\n0->x id 1 start 0 size 1\n"),
            "line 3: the destination node: `x` is not a whole number of the right size"
        );
        assert_eq!(
            err("Nodes 4\nConnections 1\n0->1 id 1 start 0\n"),
            "line 3: the flow has no `size`"
        );
        assert_eq!(
            err("Nodes 4\nConnections 1\n0->1 id 1 start -1 size 5\n"),
            "line 3: start: -1 us is negative or too large"
        );
        assert!(
            err("Nodes 4\nConnections 1\n0->1 id 1 start 0 size 5 trigger 2\n").contains("`trigger` is not supported")
        );
        assert!(err("Nodes 4\nConnections 1\nhello\n").starts_with("line 3: expected `Nodes N`"));
        assert_eq!(
            err("Nodes 4\nConnections 2\n0->1 id 1 start 0 size 5\n"),
            "`Connections 2` but the matrix lists 1 flows"
        );
        assert_eq!(
            err("Nodes 4\nConnections 2\n0->1 id 1 start 0 size 5\n1->2 id 1 start 0 size 5\n"),
            "line 4: flow id 1 is used twice"
        );
        assert!(err("Nodes 2\nConnections 1\n0->3 id 1 start 0 size 5\n").contains("outside `Nodes 2`"));
        assert_eq!(err("Connections 0\n"), "the matrix has no `Nodes N` line");
    }
}
