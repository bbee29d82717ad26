//! Every invalid config is refused, and the error names the field it is about.

use super::super::TopologyError;
use super::super::config::{LinkOverride, LinkSpec, TopologyConfig};
use super::tests::{explicit, fat_tree, host, leaf_spine, link, star, switch};
use engine::units::Rate;

/// Builds `config`, expects an error, and checks its field path and message.
fn refused(config: TopologyConfig, field: &str, words: &str) -> TopologyError {
    let err = config.build().unwrap_err();
    assert_eq!(err.field(), field, "{err}");
    let msg = err.to_string();
    assert!(msg.starts_with(&format!("{field}: ")), "{msg}");
    assert!(msg.contains(words), "{msg} lacks {words:?}");
    err
}

#[test]
fn generated_shapes_refuse_bad_sizes() {
    refused(star(1), "topology.hosts", "at least 2");
    refused(star(0), "topology.hosts", "at least 2");
    refused(star(100_000), "topology.hosts", "100001 nodes");
    refused(star(70_000), "topology.hosts", "more than 65536 ports");
    refused(leaf_spine(0, 4, 4), "topology.leaves", "at least 1");
    refused(leaf_spine(4, 0, 4), "topology.spines", "at least 1");
    refused(leaf_spine(4, 4, 0), "topology.hosts_per_leaf", "at least 1");
    refused(leaf_spine(1, 4, 1), "topology.hosts_per_leaf", "has 1");
    refused(leaf_spine(1000, 1000, 1000), "topology", "1002000 nodes");
    refused(
        leaf_spine(1, 70_000, 2),
        "topology.spines",
        "\"leaf0\" would have more than 65536 ports",
    );
    refused(fat_tree(0), "topology.k", "at least 2");
    refused(fat_tree(5), "topology.k", "even k");
    let err = refused(fat_tree(1_000_000), "topology.k", "at most 100000");
    // 5k^2/4 + k^3/4 at k = 10^6, computed without overflow.
    assert!(
        matches!(
            err,
            TopologyError::TooManyNodes {
                nodes: 250_001_250_000_000_000,
                ..
            }
        ),
        "{err:?}"
    );
    refused(fat_tree(u32::MAX - 1), "topology.k", "nodes");
    assert!(fat_tree(72).build().is_ok(), "99,792 nodes is within the bound");
    refused(fat_tree(74), "topology.k", "108151 nodes");
}

#[test]
fn zero_rates_are_refused_with_their_field() {
    let TopologyConfig::Star(mut s) = star(2) else {
        unreachable!()
    };
    s.link_rate = Rate(0);
    refused(TopologyConfig::Star(s), "topology.link_rate", "at least 1 bps");
    let TopologyConfig::LeafSpine(mut ls) = leaf_spine(2, 2, 2) else {
        unreachable!()
    };
    ls.spine_link = Some(LinkOverride {
        rate: Some(Rate(0)),
        delay: None,
    });
    refused(
        TopologyConfig::LeafSpine(ls),
        "topology.spine_link.rate",
        "at least 1 bps",
    );
    let TopologyConfig::FatTree(mut ft) = fat_tree(2) else {
        unreachable!()
    };
    ft.aggregation_link = Some(LinkOverride {
        rate: Some(Rate(0)),
        delay: None,
    });
    refused(
        TopologyConfig::FatTree(ft),
        "topology.aggregation_link.rate",
        "at least 1 bps",
    );
    let mut l = link("a", "b");
    l.rate = Some(Rate(0));
    refused(
        explicit(vec![host("a"), host("b")], vec![l]),
        "topology.links[0].rate",
        "at least 1 bps",
    );
}

#[test]
fn explicit_refuses_bad_nodes() {
    let two = || vec![link("h0", "s0"), link("h1", "s0")];
    refused(
        explicit(vec![host("h0"), switch("s0")], two()),
        "topology.nodes",
        "has 1",
    );
    refused(
        explicit(vec![host("h0"), host(""), switch("s0")], two()),
        "topology.nodes[1]",
        "cannot be empty",
    );
    let e = refused(
        explicit(vec![host("h0"), host("h1"), switch("s0"), switch("h1")], two()),
        "topology.nodes[3]",
        "\"h1\" is already used by topology.nodes[1]",
    );
    assert!(matches!(e, TopologyError::DuplicateName { first: 1, .. }));
    refused(
        explicit(vec![host("h0"), host("h1"), host("h2"), switch("s0")], two()),
        "topology.nodes[2]",
        "host \"h2\" has no link",
    );
}

#[test]
fn explicit_refuses_bad_links() {
    let nodes = || vec![host("h0"), host("h1"), switch("s0"), switch("s1")];
    let with = |extra: LinkSpec| {
        explicit(
            nodes(),
            vec![link("h0", "s0"), link("h1", "s1"), link("s0", "s1"), extra],
        )
    };
    refused(with(link("s0", "h9")), "topology.links[3].b", "unknown node \"h9\"");
    refused(with(link("x", "s0")), "topology.links[3].a", "unknown node \"x\"");
    refused(with(link("s1", "s1")), "topology.links[3]", "from \"s1\" to itself");
    let e = refused(
        with(link("s1", "s0")),
        "topology.links[3]",
        "second link between \"s1\" and \"s0\"",
    );
    assert!(matches!(e, TopologyError::DuplicateLink { first: 2, .. }));
    let e = refused(
        with(link("s1", "h0")),
        "topology.links[3]",
        "host \"h0\" already has a link",
    );
    assert!(matches!(e, TopologyError::HostWithSecondLink { first: 0, .. }));
    // Two islands: h0-s0 and h1-s1.
    refused(
        explicit(nodes(), vec![link("h0", "s0"), link("h1", "s1")]),
        "topology.links",
        "no path from \"h0\" to \"h1\"",
    );
    // A switch with no links at all is unreachable too.
    refused(
        explicit(
            vec![host("h0"), host("h1"), switch("s0"), switch("lonely")],
            vec![link("h0", "s0"), link("h1", "s0")],
        ),
        "topology.links",
        "to \"lonely\"",
    );
}

#[test]
fn explicit_refuses_too_many_nodes() {
    let nodes = (0..=TopologyConfig::MAX_NODES)
        .map(|i| switch(&format!("s{i}")))
        .collect();
    refused(explicit(nodes, vec![]), "topology.nodes", "100001 nodes");
}
