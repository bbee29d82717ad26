//! The ideal NIC's configuration, `nic: IdealNic((Mss: "4KiB", HeaderBytes: 58))` in RON: how
//! it cuts a WQE into packets, and nothing else. There is no port rate: the NIC sends at the
//! rate of its host's link, whatever the topology gives it, so a scenario's link rates are the
//! only rates in play.

use engine::prelude::*;
use serde::{Deserialize, Serialize};

/// `IdealNic((...))`. Every field is optional; `IdealNic(())` takes the defaults.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, bevy_ecs::prelude::Resource)]
#[serde(deny_unknown_fields, default)]
pub struct IdealNicConfig {
    /// Maximum segment size: payload bytes per data packet. Default 4096 B (the spec's Scala
    /// RoCE NIC figure), from 1 B to 9000 B (a jumbo frame's payload).
    pub Mss: Size,
    /// Header bytes added to every data packet: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4.
    /// Default 58 B (`models::wire::ROCE_DATA_HEADER_BYTES`, the spec's figure), at most 256 B.
    pub HeaderBytes: Size,
}

impl IdealNicConfig {
    /// Default maximum segment size, in bytes.
    pub const DEFAULT_MSS_BYTES: u64 = 4096;
    /// Default header bytes per data packet, in bytes.
    pub const DEFAULT_HEADER_BYTES: u64 = models::wire::ROCE_DATA_HEADER_BYTES as u64;
    /// Largest `Mss`, in bytes: the payload of a 9000-byte jumbo frame.
    pub const MAX_MSS_BYTES: u64 = 9000;
    /// Largest `HeaderBytes`, in bytes.
    pub const MAX_HEADER_BYTES: u64 = 256;

    /// Checks what serde's types cannot. The loader calls it; the model never panics on a value
    /// that fails it, but its packets would not mean much.
    pub fn validate(&self) -> Result<(), IdealNicConfigError> {
        if !(1..=Self::MAX_MSS_BYTES).contains(&self.Mss.0) {
            return Err(IdealNicConfigError::Mss(self.Mss));
        }
        if self.HeaderBytes.0 > Self::MAX_HEADER_BYTES {
            return Err(IdealNicConfigError::HeaderBytes(self.HeaderBytes));
        }
        Ok(())
    }

    /// Packets a WQE of `bytes` becomes: one per `Mss`, and one (empty) for a 0-byte WQE.
    pub fn packets(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.Mss.0.max(1)).max(1)
    }

    /// Bytes a WQE of `bytes` puts on the wire: its payload plus a header per packet.
    pub fn wire_bytes(&self, bytes: u64) -> u64 {
        bytes + self.packets(bytes) * self.HeaderBytes.0
    }
}

impl Default for IdealNicConfig {
    fn default() -> Self {
        IdealNicConfig {
            Mss: Size(Self::DEFAULT_MSS_BYTES),
            HeaderBytes: Size(Self::DEFAULT_HEADER_BYTES),
        }
    }
}

/// A configuration value out of range: the variant is the field (relative to `nic`), the
/// message what it accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdealNicConfigError {
    /// `Mss` is 0 or more than a jumbo frame's payload.
    #[error("must be from 1 B to 9000 B (a jumbo frame's payload), got {0}")]
    Mss(Size),
    /// `HeaderBytes` is more than 256 B.
    #[error("must be at most 256 B, got {0}")]
    HeaderBytes(Size),
}

impl IdealNicConfigError {
    /// The field at fault, relative to `nic`.
    pub fn field(&self) -> &'static str {
        match self {
            IdealNicConfigError::Mss(_) => "Mss",
            IdealNicConfigError::HeaderBytes(_) => "HeaderBytes",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_ron() {
        let c: IdealNicConfig = ron::from_str("()").unwrap();
        assert_eq!(c, IdealNicConfig::default());
        assert_eq!((c.Mss, c.HeaderBytes), (Size(4096), Size(58)));
        let c: IdealNicConfig = ron::from_str(r#"(Mss: "1KiB", HeaderBytes: 62)"#).unwrap();
        assert_eq!((c.Mss, c.HeaderBytes), (Size(1024), Size(62)));
        assert!(c.validate().is_ok());
    }

    #[test]
    fn unknown_fields_are_named() {
        // The RoCE NIC's PortRate is not a field here: the host's link sets the rate.
        let err = ron::from_str::<IdealNicConfig>(r#"(PortRate: "400Gbps")"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("PortRate"), "{err}");
    }

    #[test]
    fn out_of_range_values_are_rejected() {
        let c = IdealNicConfig {
            Mss: Size(0),
            ..Default::default()
        };
        assert_eq!(c.validate(), Err(IdealNicConfigError::Mss(Size(0))));
        let c = IdealNicConfig {
            Mss: Size(9001),
            ..Default::default()
        };
        let e = c.validate().unwrap_err();
        assert_eq!(e.field(), "Mss");
        assert!(e.to_string().contains("must be from 1 B to 9000 B"), "{e}");
        let c = IdealNicConfig {
            HeaderBytes: Size(257),
            ..Default::default()
        };
        assert_eq!(c.validate(), Err(IdealNicConfigError::HeaderBytes(Size(257))));
    }

    #[test]
    fn the_specs_worked_example_segments_as_the_spec_says() {
        // 250,000 B: ceil(250,000 / 4,096) = 62 packets, 250,000 + 62 x 58 = 253,596 B on the wire.
        let c = IdealNicConfig::default();
        assert_eq!(c.packets(250_000), 62);
        assert_eq!(c.wire_bytes(250_000), 253_596);
        assert_eq!(c.packets(0), 1, "an empty WQE is one empty packet");
        assert_eq!(c.packets(4096), 1);
        assert_eq!(c.packets(4097), 2);
    }
}
