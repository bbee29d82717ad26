//! The Scala RDMA application's attributes, as a scenario writes them in RON.
//!
//! The RON field names are the spec's attribute names (`prScalaRdmaInitiator`, `NumConnections`,
//! `MaxPendingWQEs`, `StartType`, `DoorbellPayloadSize`, `OpCode`, `RdmaVerb`,
//! `RdmaDataPacketTC`); the Rust fields are their snake_case forms. Every field has a default, so
//! `()` is a valid configuration. Each bounded attribute is a newtype whose deserializer checks the
//! range, so a bad value fails while RON is being read and the error carries its line and column,
//! with a message naming the attribute and what it accepts. The one check that needs the NIC's
//! configuration, whether `RdmaDataPacketTC` has buffer pools, is
//! [`ScalaRdmaConfig::validate_against_pools`], run when the scenario is assembled.

use engine::units::Size;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// Bytes of every WQE: the spec's RDMA WRITE of 250,000 bytes.
pub const TRANSFER_SIZE_BYTES: u64 = 250_000;

/// Bytes of UDP and IPv4 headers the doorbell carries on PCIe on top of `DoorbellPayloadSize`.
pub const DOORBELL_HEADER_BYTES: u64 = 28;

/// Configuration errors found after deserialization, or by the newtypes' constructors.
#[derive(Clone, PartialEq, Debug, Error)]
pub enum ConfigError {
    /// A bounded attribute outside its range. The deserializers report the same text.
    #[error("{attribute} must be {allowed}, got {got}")]
    OutOfRange {
        /// The attribute's name, as in RON.
        attribute: &'static str,
        /// The range it accepts, as a phrase.
        allowed: &'static str,
        /// The value given.
        got: String,
    },
    /// `RdmaDataPacketTC` names a class without a buffer pool on its way.
    #[error(
        "RdmaDataPacketTC {tc} has no {missing}: pick a class with a non-zero entry in both the \
         Initiator NIC's EgressBufferManager PoolAllocationVector and the Responder NIC's \
         IngressBufferManager PoolAllocationVector ({usable})"
    )]
    NoPoolForTrafficClass {
        /// The `RdmaDataPacketTC` given.
        tc: u8,
        /// Which buffer lacks a pool for it.
        missing: MissingPool,
        /// The classes that would work, as a phrase.
        usable: String,
    },
}

/// Which buffer lacks a pool for the data packets' traffic class.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MissingPool {
    /// The Initiator NIC's egress buffer.
    Egress,
    /// The Responder NIC's ingress buffer.
    Ingress,
    /// Both of them.
    Both,
}

impl fmt::Display for MissingPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MissingPool::Egress => "egress (transmit) pool on the Initiator's NIC",
            MissingPool::Ingress => "ingress (receive) pool on the Responder's NIC",
            MissingPool::Both => "egress pool on the Initiator's NIC and no ingress pool on the Responder's NIC",
        })
    }
}

/// The application's attributes. `ScalaRdmaConfig::default()` is what `()` in RON gives.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScalaRdmaConfig {
    /// The application's name (ours: the spec names the application's instances but not how).
    /// Connection instance names are built from it, see [`ScalaRdmaConfig::instance_name`].
    #[serde(deserialize_with = "deserialize_name")]
    pub name: String,
    /// `prScalaRdmaInitiator`: the Initiator's share of the hosts, in (0, 1]; left out, it
    /// shares what the given ratios leave of 1 with the others left out (the spec's even split).
    #[serde(rename = "prScalaRdmaInitiator")]
    pub pr_scala_rdma_initiator: Option<InitiatorRatio>,
    /// `prScalaRdmaResponder`: the Responder's share of the hosts, as `prScalaRdmaInitiator`.
    #[serde(rename = "prScalaRdmaResponder")]
    pub pr_scala_rdma_responder: Option<ResponderRatio>,
    /// `NumConnections`: connections (queue pairs) per Initiator-Responder pair.
    #[serde(rename = "NumConnections")]
    pub num_connections: NumConnections,
    /// `MaxPendingWQEs`: WQEs each connection keeps outstanding.
    #[serde(rename = "MaxPendingWQEs")]
    pub max_pending_wqes: MaxPendingWqes,
    /// `StartType`: how connection setups spread over the client start window.
    #[serde(rename = "StartType")]
    pub start_type: StartType,
    /// `DoorbellPayloadSize`: the doorbell's payload on PCIe, before its 28 header bytes.
    #[serde(rename = "DoorbellPayloadSize")]
    pub doorbell_payload_size: DoorbellPayloadSize,
    /// `OpCode`: only `RDMA_OPCODE_WRITE_FIRST`.
    #[serde(rename = "OpCode")]
    pub op_code: OpCode,
    /// `RdmaVerb`: only `RDMA_VERB_POST_WRITE`.
    #[serde(rename = "RdmaVerb")]
    pub rdma_verb: RdmaVerb,
    /// `RdmaDataPacketTC`: the data packets' traffic class, 0 to 7.
    #[serde(rename = "RdmaDataPacketTC")]
    pub rdma_data_packet_tc: TrafficClass,
}

impl ScalaRdmaConfig {
    /// Default application name (ours).
    pub const DEFAULT_NAME: &'static str = "scala-rdma";
    /// Default `NumConnections`, connections per pair.
    pub const DEFAULT_NUM_CONNECTIONS: u32 = 1;
    /// Largest `NumConnections`, connections per pair (spec: 1 to 1,024).
    pub const MAX_NUM_CONNECTIONS: u32 = 1024;
    /// Default `MaxPendingWQEs`, WQEs outstanding per connection.
    pub const DEFAULT_MAX_PENDING_WQES: u32 = 10;
    /// Largest `MaxPendingWQEs`, WQEs per connection: the spec sets no bound, so we take the
    /// send queue depth a RoCE NIC supports, `max_qp_wr` = 32,768 work requests per queue pair
    /// on NVIDIA ConnectX-5/6/7 (`ibv_devinfo -v`; `ibv_create_qp` refuses a deeper queue).
    pub const MAX_MAX_PENDING_WQES: u32 = 32_768;
    /// Default `DoorbellPayloadSize`, in bytes.
    pub const DEFAULT_DOORBELL_PAYLOAD_BYTES: u64 = 64;
    /// Largest `DoorbellPayloadSize`, in bytes (ours: the spec sets no bound).
    pub const MAX_DOORBELL_PAYLOAD_BYTES: u64 = 4096;
    /// Default `RdmaDataPacketTC`, a traffic class.
    pub const DEFAULT_RDMA_DATA_PACKET_TC: u8 = 0;
    /// Largest `RdmaDataPacketTC`: the eight classes are 0 to 7.
    pub const MAX_RDMA_DATA_PACKET_TC: u8 = 7;

    /// The name of one connection's Initiator instance, the `application_name` column of
    /// rdma-perf: `{name}-initiator-{initiator_node}-{responder_node}-{index}`, for example
    /// `scala-rdma-initiator-3-12-0`. `index` is the connection's index within its pair, from 0 to
    /// `NumConnections - 1`. Unique per connection, since a pair is unique per application.
    pub fn instance_name(&self, initiator_node: u32, responder_node: u32, index: u32) -> String {
        format!("{}-initiator-{initiator_node}-{responder_node}-{index}", self.name)
    }

    /// Bytes the doorbell puts on the host-to-NIC PCIe direction: `DoorbellPayloadSize` + 28.
    pub fn doorbell_bytes(&self) -> u64 {
        self.doorbell_payload_size.get().bytes() + DOORBELL_HEADER_BYTES
    }

    /// Checks that `RdmaDataPacketTC` has a transmit pool on the Initiator's NIC and a receive
    /// pool on the Responder's NIC. `egress_pools[c]` / `ingress_pools[c]` say whether class `c`
    /// has a non-zero `PoolAllocationVector` entry in the `EgressBufferManager` /
    /// `IngressBufferManager`.
    pub fn validate_against_pools(
        &self,
        egress_pools: &[bool; 8],
        ingress_pools: &[bool; 8],
    ) -> Result<(), ConfigError> {
        let tc = self.rdma_data_packet_tc.get();
        let c = tc as usize;
        let missing = match (egress_pools[c], ingress_pools[c]) {
            (true, true) => return Ok(()),
            (false, true) => MissingPool::Egress,
            (true, false) => MissingPool::Ingress,
            (false, false) => MissingPool::Both,
        };
        let usable: Vec<String> = (0..8)
            .filter(|&k| egress_pools[k] && ingress_pools[k])
            .map(|k| k.to_string())
            .collect();
        let usable = match usable.len() {
            0 => "no class has both pools: give one a pool in each buffer".to_string(),
            1 => format!("class {} has both", usable[0]),
            _ => format!("classes {} have both", usable.join(", ")),
        };
        Err(ConfigError::NoPoolForTrafficClass { tc, missing, usable })
    }
}

impl Default for ScalaRdmaConfig {
    fn default() -> Self {
        ScalaRdmaConfig {
            name: Self::DEFAULT_NAME.to_string(),
            pr_scala_rdma_initiator: None,
            pr_scala_rdma_responder: None,
            num_connections: NumConnections(Self::DEFAULT_NUM_CONNECTIONS),
            max_pending_wqes: MaxPendingWqes(Self::DEFAULT_MAX_PENDING_WQES),
            start_type: StartType::default(),
            doorbell_payload_size: DoorbellPayloadSize(Size(Self::DEFAULT_DOORBELL_PAYLOAD_BYTES)),
            op_code: OpCode::default(),
            rdma_verb: RdmaVerb::default(),
            rdma_data_packet_tc: TrafficClass(Self::DEFAULT_RDMA_DATA_PACKET_TC),
        }
    }
}

/// `StartType`: when each connection sends its connection request.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StartType {
    /// Every connection at the start of the client start window.
    #[default]
    Simultaneous,
    /// Each connection at its own uniform random time in the window.
    Uniform,
    /// Evenly spaced across the window, the first at its start.
    Sequential,
}

/// `OpCode`: the spec allows one value. Every WQE is an RDMA WRITE; the NIC picks each packet's
/// opcode.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub enum OpCode {
    /// `RDMA_OPCODE_WRITE_FIRST`.
    #[default]
    #[serde(rename = "RDMA_OPCODE_WRITE_FIRST")]
    WriteFirst,
}

/// `RdmaVerb`: the spec allows one value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub enum RdmaVerb {
    /// `RDMA_VERB_POST_WRITE`.
    #[default]
    #[serde(rename = "RDMA_VERB_POST_WRITE")]
    PostWrite,
}

impl RdmaVerb {
    /// The value of rdma-perf's `rdma_verb` column.
    pub const fn as_str(self) -> &'static str {
        "RDMA_VERB_POST_WRITE"
    }
}

fn out_of_range(attribute: &'static str, allowed: &'static str, got: impl fmt::Display) -> ConfigError {
    ConfigError::OutOfRange {
        attribute,
        allowed,
        got: got.to_string(),
    }
}

/// Defines a whole-number attribute newtype whose deserializer accepts any RON number and checks
/// the range itself, so that `-1`, `2000` and `2.5` all get a message naming the attribute.
macro_rules! bounded_int {
    ($(#[$doc:meta])* $name:ident($inner:ty), $attr:literal, $lo:expr, $hi:expr, $allowed:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize)]
        #[serde(transparent)]
        pub struct $name($inner);

        impl $name {
            /// Smallest value allowed.
            pub const MIN: $inner = $lo;
            /// Largest value allowed.
            pub const MAX: $inner = $hi;

            /// Checks the range.
            pub fn new(v: $inner) -> Result<Self, ConfigError> {
                Self::from_i128(v as i128)
            }

            /// The value.
            pub const fn get(self) -> $inner {
                self.0
            }

            fn from_i128(v: i128) -> Result<Self, ConfigError> {
                if (Self::MIN as i128..=Self::MAX as i128).contains(&v) {
                    Ok($name(v as $inner))
                } else {
                    Err(out_of_range($attr, $allowed, v))
                }
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str(concat!("`", $attr, "` as a whole number ", $allowed))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        $name::from_i128(v as i128).map_err(E::custom)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        $name::from_i128(v as i128).map_err(E::custom)
                    }
                    fn visit_i128<E: de::Error>(self, v: i128) -> Result<$name, E> {
                        $name::from_i128(v).map_err(E::custom)
                    }
                    fn visit_u128<E: de::Error>(self, v: u128) -> Result<$name, E> {
                        $name::from_i128(i128::try_from(v).unwrap_or(i128::MAX)).map_err(E::custom)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(out_of_range($attr, $allowed, format!("{v} (not a whole number)"))))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

bounded_int!(
    /// `NumConnections`, from 1 to 1,024.
    NumConnections(u32), "NumConnections", 1, ScalaRdmaConfig::MAX_NUM_CONNECTIONS, "from 1 to 1,024"
);
bounded_int!(
    /// `MaxPendingWQEs`, from 0 (no WQE is posted) to 32,768 (a ConnectX send queue's depth).
    MaxPendingWqes(u32), "MaxPendingWQEs", 0, ScalaRdmaConfig::MAX_MAX_PENDING_WQES, "from 0 to 32,768 (the work requests a ConnectX-5/6/7 queue pair holds, max_qp_wr)"
);
bounded_int!(
    /// `RdmaDataPacketTC`, a traffic class from 0 to 7.
    TrafficClass(u8), "RdmaDataPacketTC", 0, ScalaRdmaConfig::MAX_RDMA_DATA_PACKET_TC, "from 0 to 7"
);

/// Defines a distribution ratio newtype: above 0 and at most 1.
macro_rules! ratio {
    ($(#[$doc:meta])* $name:ident, $attr:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, PartialOrd, Debug, Serialize)]
        #[serde(transparent)]
        pub struct $name(f64);

        impl $name {
            /// Checks that `v` is above 0 and at most 1 (NaN is neither).
            pub fn new(v: f64) -> Result<Self, ConfigError> {
                if v > 0.0 && v <= 1.0 {
                    Ok($name(v))
                } else {
                    Err(out_of_range(
                        $attr,
                        "above 0 and at most 1 (a ratio of 0 makes the configuration invalid)",
                        v,
                    ))
                }
            }

            /// The value.
            pub const fn get(self) -> f64 {
                self.0
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str(concat!("`", $attr, "` as a number above 0 and at most 1"))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        $name::new(v).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        self.visit_f64(v as f64)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_f64(v as f64)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

ratio!(
    /// `prScalaRdmaInitiator`, the Initiator's distribution ratio.
    InitiatorRatio,
    "prScalaRdmaInitiator"
);
ratio!(
    /// `prScalaRdmaResponder`, the Responder's distribution ratio.
    ResponderRatio,
    "prScalaRdmaResponder"
);

/// `DoorbellPayloadSize`, from 1 B to 4,096 B (the upper bound is ours). Written like any size:
/// `64`, `"64B"`, `"1KiB"`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize)]
#[serde(transparent)]
pub struct DoorbellPayloadSize(Size);

impl DoorbellPayloadSize {
    /// Checks the range.
    pub fn new(size: Size) -> Result<Self, ConfigError> {
        if (1..=ScalaRdmaConfig::MAX_DOORBELL_PAYLOAD_BYTES).contains(&size.bytes()) {
            Ok(DoorbellPayloadSize(size))
        } else {
            Err(out_of_range(
                "DoorbellPayloadSize",
                "from 1 B to 4,096 B",
                format!("{} B", size.bytes()),
            ))
        }
    }

    /// The value.
    pub const fn get(self) -> Size {
        self.0
    }
}

impl<'de> Deserialize<'de> for DoorbellPayloadSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // The size parser's own message does not know the attribute: prefix it.
        let size = Size::deserialize(d).map_err(|e| de::Error::custom(format_args!("DoorbellPayloadSize: {e}")))?;
        DoorbellPayloadSize::new(size).map_err(de::Error::custom)
    }
}

/// The name appears in every connection's instance name and in CSV cells: keep it to characters
/// that need no quoting anywhere.
fn deserialize_name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let name = String::deserialize(d)?;
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(name)
    } else {
        Err(de::Error::custom(format_args!(
            "name must be non-empty and use only ASCII letters, digits, '-', '_' and '.', got {name:?}"
        )))
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
