//! The plan: which host runs which component, the pairs, and the connections, computed before
//! the simulation starts. Each application plans its own part from its placement; the program
//! puts the parts together in scenario order (`rdmasim plan --format json` prints the whole).

use serde::Serialize;

/// One host's part: which application's component it runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostPlan {
    /// The host's node id.
    pub node_id: u32,
    /// The application's `name`.
    pub application: String,
    /// The distribution entry the host runs (`initiator`, `responder`).
    pub component: &'static str,
}

/// An Initiator host paired with a Responder host.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairPlan {
    /// The Initiator's host id.
    pub initiator: u32,
    /// The Responder's host id.
    pub responder: u32,
    /// The application's `name`.
    pub application: String,
}

/// One connection between a pair.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConnectionPlan {
    /// The connection's id: its position in the whole plan's list (the NIC contract's id).
    pub id: u32,
    /// The Initiator's host id.
    pub initiator: u32,
    /// The Responder's host id.
    pub responder: u32,
    /// Index of the connection within its pair, from 0.
    pub index: u32,
    /// The instance's name (`application_name` in rdma-perf).
    pub application_name: String,
    /// Which application (position in `applications`) it belongs to.
    #[serde(skip)]
    pub app: usize,
    /// The traffic class of its data packets.
    pub traffic_class: u8,
}

/// Placement, pairing and connections.
#[derive(Clone, Debug, PartialEq, Serialize, Default)]
pub struct Plan {
    /// Each host's part, in node-id order.
    pub hosts: Vec<HostPlan>,
    /// The pairs.
    pub pairs: Vec<PairPlan>,
    /// The connections, in id order.
    pub connections: Vec<ConnectionPlan>,
}

impl Plan {
    /// Appends `part`, numbering its connections after this plan's; hosts stay in node-id order.
    pub fn append(&mut self, mut part: Plan) {
        let base = self.connections.len() as u32;
        for c in &mut part.connections {
            c.id += base;
        }
        self.hosts.append(&mut part.hosts);
        self.hosts.sort_by_key(|h| h.node_id);
        self.pairs.append(&mut part.pairs);
        self.connections.append(&mut part.connections);
    }

    /// The plan as pretty-printed JSON (`rdmasim plan --format json`).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a plan always serializes")
    }
}
