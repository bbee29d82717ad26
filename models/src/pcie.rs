//! The PCIe link between a host's memory and its NIC: each direction a FIFO serializer with a
//! rate and a latency, transfers cut into TLPs of at most `MaxPayloadSize` bytes, each TLP adding
//! `TlpOverheadBytes` (header, sequence number, LCRC, framing). Nothing else shares a host's PCIe
//! link, so a transfer's finish time is known when it is issued: the direction keeps only the
//! time it is busy until, and costs no events.

use bevy_ecs::prelude::*;
use engine::prelude::*;
use serde::{Deserialize, Serialize};

/// PCIe settings, the same for every host. Defaults are ours (PCIe Gen5 x16 class): 32 GT/s x
/// 16 lanes x 128/130 encoding = 504 Gbps per direction.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Resource)]
#[serde(deny_unknown_fields, default)]
pub struct PcieConfig {
    /// Raw rate of each direction. Default 504 Gbps (Gen5 x16 after 128b/130b encoding).
    pub Rate: Rate,
    /// One-way latency (PHY, controller and root complex). Default 250 ns.
    pub Latency: Duration,
    /// Largest TLP payload (MPS). Default 256 B.
    pub MaxPayloadSize: Size,
    /// Largest read a request TLP asks for (MRRS). Default 512 B.
    pub MaxReadRequestSize: Size,
    /// Bytes each TLP adds: 16 B header, 2 B sequence, 4 B LCRC, 2 B framing. Default 24 B.
    pub TlpOverheadBytes: Size,
}

impl PcieConfig {
    pub const DEFAULT_RATE_BPS: u64 = 504_000_000_000;
    pub const DEFAULT_LATENCY_NS: u64 = 250;
    pub const DEFAULT_MAX_PAYLOAD_BYTES: u64 = 256;
    pub const DEFAULT_MAX_READ_REQUEST_BYTES: u64 = 512;
    pub const DEFAULT_TLP_OVERHEAD_BYTES: u64 = 24;

    pub fn validate(&self) -> Result<(), String> {
        if self.MaxPayloadSize.0 == 0 || self.MaxPayloadSize.0 > 4096 {
            return Err("pcie.MaxPayloadSize must be from 1 B to 4096 B".into());
        }
        if self.MaxReadRequestSize.0 == 0 || self.MaxReadRequestSize.0 > 4096 {
            return Err("pcie.MaxReadRequestSize must be from 1 B to 4096 B".into());
        }
        Ok(())
    }
}

impl Default for PcieConfig {
    fn default() -> Self {
        PcieConfig {
            Rate: Rate(Self::DEFAULT_RATE_BPS),
            Latency: Duration::from_ns(Self::DEFAULT_LATENCY_NS),
            MaxPayloadSize: Size(Self::DEFAULT_MAX_PAYLOAD_BYTES),
            MaxReadRequestSize: Size(Self::DEFAULT_MAX_READ_REQUEST_BYTES),
            TlpOverheadBytes: Size(Self::DEFAULT_TLP_OVERHEAD_BYTES),
        }
    }
}

/// One direction of a PCIe link.
#[derive(Clone, Debug, Default)]
pub struct PcieDirection {
    pub busy_until: SimTime,
    /// Payload bytes carried (what the transfers asked for).
    pub bytes: u64,
    /// TLP overhead bytes carried on top.
    pub overhead_bytes: u64,
    pub transfers: u64,
    /// The last transfer shape and its cost: nearly every transfer of a run has the shape of the
    /// one before (a full packet's payload), and working it out takes two divisions.
    memo: (Shape, u64, SimTime),
}

/// What a transfer's TLP overhead and serialization time depend on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Shape {
    payload: u64,
    /// Bytes per TLP (MPS for data, MRRS for read requests).
    chunk: u64,
    /// Whether the TLPs carry the payload (data) or only ask for it (read requests).
    carried: bool,
    rate: u64,
    tlp_overhead: u64,
}

impl PcieDirection {
    /// TLP overhead bytes and serialization time of `payload` bytes in TLPs of `chunk` bytes,
    /// carried or (read requests) only asked for.
    #[inline]
    fn cost(&mut self, cfg: &PcieConfig, payload: u64, chunk: u64, carried: bool) -> (u64, SimTime) {
        let shape = Shape {
            payload,
            chunk,
            carried,
            rate: cfg.Rate.0,
            tlp_overhead: cfg.TlpOverheadBytes.0,
        };
        if self.memo.0 != shape {
            let overhead = payload.div_ceil(chunk).max(1) * cfg.TlpOverheadBytes.0;
            let wire = if carried { payload + overhead } else { overhead };
            self.memo = (shape, overhead, cfg.Rate.serialization_time(wire));
        }
        (self.memo.1, self.memo.2)
    }

    /// A transfer of `payload` bytes in TLPs of at most `tlp_payload` bytes, issued at `now`.
    /// Returns when its last byte is delivered at the far end.
    #[inline]
    pub fn transfer(&mut self, cfg: &PcieConfig, now: SimTime, payload: u64, tlp_payload: u64) -> SimTime {
        let (overhead, ser) = self.cost(cfg, payload, tlp_payload, true);
        let begin = now.max(self.busy_until);
        let end = begin + ser;
        self.busy_until = end;
        self.bytes += payload;
        self.overhead_bytes += overhead;
        self.transfers += 1;
        end + cfg.Latency.0
    }

    /// Read requests for `payload` bytes (TLP headers only, one per `MaxReadRequestSize`),
    /// issued at `now`; returns when the last reaches the far end.
    #[inline]
    fn request(&mut self, cfg: &PcieConfig, now: SimTime, payload: u64) -> SimTime {
        let (overhead, ser) = self.cost(cfg, payload, cfg.MaxReadRequestSize.0, false);
        let begin = now.max(self.busy_until);
        let end = begin + ser;
        self.busy_until = end;
        self.overhead_bytes += overhead;
        self.transfers += 1;
        end + cfg.Latency.0
    }
}

/// A host's PCIe link, an entity of its own.
#[derive(Component, Debug, Default)]
pub struct PcieLink {
    pub host: u32,
    /// Host memory to NIC: doorbells, DMA read data.
    pub host_to_nic: PcieDirection,
    /// NIC to host memory: DMA read requests, received payload writes.
    pub nic_to_host: PcieDirection,
}

impl PcieLink {
    /// A write of `bytes` from host to NIC (a doorbell), issued at `now`; returns its arrival.
    pub fn host_write(&mut self, cfg: &PcieConfig, now: SimTime, bytes: u64) -> SimTime {
        self.host_to_nic.transfer(cfg, now, bytes, cfg.MaxPayloadSize.0)
    }

    /// A DMA read of `bytes` by the NIC at `now`: read requests (TLP headers only, one per
    /// `MaxReadRequestSize`) go NIC to host, then completions with the data come back host to
    /// NIC. Returns when the last byte is at the NIC.
    pub fn dma_read(&mut self, cfg: &PcieConfig, now: SimTime, bytes: u64) -> SimTime {
        let req_at_host = self.nic_to_host.request(cfg, now, bytes);
        self.host_to_nic.transfer(cfg, req_at_host, bytes, cfg.MaxPayloadSize.0)
    }

    /// A DMA write of `bytes` from the NIC into host memory at `now`; returns when it is done.
    pub fn dma_write(&mut self, cfg: &PcieConfig, now: SimTime, bytes: u64) -> SimTime {
        self.nic_to_host.transfer(cfg, now, bytes, cfg.MaxPayloadSize.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doorbell_is_92_bytes_plus_one_tlp() {
        let cfg = PcieConfig::default();
        let mut link = PcieLink::default();
        let at = link.host_write(&cfg, SimTime::ZERO, 92);
        assert_eq!(link.host_to_nic.bytes, 92);
        assert_eq!(link.host_to_nic.overhead_bytes, 24);
        // (92 + 24) B x 8 / 504 Gbps, rounded up to the picosecond, plus 250 ns.
        let ser = (116u64 * 8 * 1_000_000_000_000).div_ceil(504_000_000_000);
        assert_eq!(at, SimTime(ser + 250_000));
    }

    #[test]
    fn dma_read_pays_requests_then_completions() {
        let cfg = PcieConfig::default();
        let mut link = PcieLink::default();
        let at = link.dma_read(&cfg, SimTime::ZERO, 4096);
        // 8 read requests of 24 B; 16 completions of 256 B + 24 B.
        assert_eq!(link.nic_to_host.overhead_bytes, 8 * 24);
        assert_eq!(link.host_to_nic.bytes, 4096);
        assert_eq!(link.host_to_nic.overhead_bytes, 16 * 24);
        let req = cfg.Rate.serialization_time(192).0 + 250_000;
        let data = cfg.Rate.serialization_time(4096 + 384).0 + 250_000;
        assert_eq!(at, SimTime(req + data));
    }

    #[test]
    fn the_memo_never_changes_a_cost() {
        // One direction used with alternating payloads, chunks, kinds and settings gives what a
        // fresh direction works out for each.
        let fast = PcieConfig {
            Rate: Rate(1_000_000_000_000),
            TlpOverheadBytes: Size(20),
            ..PcieConfig::default()
        };
        let cfgs = [PcieConfig::default(), fast];
        let mut long_lived = PcieDirection::default();
        for i in 0..200u64 {
            let cfg = &cfgs[(i / 7 % 2) as usize];
            let payload = [4096, 4096, 100, 0, 4096, 1][(i % 6) as usize];
            let chunk = [256, 512][(i / 3 % 2) as usize];
            let carried = i % 5 != 0;
            let got = long_lived.cost(cfg, payload, chunk, carried);
            let want = PcieDirection::default().cost(cfg, payload, chunk, carried);
            let overhead = payload.div_ceil(chunk).max(1) * cfg.TlpOverheadBytes.0;
            let wire = if carried { payload + overhead } else { overhead };
            assert_eq!(got, want, "transfer {i}");
            assert_eq!(got, (overhead, cfg.Rate.serialization_time(wire)), "transfer {i}");
        }
    }
}
