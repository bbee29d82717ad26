//! `FlowsConfig`: the flows, listed in RON or read from an htsim connection matrix, and the
//! checks that need the file or the fabric.

use engine::SimTime;
use engine::scenario::FieldError;
use engine::units::{Duration, Size};
use serde::Deserialize;
use std::path::Path;

/// One flow, however it was given: `bytes` of RDMA WRITE from host `src` to host `dst`,
/// starting at `start` (simulation time). `bytes` 0 is a flow that never ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flow {
    /// `flow_id` in flow-fct: the matrix's `id`, or the position in `flows` counting from 1.
    pub id: u64,
    /// The sending host's id.
    pub src: u32,
    /// The receiving host's id.
    pub dst: u32,
    /// The flow's size in bytes; 0 never ends.
    pub bytes: u64,
    /// When the flow starts (its connection is set up before).
    pub start: SimTime,
}

/// A flow as RON lists it: `(src: 0, dst: 9, bytes: "2MB", start: 0.003)`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// The sending host's node id.
    pub src: u32,
    /// The receiving host's node id.
    pub dst: u32,
    /// The flow's size; `0` never ends.
    pub bytes: Size,
    /// When it starts, in simulation time (default 0).
    #[serde(default)]
    pub start: Duration,
}

/// The application's attributes. Give `flows` or `matrix`, not both.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FlowsConfig {
    /// The application's name (the plan's instance names: `{name}-flow-{flow_id}`).
    pub name: String,
    /// The flows, listed.
    pub flows: Vec<FlowSpec>,
    /// An htsim connection-matrix file, relative to the scenario file.
    pub matrix: Option<String>,
    /// `RdmaDataPacketTC`: the data packets' traffic class, 0 to 7.
    #[serde(rename = "RdmaDataPacketTC")]
    pub rdma_data_packet_tc: u8,
    /// `DoorbellPayloadSize`: the doorbell's payload on PCIe, before its 28 header bytes.
    #[serde(rename = "DoorbellPayloadSize")]
    pub doorbell_payload_size: Size,
    /// The flows after loading (from `flows` or the matrix).
    #[serde(skip)]
    pub resolved: Vec<Flow>,
}

impl FlowsConfig {
    /// Default application name.
    pub const DEFAULT_NAME: &'static str = "flows";
    /// Default `DoorbellPayloadSize`, in bytes (the Scala RDMA application's).
    pub const DEFAULT_DOORBELL_PAYLOAD_BYTES: u64 = 64;
    /// UDP and IPv4 header bytes on the doorbell (the spec's 28).
    pub const DOORBELL_HEADER_BYTES: u64 = 28;
    /// Largest RDMA WRITE posted, in bytes: 1 GiB, the `max_msg_sz` of a ConnectX-5/6/7
    /// (`ibv_devinfo -v`). A larger flow posts several WRITEs on its queue pair, back to back.
    pub const MAX_WRITE_BYTES: u64 = 1 << 30;
    /// Bytes of each WRITE of a flow that never ends: 16 MiB (340 us at 400 Gbps). The NIC
    /// sends one WRITE of a queue pair at a time, so between two WRITEs the link waits a round
    /// trip (the last packet out, its ACK back, the next fetch): about 12 us on the default
    /// leaf-spine, 3.5% of line rate; a larger WRITE would complete none in a short run.
    pub const STREAM_WRITE_BYTES: u64 = 16 << 20;
    /// WRITEs a never-ending flow keeps posted: 2, so the NIC always has the next one queued.
    pub const STREAM_PENDING: u64 = 2;

    /// A doorbell's bytes on PCIe: `DoorbellPayloadSize` plus `DOORBELL_HEADER_BYTES`.
    pub fn doorbell_bytes(&self) -> u64 {
        self.doorbell_payload_size.bytes() + Self::DOORBELL_HEADER_BYTES
    }

    /// The WRITEs of a flow of `bytes` (`None`: a stream that never ends).
    pub fn writes_of(bytes: u64) -> Option<u64> {
        (bytes > 0).then(|| bytes.div_ceil(Self::MAX_WRITE_BYTES))
    }

    /// Reads the matrix (if one is named) into `resolved`, or takes `flows`; returns the text of
    /// the matrix read.
    pub fn resolve(&mut self, dir: &Path) -> Result<Vec<String>, FieldError> {
        match (&self.matrix, self.flows.is_empty()) {
            (Some(_), false) => Err(FieldError::new(
                "matrix",
                "give the flows either in `flows` or in `matrix`, not both",
            )),
            (None, true) => Err(FieldError::new(
                "flows",
                "list at least one flow, e.g. flows: [(src: 0, dst: 1, bytes: \"1MB\")], or name an htsim matrix: matrix: \"perm.cm\"",
            )),
            (None, false) => {
                self.resolved = self
                    .flows
                    .iter()
                    .enumerate()
                    .map(|(k, f)| Flow {
                        id: k as u64 + 1,
                        src: f.src,
                        dst: f.dst,
                        bytes: f.bytes.bytes(),
                        start: f.start.time(),
                    })
                    .collect();
                Ok(Vec::new())
            }
            (Some(file), true) => {
                let path = dir.join(file);
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| FieldError::new("matrix", format!("cannot read {}: {e}", path.display())))?;
                let m = crate::matrix::parse(&text)
                    .map_err(|e| FieldError::new("matrix", format!("{}: {e}", path.display())))?;
                self.resolved = m.flows;
                Ok(vec![text])
            }
        }
    }

    /// Checks the flows against the fabric: hosts that exist, two different ones per flow, and
    /// a traffic class with pools on both NICs.
    pub fn check_flows(&self, num_hosts: usize, pools: &models::nic::NicPools) -> Result<(), FieldError> {
        let tc = self.rdma_data_packet_tc as usize;
        if tc > 7 {
            return Err(FieldError::new(
                "RdmaDataPacketTC",
                format!("{tc}: a traffic class is 0 to 7"),
            ));
        }
        if !(pools.egress[tc] && pools.ingress[tc]) {
            return Err(FieldError::new(
                "RdmaDataPacketTC",
                format!("class {tc} has no transmit pool on the sender's NIC or no receive pool on the receiver's"),
            ));
        }
        for (k, f) in self.resolved.iter().enumerate() {
            // A listed flow is named by its field; a matrix's by its id and line order.
            let (field, which) = match &self.matrix {
                None => (format!("flows[{k}]"), String::new()),
                Some(m) => ("matrix".to_string(), format!("{m}: flow id {}: ", f.id)),
            };
            for (end, node) in [("src", f.src), ("dst", f.dst)] {
                if node as usize >= num_hosts {
                    let field = if self.matrix.is_none() {
                        format!("{field}.{end}")
                    } else {
                        field.clone()
                    };
                    return Err(FieldError::new(
                        field,
                        format!(
                            "{which}host {node} does not exist: the topology has {num_hosts} hosts (0 to {})",
                            num_hosts - 1
                        ),
                    ));
                }
            }
            if f.src == f.dst {
                let field = if self.matrix.is_none() {
                    format!("{field}.dst")
                } else {
                    field
                };
                return Err(FieldError::new(
                    field,
                    format!("{which}the flow goes from host {} to itself", f.src),
                ));
            }
        }
        Ok(())
    }
}

impl Default for FlowsConfig {
    fn default() -> Self {
        FlowsConfig {
            name: Self::DEFAULT_NAME.to_string(),
            flows: Vec::new(),
            matrix: None,
            rdma_data_packet_tc: 0,
            doorbell_payload_size: Size(Self::DEFAULT_DOORBELL_PAYLOAD_BYTES),
            resolved: Vec::new(),
        }
    }
}
