//! The scenario's `topology` field: which fabric to build, as a RON value. Four shapes: an explicit
//! node and link list, a star (one switch), a two-tier leaf-spine and a three-tier k-ary fat tree.
//! Every link has a rate and a one-way propagation delay; each shape has a fabric-wide default
//! (`link_rate`, `link_delay`) and the generated shapes take per-tier overrides that fall back to it.
//!
//! # RON syntax
//!
//! Each variant reads as a struct variant, its fields directly inside the variant's parentheses
//! (see `variants` for why and how), with ron's `implicit_some` extension on as the scenario
//! loader has it, so an optional field takes a bare value:
//!
//! ```text
//! topology: LeafSpine(leaves: 4, spines: 4, hosts_per_leaf: 4, host_link: (rate: "100Gbps")),
//! topology: Star(hosts: 16, link_delay: "500ns"),
//! topology: FatTree(k: 4, core_link: (delay: "2us")),
//! topology: Explicit(
//!     nodes: [Host("h0"), Host("h1"), Switch("s0")],
//!     links: [(a: "h0", b: "s0"), (a: "s0", b: "h1", rate: "100Gbps", delay: "2us")],
//! ),
//! ```
//!
//! The same text reads with `unwrap_variant_newtypes` on as well. Without `implicit_some`, the
//! optional fields need `Some(..)`: `host_link: Some((rate: Some("100Gbps")))`. `link_rate` and
//! `link_delay` are plain fields with defaults, so they never need `Some`. The doubled form
//! `Star((hosts: 16))` that derived serde would expect is not accepted.

use engine::units::{Duration, Rate};
use serde::{Deserialize, Serialize};

/// Which fabric to build. `TopologyConfig::build` turns it into a `Topology`. Its serde forms
/// are written by hand in `variants`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopologyConfig {
    /// Nodes and links listed one by one.
    Explicit(ExplicitTopology),
    /// `hosts` hosts on one switch.
    Star(StarTopology),
    /// Two tiers: every leaf links to every spine; hosts hang off the leaves.
    LeafSpine(LeafSpineTopology),
    /// Three tiers (edge, aggregation, core) in `k` pods, after Al-Fares et al. (SIGCOMM 2008).
    FatTree(FatTreeTopology),
}

impl TopologyConfig {
    /// Default rate of every link, in bits per second: 400 Gbps.
    pub const DEFAULT_LINK_RATE: Rate = Rate::gbps(400);
    /// Default one-way propagation delay of every link: 1 us.
    pub const DEFAULT_LINK_DELAY: Duration = Duration::from_us(1);
    /// Most nodes (hosts plus switches) a topology may have, so that a typo such as `k: 1000000`
    /// is an error rather than an attempt to allocate a fabric that does not fit in memory.
    pub const MAX_NODES: usize = 100_000;
    /// Most ports a node may have: port numbers are `u16`.
    pub const MAX_PORTS: usize = u16::MAX as usize + 1;
}

impl Default for TopologyConfig {
    /// The default scenario's fabric: leaf-spine, 4 leaves x 4 hosts, 4 spines, 400 Gbps, 1 us.
    fn default() -> Self {
        TopologyConfig::LeafSpine(LeafSpineTopology {
            leaves: 4,
            spines: 4,
            hosts_per_leaf: 4,
            link_rate: TopologyConfig::DEFAULT_LINK_RATE,
            link_delay: TopologyConfig::DEFAULT_LINK_DELAY,
            host_link: None,
            spine_link: None,
        })
    }
}

fn default_link_rate() -> Rate {
    TopologyConfig::DEFAULT_LINK_RATE
}

fn default_link_delay() -> Duration {
    TopologyConfig::DEFAULT_LINK_DELAY
}

/// A node of an explicit topology: a host (one NIC port) or a switch, by unique name.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub enum NodeSpec {
    /// A host, by name.
    Host(String),
    /// A switch, by name.
    Switch(String),
}

impl NodeSpec {
    /// The node's name.
    pub fn name(&self) -> &str {
        match self {
            NodeSpec::Host(n) | NodeSpec::Switch(n) => n,
        }
    }
}

/// A full-duplex link between two named nodes; `rate` and `delay` default to the topology's
/// `link_rate` and `link_delay`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// One end's node name.
    pub a: String,
    /// The other end's node name.
    pub b: String,
    /// The link's rate; the topology's `link_rate` if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// The link's one-way delay; the topology's `link_delay` if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Duration>,
}

/// Rate and delay for one tier of links; an absent field falls back to the topology's
/// `link_rate` / `link_delay`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkOverride {
    /// The tier's rate, if not the topology's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// The tier's one-way delay, if not the topology's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Duration>,
}

impl LinkOverride {
    /// The rate and delay of a tier: the override's fields where set, else the defaults.
    pub fn resolve(tier: Option<&LinkOverride>, rate: Rate, delay: Duration) -> (Rate, Duration) {
        match tier {
            Some(o) => (o.rate.unwrap_or(rate), o.delay.unwrap_or(delay)),
            None => (rate, delay),
        }
    }
}

/// `Explicit(nodes: [..], links: [..])`. Hosts get node ids in the order they appear in `nodes`;
/// switches follow, also in order.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExplicitTopology {
    /// The hosts and switches.
    pub nodes: Vec<NodeSpec>,
    /// The links, each between two named nodes.
    pub links: Vec<LinkSpec>,
    /// Rate of a link that names none (bits per second).
    #[serde(default = "default_link_rate")]
    pub link_rate: Rate,
    /// One-way delay of a link that names none.
    #[serde(default = "default_link_delay")]
    pub link_delay: Duration,
}

/// `Star(hosts: N)`: hosts `h0..h{N-1}` each linked to switch `s0`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StarTopology {
    /// Number of hosts, at least 2.
    pub hosts: u32,
    /// Rate of every link (bits per second).
    #[serde(default = "default_link_rate")]
    pub link_rate: Rate,
    /// One-way delay of every link.
    #[serde(default = "default_link_delay")]
    pub link_delay: Duration,
}

/// `LeafSpine(leaves: L, spines: S, hosts_per_leaf: H)`: hosts `h0..`, leaves `leaf0..`, spines
/// `spine0..`; host i is on leaf `i / H`; every leaf links to every spine.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LeafSpineTopology {
    /// Number of leaf switches, at least 1.
    pub leaves: u32,
    /// Number of spine switches, at least 1.
    pub spines: u32,
    /// Hosts on each leaf, at least 1.
    pub hosts_per_leaf: u32,
    /// Rate of a link whose tier names none (bits per second).
    #[serde(default = "default_link_rate")]
    pub link_rate: Rate,
    /// One-way delay of a link whose tier names none.
    #[serde(default = "default_link_delay")]
    pub link_delay: Duration,
    /// Host-to-leaf links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_link: Option<LinkOverride>,
    /// Leaf-to-spine links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spine_link: Option<LinkOverride>,
}

/// `FatTree(k: K)`, K even: K pods of K/2 edge (`edge0..`) and K/2 aggregation (`agg0..`)
/// switches, (K/2)^2 core switches (`core0..`), K^3/4 hosts, K/2 hosts per edge switch. Edge and
/// aggregation switches are numbered pod by pod: `edgeN` is in pod `N / (K/2)`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeTopology {
    /// Ports per switch: even, at least 2.
    pub k: u32,
    /// Rate of a link whose tier names none (bits per second).
    #[serde(default = "default_link_rate")]
    pub link_rate: Rate,
    /// One-way delay of a link whose tier names none.
    #[serde(default = "default_link_delay")]
    pub link_delay: Duration,
    /// Host-to-edge links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_link: Option<LinkOverride>,
    /// Edge-to-aggregation links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregation_link: Option<LinkOverride>,
    /// Aggregation-to-core links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_link: Option<LinkOverride>,
}

mod variants;

#[cfg(test)]
mod tests;
