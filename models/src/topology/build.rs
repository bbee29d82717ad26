//! Checks a `TopologyConfig` and builds the `Topology` it describes. Sizes are checked before
//! anything is allocated, in 128-bit arithmetic, so a typo such as `k: 1000000` is an error and not
//! an out-of-memory abort. Links are made tier by tier (host links first, then upwards), and a
//! node's ports are numbered in the order its links are made, so ids and port numbers depend on
//! the config alone.

use super::config::{FatTreeTopology, LeafSpineTopology, LinkOverride, StarTopology, TopologyConfig};
use super::{Link, Node, NodeKind, PortRef, Topology, TopologyError};
use engine::units::{Duration, Rate};
use petgraph::graph::{NodeIndex, UnGraph};

impl TopologyConfig {
    /// Checks the config and builds the fabric.
    pub fn build(&self) -> Result<Topology, TopologyError> {
        match self {
            TopologyConfig::Explicit(e) => explicit::explicit(e),
            TopologyConfig::Star(s) => star(s),
            TopologyConfig::LeafSpine(ls) => leaf_spine(ls),
            TopologyConfig::FatTree(ft) => fat_tree(ft),
        }
    }
}

/// Collects nodes (hosts first) and links, numbering ports as links are made.
struct Builder {
    nodes: Vec<Node>,
    links: Vec<Link>,
    num_hosts: usize,
}

impl Builder {
    fn with_capacity(nodes: usize, links: usize) -> Self {
        Builder {
            nodes: Vec::with_capacity(nodes),
            links: Vec::with_capacity(links),
            num_hosts: 0,
        }
    }

    fn node(&mut self, name: String, kind: NodeKind) -> u32 {
        if kind == NodeKind::Host {
            debug_assert_eq!(self.num_hosts, self.nodes.len(), "hosts must be added before switches");
            self.num_hosts += 1;
        }
        self.nodes.push(Node {
            name,
            kind,
            ports: Vec::new(),
        });
        (self.nodes.len() - 1) as u32
    }

    /// Links `a` and `b`; `field` is blamed if either runs out of port numbers.
    fn link(&mut self, a: u32, b: u32, rate: Rate, delay: Duration, field: &str) -> Result<u32, TopologyError> {
        let id = self.links.len() as u32;
        let pa = self.next_port(a, field)?;
        let pb = self.next_port(b, field)?;
        self.nodes[a as usize].ports.push(PortRef {
            link: id,
            peer_node: b,
            peer_port: pb,
        });
        self.nodes[b as usize].ports.push(PortRef {
            link: id,
            peer_node: a,
            peer_port: pa,
        });
        self.links.push(Link {
            a: (a, pa),
            b: (b, pb),
            rate,
            delay,
        });
        Ok(id)
    }

    fn next_port(&self, node: u32, field: &str) -> Result<u16, TopologyError> {
        let node = &self.nodes[node as usize];
        u16::try_from(node.ports.len()).map_err(|_| TopologyError::TooManyPorts {
            field: field.into(),
            name: node.name.clone(),
            max: TopologyConfig::MAX_PORTS,
        })
    }

    fn finish(self) -> Topology {
        let mut graph = UnGraph::with_capacity(self.nodes.len(), self.links.len());
        for id in 0..self.nodes.len() {
            graph.add_node(id as u32);
        }
        for (id, l) in self.links.iter().enumerate() {
            graph.add_edge(
                NodeIndex::new(l.a.0 as usize),
                NodeIndex::new(l.b.0 as usize),
                id as u32,
            );
        }
        Topology {
            nodes: self.nodes,
            links: self.links,
            num_hosts: self.num_hosts,
            graph,
        }
    }
}

fn check_rate(rate: Rate, field: &str) -> Result<(), TopologyError> {
    if rate.bps() == 0 {
        Err(TopologyError::ZeroRate { field: field.into() })
    } else {
        Ok(())
    }
}

/// The resolved rate and delay of a tier, after checking the override's rate.
fn tier(o: &Option<LinkOverride>, name: &str, rate: Rate, delay: Duration) -> Result<(Rate, Duration), TopologyError> {
    let (rate, delay) = LinkOverride::resolve(o.as_ref(), rate, delay);
    check_rate(rate, &format!("topology.{name}.rate"))?;
    Ok((rate, delay))
}

fn check_size(nodes: u128, field: &str) -> Result<(), TopologyError> {
    if nodes > TopologyConfig::MAX_NODES as u128 {
        return Err(TopologyError::TooManyNodes {
            field: field.into(),
            nodes,
            max: TopologyConfig::MAX_NODES,
        });
    }
    Ok(())
}

fn at_least(value: u32, min: u32, field: &str) -> Result<(), TopologyError> {
    if value < min {
        return Err(TopologyError::TooSmall {
            field: field.into(),
            min: min.into(),
            found: value.into(),
        });
    }
    Ok(())
}

fn add_hosts(b: &mut Builder, n: usize) {
    for i in 0..n {
        b.node(format!("h{i}"), NodeKind::Host);
    }
}

fn add_switches(b: &mut Builder, prefix: &str, n: usize) -> u32 {
    let first = b.nodes.len() as u32;
    for i in 0..n {
        b.node(format!("{prefix}{i}"), NodeKind::Switch);
    }
    first
}

fn star(s: &StarTopology) -> Result<Topology, TopologyError> {
    at_least(s.hosts, 2, "topology.hosts")?;
    check_size(s.hosts as u128 + 1, "topology.hosts")?;
    check_rate(s.link_rate, "topology.link_rate")?;
    let hosts = s.hosts as usize;
    let mut b = Builder::with_capacity(hosts + 1, hosts);
    add_hosts(&mut b, hosts);
    let s0 = add_switches(&mut b, "s", 1);
    for h in 0..hosts as u32 {
        b.link(h, s0, s.link_rate, s.link_delay, "topology.hosts")?;
    }
    Ok(b.finish())
}

fn leaf_spine(ls: &LeafSpineTopology) -> Result<Topology, TopologyError> {
    at_least(ls.leaves, 1, "topology.leaves")?;
    at_least(ls.spines, 1, "topology.spines")?;
    at_least(ls.hosts_per_leaf, 1, "topology.hosts_per_leaf")?;
    let hosts = ls.leaves as u128 * ls.hosts_per_leaf as u128;
    if hosts < 2 {
        let found = hosts as u64;
        return Err(TopologyError::TooFewHosts {
            field: "topology.hosts_per_leaf".into(),
            found,
        });
    }
    check_size(hosts + ls.leaves as u128 + ls.spines as u128, "topology")?;
    check_rate(ls.link_rate, "topology.link_rate")?;
    let (host_rate, host_delay) = tier(&ls.host_link, "host_link", ls.link_rate, ls.link_delay)?;
    let (spine_rate, spine_delay) = tier(&ls.spine_link, "spine_link", ls.link_rate, ls.link_delay)?;

    let (hosts, leaves, spines) = (hosts as usize, ls.leaves as usize, ls.spines as usize);
    let mut b = Builder::with_capacity(hosts + leaves + spines, hosts + leaves * spines);
    add_hosts(&mut b, hosts);
    let leaf0 = add_switches(&mut b, "leaf", leaves);
    let spine0 = add_switches(&mut b, "spine", spines);
    for h in 0..hosts as u32 {
        let leaf = leaf0 + h / ls.hosts_per_leaf;
        b.link(h, leaf, host_rate, host_delay, "topology.hosts_per_leaf")?;
    }
    for l in 0..ls.leaves {
        for s in 0..ls.spines {
            b.link(leaf0 + l, spine0 + s, spine_rate, spine_delay, "topology.spines")?;
        }
    }
    Ok(b.finish())
}

fn fat_tree(ft: &FatTreeTopology) -> Result<Topology, TopologyError> {
    at_least(ft.k, 2, "topology.k")?;
    if !ft.k.is_multiple_of(2) {
        return Err(TopologyError::OddFatTreeK {
            field: "topology.k".into(),
            found: ft.k.into(),
        });
    }
    let k = ft.k as u128;
    check_size(5 * k * k / 4 + k * k * k / 4, "topology.k")?;
    check_rate(ft.link_rate, "topology.link_rate")?;
    let (host_rate, host_delay) = tier(&ft.host_link, "host_link", ft.link_rate, ft.link_delay)?;
    let (agg_rate, agg_delay) = tier(&ft.aggregation_link, "aggregation_link", ft.link_rate, ft.link_delay)?;
    let (core_rate, core_delay) = tier(&ft.core_link, "core_link", ft.link_rate, ft.link_delay)?;

    // With h = k/2: k pods of h edge and h aggregation switches, h^2 cores, h hosts per edge.
    let (k, h) = (ft.k, ft.k / 2);
    let (hosts, pod_switches, cores) = ((k * h * h) as usize, (k * h) as usize, (h * h) as usize);
    let mut b = Builder::with_capacity(hosts + 2 * pod_switches + cores, 3 * hosts);
    add_hosts(&mut b, hosts);
    let edge0 = add_switches(&mut b, "edge", pod_switches);
    let agg0 = add_switches(&mut b, "agg", pod_switches);
    let core0 = add_switches(&mut b, "core", cores);
    for host in 0..hosts as u32 {
        b.link(host, edge0 + host / h, host_rate, host_delay, "topology.k")?;
    }
    // Edge switch e of pod p links to every aggregation switch of pod p.
    for e in 0..k * h {
        let pod = e / h;
        for j in 0..h {
            b.link(edge0 + e, agg0 + pod * h + j, agg_rate, agg_delay, "topology.k")?;
        }
    }
    // Aggregation switch j of every pod links to cores j*h .. (j+1)*h, so each core reaches
    // every pod exactly once.
    for a in 0..k * h {
        let j = a % h;
        for m in 0..h {
            b.link(agg0 + a, core0 + j * h + m, core_rate, core_delay, "topology.k")?;
        }
    }
    Ok(b.finish())
}

mod explicit;

#[cfg(test)]
mod refusal_tests;
#[cfg(test)]
mod tests;
