//! The Scala RoCE NIC on small stars, against figures derived from first principles: the spec's
//! worked example, one WQE's completion time term by term, one WQE of a connection on the wire
//! at a time, PFC from a slow receiver, go-back-N after a loss, and the configuration checks.
//! One test binary; the driver application is the test kit's (`testkit::nic_contract::driver`), on
//! a star with this NIC (`tests/common`).
//!
//! Notation in the comments: `s(b)` is the serialization time of `b` bytes at the 400 Gbps port
//! (20 ps a byte), `p(b)` at the PCIe rate, `L` the PCIe latency, `D` the link delay (1 us), `F`
//! the switch's forwarding latency (500 ns). The full data frame is 4,096 + 58 = 4,154 B.

#[path = "../common/mod.rs"]
mod common;

mod config;
mod go_back_n;
mod ordering;
mod pfc;
mod traces;
mod worked_example;

use engine::prelude::*;
use models::fabric::SwitchConfig;
use models::pcie::PcieConfig;
use roce_nic::RoceNicConfig;

/// The default figures, spelled out: the times every test derives its expectations from.
pub struct Figures {
    /// The port's rate (`PortRate`).
    pub port: Rate,
    /// The host's PCIe link (`Pcie`).
    pub pcie: PcieConfig,
    /// Payload bytes per full packet (`Mss`).
    pub mss: u64,
    /// Header bytes per data packet (`HeaderBytes`).
    pub header: u64,
    /// Link delay.
    pub d: SimTime,
    /// Switch forwarding latency.
    pub f: SimTime,
}

impl Figures {
    /// The figures of a NIC and a switch configuration, with the test stars' link delay.
    pub fn of(nic: &RoceNicConfig, switch: &SwitchConfig) -> Self {
        Figures {
            port: nic.PortRate,
            pcie: nic.Pcie.clone(),
            mss: nic.Mss.0,
            header: nic.HeaderBytes.0,
            d: common::DELAY,
            f: switch.ForwardingLatency.0,
        }
    }
    /// The figures at the default NIC and switch configurations.
    pub fn defaults() -> Self {
        Self::of(&RoceNicConfig::default(), &SwitchConfig::default())
    }
    /// `s(b)`: serialization at the port (and every link of the test stars).
    pub fn s(&self, bytes: u64) -> SimTime {
        self.port.serialization_time(bytes)
    }
    /// `p(b)`: serialization on one PCIe direction.
    pub fn p(&self, bytes: u64) -> SimTime {
        self.pcie.Rate.serialization_time(bytes)
    }
    /// `L`: the PCIe latency, one way.
    pub fn l(&self) -> SimTime {
        self.pcie.Latency.0
    }
    /// Bytes a PCIe transfer of `payload` bytes occupies in TLPs of at most `tlp` bytes.
    pub fn tlp_bytes(&self, payload: u64, tlp: u64) -> u64 {
        payload + payload.div_ceil(tlp).max(1) * self.pcie.TlpOverheadBytes.0
    }
    /// The doorbell: 92 B in one TLP host to NIC, then the latency.
    pub fn doorbell(&self) -> SimTime {
        let bytes = common::DOORBELL_PAYLOAD_BYTES + common::DOORBELL_HEADER_BYTES;
        self.p(self.tlp_bytes(bytes, self.pcie.MaxPayloadSize.0)) + self.l()
    }
    /// The DMA read of one packet's `payload` on an idle link: read requests (TLP headers only,
    /// one per `MaxReadRequestSize`) NIC to host, latency, completions (one TLP per
    /// `MaxPayloadSize`) host to NIC, latency.
    pub fn fetch(&self, payload: u64) -> SimTime {
        let requests = payload.div_ceil(self.pcie.MaxReadRequestSize.0).max(1);
        self.p(requests * self.pcie.TlpOverheadBytes.0)
            + self.l()
            + self.p(self.tlp_bytes(payload, self.pcie.MaxPayloadSize.0))
            + self.l()
    }
    /// Payload of each packet of a WQE of `bytes`.
    pub fn payloads(&self, bytes: u64) -> Vec<u64> {
        let n = bytes.div_ceil(self.mss).max(1);
        (0..n).map(|i| (bytes - i * self.mss).min(self.mss)).collect()
    }
    /// Serialization of every frame of a WQE of `bytes` at the port.
    pub fn wqe_serialization(&self, bytes: u64) -> SimTime {
        let wire: u64 = self.payloads(bytes).iter().map(|p| p + self.header).sum();
        self.s(wire)
    }
    /// From the first bit of a WQE's first packet at the Initiator's port to the last bit of its
    /// last packet at the Responder's, across the star when nothing else is queued and the
    /// fetch keeps up. The switch receives the first frame whole (`s(first)`), holds it `F`
    /// after `D`, and from then on its egress port is never idle: each later frame arrives (at
    /// the same rate) just as the one before it leaves, and the short last frame arrives while
    /// the one before it is still being sent, so it waits for it. The egress port thus sends
    /// the whole WQE back to back: `s(first) + D + F + s(all frames) + D`.
    pub fn network(&self, bytes: u64) -> SimTime {
        let first = self.payloads(bytes)[0] + self.header;
        self.s(first) + self.d + self.f + self.wqe_serialization(bytes) + self.d
    }
    /// A control frame of `bytes` from one host to another across the idle star.
    pub fn across(&self, bytes: u64) -> SimTime {
        self.s(bytes) + self.d + self.f + self.s(bytes) + self.d
    }
}
