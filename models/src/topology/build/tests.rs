//! Shapes built from each config match their formulas, and every invalid config is refused with
//! the field it is about.

use super::super::config::*;
use super::super::{NodeKind, Topology};
use engine::units::{Duration, Rate};

pub(super) fn star(hosts: u32) -> TopologyConfig {
    TopologyConfig::Star(StarTopology {
        hosts,
        link_rate: TopologyConfig::DEFAULT_LINK_RATE,
        link_delay: TopologyConfig::DEFAULT_LINK_DELAY,
    })
}

pub(super) fn leaf_spine(leaves: u32, spines: u32, hosts_per_leaf: u32) -> TopologyConfig {
    TopologyConfig::LeafSpine(LeafSpineTopology {
        leaves,
        spines,
        hosts_per_leaf,
        link_rate: TopologyConfig::DEFAULT_LINK_RATE,
        link_delay: TopologyConfig::DEFAULT_LINK_DELAY,
        host_link: None,
        spine_link: None,
    })
}

pub(super) fn fat_tree(k: u32) -> TopologyConfig {
    TopologyConfig::FatTree(FatTreeTopology {
        k,
        link_rate: TopologyConfig::DEFAULT_LINK_RATE,
        link_delay: TopologyConfig::DEFAULT_LINK_DELAY,
        host_link: None,
        aggregation_link: None,
        core_link: None,
    })
}

pub(super) fn host(n: &str) -> NodeSpec {
    NodeSpec::Host(n.into())
}
pub(super) fn switch(n: &str) -> NodeSpec {
    NodeSpec::Switch(n.into())
}
pub(super) fn link(a: &str, b: &str) -> LinkSpec {
    LinkSpec {
        a: a.into(),
        b: b.into(),
        rate: None,
        delay: None,
    }
}
pub(super) fn explicit(nodes: Vec<NodeSpec>, links: Vec<LinkSpec>) -> TopologyConfig {
    TopologyConfig::Explicit(ExplicitTopology {
        nodes,
        links,
        link_rate: TopologyConfig::DEFAULT_LINK_RATE,
        link_delay: TopologyConfig::DEFAULT_LINK_DELAY,
    })
}

/// Structural invariants every built topology keeps: both ends of every link point back at it,
/// hosts come first with one port each, and the petgraph view is the same fabric.
fn check_invariants(t: &Topology) {
    for (id, l) in t.links.iter().enumerate() {
        for (end, other) in [(l.a, l.b), (l.b, l.a)] {
            let p = t.port(end.0, end.1);
            assert_eq!((p.link, p.peer_node, p.peer_port), (id as u32, other.0, other.1));
        }
    }
    for (id, n) in t.nodes.iter().enumerate() {
        let is_host = id < t.num_hosts;
        assert_eq!(n.kind == NodeKind::Host, is_host, "node {id} {}", n.name);
        if is_host {
            assert_eq!(n.ports.len(), 1, "host {}", n.name);
        }
        assert_eq!(t.graph[petgraph::graph::NodeIndex::new(id)], id as u32);
    }
    assert_eq!(
        (t.graph.node_count(), t.graph.edge_count()),
        (t.nodes.len(), t.links.len())
    );
    for e in t.graph.edge_indices() {
        let (x, y) = t.graph.edge_endpoints(e).unwrap();
        let l = &t.links[t.graph[e] as usize];
        assert_eq!((x.index() as u32, y.index() as u32), (l.a.0, l.b.0));
        assert_eq!(t.graph[e] as usize, e.index());
    }
}

fn names(t: &Topology, range: std::ops::Range<usize>) -> Vec<&str> {
    t.nodes[range].iter().map(|n| n.name.as_str()).collect()
}

fn peer_name(t: &Topology, node: u32, port: u16) -> &str {
    &t.nodes[t.port(node, port).peer_node as usize].name
}

#[test]
fn star_counts_and_wiring() {
    let t = star(5).build().unwrap();
    check_invariants(&t);
    assert_eq!((t.num_hosts, t.num_switches(), t.links.len()), (5, 1, 5));
    assert_eq!(names(&t, 0..6), ["h0", "h1", "h2", "h3", "h4", "s0"]);
    for h in 0..5u16 {
        assert_eq!(peer_name(&t, 5, h), format!("h{h}"));
        assert_eq!(peer_name(&t, h as u32, 0), "s0");
    }
}

#[test]
fn leaf_spine_counts_and_wiring() {
    for (l, s, hpl) in [(4, 4, 4), (2, 3, 5), (1, 1, 2), (3, 1, 1)] {
        let t = leaf_spine(l, s, hpl).build().unwrap();
        check_invariants(&t);
        let hosts = (l * hpl) as usize;
        assert_eq!((t.num_hosts, t.num_switches()), (hosts, (l + s) as usize));
        assert_eq!(t.links.len(), hosts + (l * s) as usize);
        for h in 0..hosts as u32 {
            assert_eq!(peer_name(&t, h, 0), format!("leaf{}", h / hpl));
        }
        for leaf in 0..l {
            let id = t.find(&format!("leaf{leaf}")).unwrap();
            // Ports: its hosts first, then the spines in order.
            let peers: Vec<&str> = (0..(hpl + s) as u16).map(|p| peer_name(&t, id, p)).collect();
            let want: Vec<String> = (0..hpl)
                .map(|i| format!("h{}", leaf * hpl + i))
                .chain((0..s).map(|sp| format!("spine{sp}")))
                .collect();
            assert_eq!(peers, want);
        }
    }
    let t = leaf_spine(4, 4, 4).build().unwrap();
    assert_eq!(
        names(&t, 16..24),
        [
            "leaf0", "leaf1", "leaf2", "leaf3", "spine0", "spine1", "spine2", "spine3"
        ]
    );
}

#[test]
fn fat_tree_counts_from_the_formulas() {
    for k in [2u32, 4, 6, 8, 16] {
        let t = fat_tree(k).build().unwrap();
        check_invariants(&t);
        let k = k as usize;
        assert_eq!(t.num_hosts, k * k * k / 4, "k={k}");
        assert_eq!(t.num_switches(), 5 * k * k / 4, "k={k}");
        assert_eq!(t.links.len(), 3 * k * k * k / 4, "k={k}");
        // Every switch has k ports, all used.
        assert!(t.nodes[t.num_hosts..].iter().all(|n| n.ports.len() == k), "k={k}");
    }
}

#[test]
fn fat_tree_wiring_k4() {
    let t = fat_tree(4).build().unwrap();
    // 16 hosts, 8 edge, 8 agg, 4 core; h = 2.
    assert_eq!(names(&t, 16..18), ["edge0", "edge1"]);
    assert_eq!(names(&t, 24..26), ["agg0", "agg1"]);
    assert_eq!(names(&t, 32..36), ["core0", "core1", "core2", "core3"]);
    // Host 5 is on edge 2 (pod 1).
    assert_eq!(peer_name(&t, 5, 0), "edge2");
    // Edge 2 (pod 1): hosts 4, 5 then aggs 2, 3 of pod 1.
    let e2 = t.find("edge2").unwrap();
    let peers: Vec<&str> = (0..4).map(|p| peer_name(&t, e2, p)).collect();
    assert_eq!(peers, ["h4", "h5", "agg2", "agg3"]);
    // Aggregation j of every pod links to cores j*2, j*2+1: agg3 is j = 1 of pod 1.
    let a3 = t.find("agg3").unwrap();
    let peers: Vec<&str> = (0..4).map(|p| peer_name(&t, a3, p)).collect();
    assert_eq!(peers, ["edge2", "edge3", "core2", "core3"]);
    // Each core has one port per pod, in pod order.
    let c0 = t.find("core0").unwrap();
    let peers: Vec<&str> = (0..4).map(|p| peer_name(&t, c0, p)).collect();
    assert_eq!(peers, ["agg0", "agg2", "agg4", "agg6"]);
}

#[test]
fn tier_overrides_set_link_rates_and_delays() {
    let TopologyConfig::FatTree(mut ft) = fat_tree(4) else {
        unreachable!()
    };
    ft.link_rate = Rate::gbps(100);
    ft.host_link = Some(LinkOverride {
        rate: Some(Rate::gbps(25)),
        delay: None,
    });
    ft.core_link = Some(LinkOverride {
        rate: None,
        delay: Some(Duration::from_us(3)),
    });
    let t = TopologyConfig::FatTree(ft).build().unwrap();
    let tiers: Vec<(Rate, Duration)> = [0, 16, 32]
        .iter()
        .map(|&i| (t.links[i].rate, t.links[i].delay))
        .collect();
    assert_eq!(
        tiers,
        [
            (Rate::gbps(25), Duration::from_us(1)),
            (Rate::gbps(100), Duration::from_us(1)),
            (Rate::gbps(100), Duration::from_us(3)),
        ]
    );
    let TopologyConfig::LeafSpine(mut ls) = leaf_spine(2, 2, 2) else {
        unreachable!()
    };
    ls.spine_link = Some(LinkOverride {
        rate: Some(Rate::gbps(800)),
        delay: Some(Duration::from_ns(300)),
    });
    let t = TopologyConfig::LeafSpine(ls).build().unwrap();
    assert_eq!((t.links[3].rate, t.links[4].rate), (Rate::gbps(400), Rate::gbps(800)));
    assert_eq!(t.links[4].delay, Duration::from_ns(300));
}

#[test]
fn explicit_numbers_hosts_first_in_listed_order() {
    let mut fast = link("s1", "h1");
    fast.rate = Some(Rate::gbps(100));
    fast.delay = Some(Duration::from_us(2));
    let t = explicit(
        vec![switch("s0"), host("h0"), switch("s1"), host("h1"), host("h2")],
        vec![link("h0", "s0"), link("s0", "s1"), fast, link("h2", "s1")],
    )
    .build()
    .unwrap();
    check_invariants(&t);
    assert_eq!(names(&t, 0..5), ["h0", "h1", "h2", "s0", "s1"]);
    assert_eq!(t.num_hosts, 3);
    assert_eq!(t.links[2].a, (4, 1)); // s1's second port
    assert_eq!(t.links[2].b, (1, 0));
    assert_eq!(
        (t.links[2].rate, t.links[2].delay),
        (Rate::gbps(100), Duration::from_us(2))
    );
    assert_eq!(
        (t.links[0].rate, t.links[0].delay),
        (Rate::gbps(400), Duration::from_us(1))
    );
    // Two hosts wired back to back need no switch.
    let t = explicit(vec![host("a"), host("b")], vec![link("a", "b")])
        .build()
        .unwrap();
    assert_eq!((t.num_hosts, t.num_switches(), t.links.len()), (2, 0, 1));
}
