//! Why a `TopologyConfig` cannot be built. Every error names the field it is about as a dotted
//! path from the scenario root (`topology.links[3].b`), first in its message and through
//! `TopologyError::field`, so that the scenario loader can point at the line and column.

/// A topology that cannot be built, and where in the config the problem is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    #[error("{field}: unknown node \"{name}\"; every link end must be a name listed in topology.nodes")]
    UnknownNode { field: String, name: String },
    #[error("{field}: a node name cannot be empty")]
    EmptyName { field: String },
    #[error("{field}: the name \"{name}\" is already used by topology.nodes[{first}]; node names must be unique")]
    DuplicateName { field: String, name: String, first: usize },
    #[error("{field}: a topology needs at least two hosts, this one has {found}")]
    TooFewHosts { field: String, found: u64 },
    #[error("{field}: must be at least {min}, found {found}")]
    TooSmall { field: String, min: u64, found: u64 },
    #[error("{field}: a fat tree needs an even k (k/2 hosts per edge switch), found {found}")]
    OddFatTreeK { field: String, found: u64 },
    #[error("{field}: this topology would have {nodes} nodes; at most {max} are supported")]
    TooManyNodes { field: String, nodes: u128, max: usize },
    #[error("{field}: node \"{name}\" would have more than {max} ports")]
    TooManyPorts { field: String, name: String, max: usize },
    #[error("{field}: a link from \"{name}\" to itself")]
    SelfLoop { field: String, name: String },
    #[error(
        "{field}: a second link between \"{a}\" and \"{b}\" (the first is topology.links[{first}]); give the pair one link"
    )]
    DuplicateLink {
        field: String,
        a: String,
        b: String,
        first: usize,
    },
    #[error("{field}: host \"{name}\" has no link; a host has one NIC port and needs exactly one link")]
    HostWithoutLink { field: String, name: String },
    #[error(
        "{field}: host \"{name}\" already has a link (topology.links[{first}]); a host has one NIC port and needs exactly one link"
    )]
    HostWithSecondLink { field: String, name: String, first: usize },
    #[error("{field}: the fabric is not connected: no path from \"{from}\" to \"{to}\"")]
    Disconnected { field: String, from: String, to: String },
    #[error("{field}: a rate must be at least 1 bps")]
    ZeroRate { field: String },
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
