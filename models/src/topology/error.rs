//! Why a `TopologyConfig` cannot be built. Every error names the field it is about as a dotted
//! path from the scenario root (`topology.links[3].b`), first in its message and through
//! `TopologyError::field`, so that the scenario loader can point at the line and column.

/// A topology that cannot be built, and where in the config the problem is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    /// A link end names no node.
    #[error("{field}: unknown node \"{name}\"; every link end must be a name listed in topology.nodes")]
    UnknownNode {
        /// The field at fault.
        field: String,
        /// The name given.
        name: String,
    },
    /// A node with an empty name.
    #[error("{field}: a node name cannot be empty")]
    EmptyName {
        /// The field at fault.
        field: String,
    },
    /// Two nodes with one name.
    #[error("{field}: the name \"{name}\" is already used by topology.nodes[{first}]; node names must be unique")]
    DuplicateName {
        /// The field at fault.
        field: String,
        /// The name.
        name: String,
        /// The index of the node that has it first.
        first: usize,
    },
    /// Fewer than two hosts.
    #[error("{field}: a topology needs at least two hosts, this one has {found}")]
    TooFewHosts {
        /// The field at fault.
        field: String,
        /// Hosts found.
        found: u64,
    },
    /// A size below its minimum.
    #[error("{field}: must be at least {min}, found {found}")]
    TooSmall {
        /// The field at fault.
        field: String,
        /// The minimum.
        min: u64,
        /// The value given.
        found: u64,
    },
    /// A fat tree with an odd `k`.
    #[error("{field}: a fat tree needs an even k (k/2 hosts per edge switch), found {found}")]
    OddFatTreeK {
        /// The field at fault.
        field: String,
        /// The `k` given.
        found: u64,
    },
    /// More nodes than node ids can number.
    #[error("{field}: this topology would have {nodes} nodes; at most {max} are supported")]
    TooManyNodes {
        /// The field at fault.
        field: String,
        /// Nodes the topology would have.
        nodes: u128,
        /// The most supported.
        max: usize,
    },
    /// A node with more ports than port numbers can number.
    #[error("{field}: node \"{name}\" would have more than {max} ports")]
    TooManyPorts {
        /// The field at fault.
        field: String,
        /// The node.
        name: String,
        /// The most supported.
        max: usize,
    },
    /// A link from a node to itself.
    #[error("{field}: a link from \"{name}\" to itself")]
    SelfLoop {
        /// The field at fault.
        field: String,
        /// The node.
        name: String,
    },
    #[error(
        "{field}: a second link between \"{a}\" and \"{b}\" (the first is topology.links[{first}]); give the pair one link"
    )]
    /// A second link between the same two nodes.
    DuplicateLink {
        /// The field at fault.
        field: String,
        /// One node.
        a: String,
        /// The other node.
        b: String,
        /// The index of the first link between them.
        first: usize,
    },
    /// A host with no link.
    #[error("{field}: host \"{name}\" has no link; a host has one NIC port and needs exactly one link")]
    HostWithoutLink {
        /// The field at fault.
        field: String,
        /// The host.
        name: String,
    },
    #[error(
        "{field}: host \"{name}\" already has a link (topology.links[{first}]); a host has one NIC port and needs exactly one link"
    )]
    /// A host with a second link (a host has one NIC port).
    HostWithSecondLink {
        /// The field at fault.
        field: String,
        /// The host.
        name: String,
        /// The index of its first link.
        first: usize,
    },
    /// Two nodes with no path between them.
    #[error("{field}: the fabric is not connected: no path from \"{from}\" to \"{to}\"")]
    Disconnected {
        /// The field at fault.
        field: String,
        /// One node.
        from: String,
        /// A node it cannot reach.
        to: String,
    },
    /// A rate of 0.
    #[error("{field}: a rate must be at least 1 bps")]
    ZeroRate {
        /// The field at fault.
        field: String,
    },
}

impl TopologyError {
    /// The dotted path of the offending field, e.g. `topology.links[3].b` or `topology.k`.
    pub fn field(&self) -> &str {
        use TopologyError::*;
        match self {
            UnknownNode { field, .. }
            | EmptyName { field }
            | DuplicateName { field, .. }
            | TooFewHosts { field, .. }
            | TooSmall { field, .. }
            | OddFatTreeK { field, .. }
            | TooManyNodes { field, .. }
            | TooManyPorts { field, .. }
            | SelfLoop { field, .. }
            | DuplicateLink { field, .. }
            | HostWithoutLink { field, .. }
            | HostWithSecondLink { field, .. }
            | Disconnected { field, .. }
            | ZeroRate { field } => field,
        }
    }
}
