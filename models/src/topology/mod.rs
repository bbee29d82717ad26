//! The fabric's shape: which hosts and switches exist, which ports they have and which links join
//! them. A scenario's `topology` field (`TopologyConfig`, in RON) is checked and built into a
//! `Topology`; routing (`Routes`, ECMP hashing) and the Graphviz view (`to_dot`) read it. Node ids
//! are stable and come from the topology alone: hosts are `0..num_hosts` in topology order (the
//! `node_id` of the records), switches follow. Port `p` of node `n` is `nodes[n].ports[p]`; a host
//! has exactly one port, its NIC's, port 0.
//!
//! ```
//! use models::topology::{Routes, TopologyConfig};
//! let topo = TopologyConfig::default().build().unwrap(); // leaf-spine 4 x 4, 4 hosts per leaf
//! assert_eq!((topo.num_hosts, topo.nodes.len()), (16, 24));
//! let routes = Routes::compute(&topo);
//! // From leaf0 to a host on leaf1: up to any of the 4 spines.
//! assert_eq!(routes.next_hops(topo.find("leaf0").unwrap(), 4), &[4, 5, 6, 7]);
//! ```

mod build;
mod config;
pub mod dot;
mod error;
pub mod routing;

pub use config::{
    ExplicitTopology, FatTreeTopology, LeafSpineTopology, LinkOverride, LinkSpec, NodeSpec, StarTopology,
    TopologyConfig,
};
pub use dot::to_dot;
pub use error::TopologyError;
pub use routing::{Routes, ecmp_choice, flow_hash, hop_counts, switch_salt};

use engine::units::{Duration, Rate};
use petgraph::graph::UnGraph;

/// A built fabric. Vectors are indexed by id: `nodes[node_id]`, `links[link_id]`.
#[derive(Clone, Debug)]
pub struct Topology {
    /// Hosts first (`0..num_hosts`), then switches.
    pub nodes: Vec<Node>,
    /// Links by link id.
    pub links: Vec<Link>,
    /// Hosts, which have node ids `0..num_hosts`.
    pub num_hosts: usize,
    /// The same fabric for graph algorithms: `NodeIndex` i is node i (weight i), `EdgeIndex` j is
    /// link j (weight j).
    pub graph: UnGraph<u32, u32>,
}

/// A host or a switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Its unique name (`h0`, `leaf1`...).
    pub name: String,
    /// Host or switch.
    pub kind: NodeKind,
    /// Port p is `ports[p]`, in the order the links were made (stable for a given config).
    pub ports: Vec<PortRef>,
}

/// Whether a node is a host or a switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// An end host, with one NIC port.
    Host,
    /// A switch.
    Switch,
}

/// What a port is wired to: a link, and the node and port at its far end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PortRef {
    /// The link's id.
    pub link: u32,
    /// The node at the far end.
    pub peer_node: u32,
    /// Its port there.
    pub peer_port: u16,
}

/// A full-duplex link: both directions have the same rate and one-way delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// `(node, port)` of one end.
    pub a: (u32, u16),
    /// `(node, port)` of the other end.
    pub b: (u32, u16),
    /// Rate of each direction.
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Duration,
}

impl Topology {
    /// Number of switches (nodes `num_hosts..`).
    pub fn num_switches(&self) -> usize {
        self.nodes.len() - self.num_hosts
    }

    /// Whether node `id` is a host.
    pub fn is_host(&self, id: u32) -> bool {
        (id as usize) < self.num_hosts
    }

    /// The id of the node called `name`.
    pub fn find(&self, name: &str) -> Option<u32> {
        self.nodes.iter().position(|n| n.name == name).map(|i| i as u32)
    }

    /// The `PortRef` of port `port` of node `node`.
    pub fn port(&self, node: u32, port: u16) -> &PortRef {
        &self.nodes[node as usize].ports[port as usize]
    }
}
