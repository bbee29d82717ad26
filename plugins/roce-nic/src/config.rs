//! The Scala RoCE NIC's configuration: every field with its unit, default, range, and whether
//! the value comes from the spec or is ours. RON: `nic: RoceNic((PortRate: "400Gbps", ...))`.

use engine::prelude::*;
use engine::scenario::FieldError;
use models::cc::CcChoice;
use models::pcie::PcieConfig;
use serde::{Deserialize, Serialize};

/// A buffer manager: a buffer and the share of it each traffic class's pool gets.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BufferManager {
    /// The buffer's size. Default 4 MiB (ours).
    pub BufferSize: Size,
    /// The share of `BufferSize` each class's pool gets, one entry per class 0-7, each from 0
    /// to 1, adding up to at most 1. A class with 0 has no pool. Default pools for classes 0 and
    /// 1, half each (the spec: "with the NIC's defaults, those are classes 0 and 1"). A RON
    /// list, like every per-class setting: `[0.5, 0.5, 0, 0, 0, 0, 0, 0]`.
    #[serde(with = "models::fabric::switch_config::per_class")]
    pub PoolAllocationVector: [f64; 8],
}

impl Default for BufferManager {
    fn default() -> Self {
        BufferManager {
            BufferSize: Size(4 << 20),
            PoolAllocationVector: [0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        }
    }
}

impl BufferManager {
    /// Pool bytes of each class.
    pub fn pools(&self) -> [u64; 8] {
        self.PoolAllocationVector
            .map(|f| (f * self.BufferSize.0 as f64).floor() as u64)
    }
    /// Which classes have a pool.
    pub fn has_pool(&self) -> [bool; 8] {
        self.pools().map(|b| b > 0)
    }
    /// The checks every buffer manager shares; the field is relative to the manager.
    fn validate(&self) -> Result<(), FieldError> {
        if self.BufferSize.0 == 0 {
            return Err(FieldError::new(
                "BufferSize",
                "must be more than 0 B: a NIC without a buffer has no pool to send or receive from",
            ));
        }
        for (c, f) in self.PoolAllocationVector.iter().enumerate() {
            if !(0.0..=1.0).contains(f) {
                return Err(FieldError::new(
                    format!("PoolAllocationVector[{c}]"),
                    format!("must be from 0 to 1, got {f}"),
                ));
            }
        }
        let sum: f64 = self.PoolAllocationVector.iter().sum();
        if sum > 1.0 + 1e-9 {
            return Err(FieldError::new(
                "PoolAllocationVector",
                format!("adds up to {sum}, more than the whole buffer (1)"),
            ));
        }
        Ok(())
    }
}

/// The receive side's buffer manager, with the thresholds at which the NIC sends PFC upstream.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IngressBufferManager {
    /// The buffer's size. Default 4 MiB (ours).
    pub BufferSize: Size,
    /// As in `BufferManager`. Default classes 0 and 1, half each.
    #[serde(with = "models::fabric::switch_config::per_class")]
    pub PoolAllocationVector: [f64; 8],
    /// A class's pool occupancy at which the NIC sends PAUSE for that class, as a share of its
    /// pool. Default 0.5 (ours): the rest is headroom for what is in flight when PAUSE lands.
    pub PfcXoffFraction: f64,
    /// The occupancy at or below which it sends RESUME. Default 0.25 (ours); below XOFF.
    pub PfcXonFraction: f64,
}

impl Default for IngressBufferManager {
    fn default() -> Self {
        let b = BufferManager::default();
        IngressBufferManager {
            BufferSize: b.BufferSize,
            PoolAllocationVector: b.PoolAllocationVector,
            PfcXoffFraction: 0.5,
            PfcXonFraction: 0.25,
        }
    }
}

impl IngressBufferManager {
    /// The buffer and its pools without the PFC thresholds, for the checks and pool sizes
    /// `BufferManager` shares.
    pub fn as_buffer(&self) -> BufferManager {
        BufferManager {
            BufferSize: self.BufferSize,
            PoolAllocationVector: self.PoolAllocationVector,
        }
    }
}

/// `RoceNic((...))`.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoceNicConfig {
    /// The port's rate. Default 400 Gbps (spec). The host's link must run at this rate.
    pub PortRate: Rate,
    /// Maximum segment size: payload bytes per packet. Default 4096 B (spec), from 64 B to 9000 B.
    pub Mss: Size,
    /// Header bytes per data packet: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4. Default 58 B
    /// (spec).
    pub HeaderBytes: Size,
    /// The transmit side's buffer: a pool per class holds fetched payload until it is sent; a
    /// full pool holds back fetches (backpressure, never loss).
    pub EgressBufferManager: BufferManager,
    /// The receive side's buffer: a pool per class holds received packets until their payload
    /// is written to host memory over PCIe; the NIC sends PFC when a pool passes XOFF.
    pub IngressBufferManager: IngressBufferManager,
    /// Payload a queue pair may have fetched ahead of transmission. Default 64 KiB (ours): the
    /// fetch runs ahead of the port, pipelined with transmission.
    pub FetchWindow: Size,
    /// The Responder acknowledges every N-th in-order data packet, and always a packet with
    /// AckReq (the last of each WQE). Default 0: only the last packet of each WQE (ours).
    pub AckEveryPackets: u32,
    /// Time without a completing ACK after a WQE's last packet before go-back-N resends from
    /// the first unacknowledged packet. Default 67.108864 ms: the InfiniBand local ACK timeout,
    /// 4.096 us x 2^n, at n = 14, the `timeout` perftest and most verbs examples set. It must
    /// stay above any queueing delay a lossless fabric can build up (an incast's), or a
    /// fabric that loses nothing still resends.
    pub RetransmitTimeout: Duration,
    /// Frames the port's scheduler puts into its transmit FIFO at each wake-up, back to back.
    /// A PAUSE from the switch or a new control frame takes effect after them. Default 4 (ours),
    /// from 1 to 64; 1 decides every frame at the instant the port frees.
    pub TxBurstPackets: u32,
    /// The host's PCIe link.
    pub Pcie: PcieConfig,
    /// The congestion controller of each queue pair that sends (`models::cc`), by name:
    /// `FixedRate((Rate: "100Gbps"))`. Default `None`: no congestion control (ours).
    pub CongestionControl: CcChoice,
    /// Notification point: the least time between two CNPs for one queue pair, when the
    /// controller asks for CNPs. Default 50 us, the DCQCN paper's N and ns-3's
    /// `QbbNetDevice::CNPInterval` (a ConnectX's `min_time_between_cnps` defaults to 4 us).
    pub CnpInterval: Duration,
    /// The traffic class CNPs are sent in, 0 to 7. Default 6, a ConnectX's `cnp_802p_prio`
    /// (and `cnp_dscp` 48, CS6), above the data classes.
    pub CnpClass: u8,
}

impl RoceNicConfig {
    /// Default `PortRate`, in Gbps.
    pub const DEFAULT_PORT_RATE_GBPS: u64 = 400;
    /// Default `Mss`, in bytes.
    pub const DEFAULT_MSS_BYTES: u64 = 4096;
    /// Default `HeaderBytes`, in bytes: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4.
    pub const DEFAULT_HEADER_BYTES: u64 = 58;
    /// Default `FetchWindow`, in bytes (64 KiB).
    pub const DEFAULT_FETCH_WINDOW_BYTES: u64 = 64 * 1024;
    /// The local ACK timeout's unit, 4.096 us in picoseconds (IBTA vol. 1, 9.7.6.1.3).
    pub const LOCAL_ACK_TIMEOUT_UNIT_PS: u64 = 4_096_000;
    /// The default local ACK timeout exponent n (timeout = 4.096 us x 2^n).
    pub const DEFAULT_LOCAL_ACK_TIMEOUT_EXPONENT: u32 = 14;
    /// Default `TxBurstPackets`, in frames per wake-up.
    pub const DEFAULT_TX_BURST_PACKETS: u32 = 4;
    /// Default `CnpInterval`, in microseconds.
    pub const DEFAULT_CNP_INTERVAL_US: u64 = 50;
    /// Default `CnpClass`, a traffic class (0-7).
    pub const DEFAULT_CNP_CLASS: u8 = 6;

    /// Checks what serde's types cannot; the field is relative to `nic`.
    pub fn validate(&self) -> Result<(), FieldError> {
        let fail = |field: &str, message: String| Err(FieldError::new(field, message));
        if !(64..=9000).contains(&self.Mss.0) {
            return fail("Mss", format!("must be from 64 B to 9000 B, got {}", self.Mss));
        }
        if self.HeaderBytes.0 > 256 {
            return fail(
                "HeaderBytes",
                format!("must be at most 256 B, got {}", self.HeaderBytes),
            );
        }
        let (egress, ingress) = (&self.EgressBufferManager, self.IngressBufferManager.as_buffer());
        egress.validate().map_err(|e| e.under("EgressBufferManager"))?;
        ingress.validate().map_err(|e| e.under("IngressBufferManager"))?;
        let (xoff, xon) = (
            self.IngressBufferManager.PfcXoffFraction,
            self.IngressBufferManager.PfcXonFraction,
        );
        if !(0.0..=1.0).contains(&xoff) {
            return fail(
                "IngressBufferManager.PfcXoffFraction",
                format!("must be from 0 to 1, got {xoff}"),
            );
        }
        if !(0.0..=1.0).contains(&xon) || xon >= xoff {
            return fail(
                "IngressBufferManager.PfcXonFraction",
                format!("need 0 <= PfcXonFraction < PfcXoffFraction <= 1, got {xon} and {xoff}"),
            );
        }
        // A share above 0 that leaves a pool too small for one packet is an error, not a
        // silently missing pool, even when it rounds down to 0 B.
        let frame = self.Mss.0 + self.HeaderBytes.0;
        for (c, &pool) in egress.pools().iter().enumerate() {
            if egress.PoolAllocationVector[c] > 0.0 && pool < self.Mss.0 {
                return fail(
                    &format!("EgressBufferManager.PoolAllocationVector[{c}]"),
                    format!(
                        "the pool of class {c} ({pool} B) cannot hold one packet's payload ({} B)",
                        self.Mss.0
                    ),
                );
            }
        }
        for (c, &pool) in ingress.pools().iter().enumerate() {
            if ingress.PoolAllocationVector[c] > 0.0 && (pool as f64 * (1.0 - xoff)) < 2.0 * frame as f64 {
                return fail(
                    &format!("IngressBufferManager.PoolAllocationVector[{c}]"),
                    format!(
                        "the pool of class {c} ({pool} B) leaves less than two packets ({frame} B each) of headroom above XOFF"
                    ),
                );
            }
        }
        if self.FetchWindow.0 < self.Mss.0 {
            return fail(
                "FetchWindow",
                format!("must be at least one Mss ({}), got {}", self.Mss, self.FetchWindow),
            );
        }
        if !(1..=64).contains(&self.TxBurstPackets) {
            return fail(
                "TxBurstPackets",
                format!("must be from 1 to 64, got {}", self.TxBurstPackets),
            );
        }
        if self.RetransmitTimeout.0 == SimTime::ZERO {
            return fail("RetransmitTimeout", "must be greater than 0".into());
        }
        if self.CnpClass > 7 {
            return fail(
                "CnpClass",
                format!("must be a class from 0 to 7, got {}", self.CnpClass),
            );
        }
        self.CongestionControl
            .validate()
            .map_err(|e| e.under("CongestionControl"))?;
        self.Pcie.validate().map_err(|e| e.under("Pcie"))
    }
}

impl Default for RoceNicConfig {
    fn default() -> Self {
        RoceNicConfig {
            PortRate: Rate::gbps(Self::DEFAULT_PORT_RATE_GBPS),
            Mss: Size(Self::DEFAULT_MSS_BYTES),
            HeaderBytes: Size(Self::DEFAULT_HEADER_BYTES),
            EgressBufferManager: BufferManager::default(),
            IngressBufferManager: IngressBufferManager::default(),
            FetchWindow: Size(Self::DEFAULT_FETCH_WINDOW_BYTES),
            AckEveryPackets: 0,
            RetransmitTimeout: Duration(SimTime(
                Self::LOCAL_ACK_TIMEOUT_UNIT_PS << Self::DEFAULT_LOCAL_ACK_TIMEOUT_EXPONENT,
            )),
            TxBurstPackets: Self::DEFAULT_TX_BURST_PACKETS,
            Pcie: PcieConfig::default(),
            CongestionControl: CcChoice::default(),
            CnpInterval: Duration(SimTime::from_us(Self::DEFAULT_CNP_INTERVAL_US)),
            CnpClass: Self::DEFAULT_CNP_CLASS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_ron() {
        let c: RoceNicConfig = ron::from_str("(PortRate: \"100Gbps\", Mss: \"1KiB\")").unwrap();
        assert_eq!(c.PortRate, Rate::gbps(100));
        assert_eq!(c.Mss, Size(1024));
        assert_eq!(c.HeaderBytes, Size(58));
        assert_eq!(
            c.EgressBufferManager.has_pool(),
            [true, true, false, false, false, false, false, false]
        );
        assert!(c.validate().is_ok());
        assert!(
            ron::from_str::<RoceNicConfig>("(Mtu: 1)")
                .unwrap_err()
                .to_string()
                .contains("Mtu")
        );
    }

    #[test]
    fn impossible_ratios_are_rejected() {
        let mut c = RoceNicConfig::default();
        c.EgressBufferManager.PoolAllocationVector = [0.7, 0.7, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        assert!(c.validate().unwrap_err().to_string().contains("adds up to 1.4"));
        let mut c = RoceNicConfig::default();
        c.IngressBufferManager.PoolAllocationVector[3] = -0.1;
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("PoolAllocationVector[3]")
        );
        let mut c = RoceNicConfig::default();
        c.IngressBufferManager.PfcXonFraction = 0.9;
        assert!(c.validate().unwrap_err().to_string().contains("PfcXonFraction"));
    }
}
