//! The fabric as a Graphviz `graph` (what `rdmasim topology` prints): one line per node, in id
//! order, and one per link, in link id order, so the text is the same for the same config.
//! Render it with `dot -Tsvg` (or `neato`/`fdp` for larger fabrics).

use super::{NodeKind, Topology};
use engine::units::Duration;
use std::fmt::Write;

/// The Graphviz text of `topo`. Nodes are `n<id>`, labelled with name and id (switches boxes,
/// hosts ellipses); links are labelled with rate and delay and carry the port numbers at each end.
pub fn to_dot(topo: &Topology) -> String {
    let mut out = String::with_capacity(64 * (topo.nodes.len() + topo.links.len()) + 64);
    out.push_str("graph fabric {\n");
    // writeln! into a String cannot fail.
    for (id, n) in topo.nodes.iter().enumerate() {
        let shape = match n.kind {
            NodeKind::Host => "ellipse",
            NodeKind::Switch => "box",
        };
        let _ = writeln!(out, "  n{id} [label=\"{}\\n#{id}\", shape={shape}];", escape(&n.name));
    }
    for l in &topo.links {
        let _ = writeln!(
            out,
            "  n{} -- n{} [label=\"{} {}\", taillabel=\"{}\", headlabel=\"{}\"];",
            l.a.0,
            l.b.0,
            l.rate,
            short_duration(l.delay),
            l.a.1,
            l.b.1
        );
    }
    out.push_str("}\n");
    out
}

/// Names come from the scenario, so quotes and backslashes must not end the label early.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// `1us`, `500ns`, `2ms`, `1.5us` (via ps): the largest unit that keeps the number whole, so a
/// label stays short where `Duration`'s own display would print `0.000001s`.
fn short_duration(d: Duration) -> String {
    let ps = d.time().ps();
    for (unit, scale) in [
        ("s", 1_000_000_000_000u64),
        ("ms", 1_000_000_000),
        ("us", 1_000_000),
        ("ns", 1_000),
    ] {
        if ps >= scale && ps.is_multiple_of(scale) {
            return format!("{}{unit}", ps / scale);
        }
    }
    format!("{ps}ps")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{ExplicitTopology, LinkSpec, NodeSpec, TopologyConfig};
    use engine::units::Rate;

    #[test]
    fn lists_every_node_and_link() {
        let t = TopologyConfig::default().build().unwrap();
        let dot = to_dot(&t);
        assert!(dot.starts_with("graph fabric {\n") && dot.ends_with("}\n"), "{dot}");
        assert_eq!(
            dot.lines().count(),
            2 + 24 + 32,
            "24 nodes, 16 host links + 16 leaf-spine links"
        );
        assert!(dot.contains("  n0 [label=\"h0\\n#0\", shape=ellipse];\n"));
        assert!(dot.contains("  n16 [label=\"leaf0\\n#16\", shape=box];\n"));
        assert!(dot.contains("  n23 [label=\"spine3\\n#23\", shape=box];\n"));
        // Host 5 is port 1 of leaf1 (node 17); leaf3 (19) reaches spine3 (23) on its port 7.
        assert!(dot.contains("  n5 -- n17 [label=\"400Gbps 1us\", taillabel=\"0\", headlabel=\"1\"];\n"));
        assert!(dot.contains("  n19 -- n23 [label=\"400Gbps 1us\", taillabel=\"7\", headlabel=\"3\"];\n"));
        for (id, n) in t.nodes.iter().enumerate() {
            assert_eq!(
                dot.matches(&format!("  n{id} [label=\"{}\\n#{id}\"", n.name)).count(),
                1
            );
        }
        for l in &t.links {
            assert_eq!(dot.matches(&format!("  n{} -- n{} [", l.a.0, l.b.0)).count(), 1);
        }
        assert_eq!(
            dot,
            to_dot(&TopologyConfig::default().build().unwrap()),
            "deterministic"
        );
    }

    #[test]
    fn escapes_names_and_shortens_delays() {
        let t = TopologyConfig::Explicit(ExplicitTopology {
            nodes: vec![NodeSpec::Host("a\"b".into()), NodeSpec::Host("c\\d".into())],
            links: vec![LinkSpec {
                a: "a\"b".into(),
                b: "c\\d".into(),
                rate: None,
                delay: None,
            }],
            link_rate: Rate::gbps(25),
            link_delay: Duration::from_ns(1500),
        })
        .build()
        .unwrap();
        let dot = to_dot(&t);
        assert!(dot.contains(r#"n0 [label="a\"b\n#0""#), "{dot}");
        assert!(dot.contains(r#"n1 [label="c\\d\n#1""#), "{dot}");
        assert!(dot.contains(r#"label="25Gbps 1500ns""#), "{dot}");
        assert_eq!(short_duration(Duration::from_ps(0)), "0ps");
        assert_eq!(short_duration(Duration::from_ps(20)), "20ps");
        assert_eq!(short_duration(Duration::from_us(2000)), "2ms");
        assert_eq!(short_duration(Duration::from_us(1_000_000)), "1s");
    }
}
