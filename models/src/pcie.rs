//! The PCIe link between a host's memory and its NIC: each direction a serializer with a rate
//! and a latency, transfers cut into TLPs of at most `MaxPayloadSize` bytes, each TLP adding
//! `TlpOverheadBytes` (header, sequence number, LCRC, framing). Nothing else shares a host's PCIe
//! link, so a transfer's finish time is known when it is issued and costs no events. A DMA read's
//! data is reserved when the read is issued, for a time in the future (after its requests reach
//! the host), so a direction keeps its reserved busy intervals and serves a transfer from its
//! ready time if the link is idle then: a doorbell is not delayed by data that will be ready
//! later (see `PcieDirection::place`).

use bevy_ecs::prelude::*;
use engine::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

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
    /// Default `Rate`, in bits per second: 504 Gbps.
    pub const DEFAULT_RATE_BPS: u64 = 504_000_000_000;
    /// Default `Latency`, in nanoseconds.
    pub const DEFAULT_LATENCY_NS: u64 = 250;
    /// Default `MaxPayloadSize`, in bytes.
    pub const DEFAULT_MAX_PAYLOAD_BYTES: u64 = 256;
    /// Default `MaxReadRequestSize`, in bytes.
    pub const DEFAULT_MAX_READ_REQUEST_BYTES: u64 = 512;
    /// Default `TlpOverheadBytes`, in bytes.
    pub const DEFAULT_TLP_OVERHEAD_BYTES: u64 = 24;

    /// Checks what serde's types cannot; the field is relative to the PCIe settings.
    pub fn validate(&self) -> Result<(), engine::scenario::FieldError> {
        let tlp = |field: &str, size: Size| {
            (size.0 == 0 || size.0 > 4096)
                .then(|| engine::scenario::FieldError::new(field, format!("must be from 1 B to 4096 B, got {size}")))
        };
        match tlp("MaxPayloadSize", self.MaxPayloadSize).or(tlp("MaxReadRequestSize", self.MaxReadRequestSize)) {
            Some(e) => Err(e),
            None => Ok(()),
        }
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
    /// End of the last reservation: the direction is idle from here on.
    pub busy_until: SimTime,
    /// Start of the busy block that ends at `busy_until` (reservations back to back).
    last_start: SimTime,
    /// Earlier busy blocks still to end, as (start, end), sorted, with idle gaps between them and
    /// before `last_start`: only transfers placed in the future (DMA read data) leave such gaps.
    earlier: VecDeque<(SimTime, SimTime)>,
    /// Payload bytes carried (what the transfers asked for).
    pub bytes: u64,
    /// TLP overhead bytes carried on top.
    pub overhead_bytes: u64,
    /// Transfers placed: data transfers and DMA read requests, one per call however many TLPs.
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

    /// A transfer of `payload` bytes in TLPs of at most `tlp_payload` bytes, ready to go at
    /// `ready` (at or after `now`, the time it is issued). Returns when its last byte is
    /// delivered at the far end.
    #[inline]
    pub fn transfer(
        &mut self,
        cfg: &PcieConfig,
        now: SimTime,
        ready: SimTime,
        payload: u64,
        tlp_payload: u64,
    ) -> SimTime {
        let (overhead, ser) = self.cost(cfg, payload, tlp_payload, true);
        let end = self.place(now, ready, ser) + ser;
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
        let end = self.place(now, now, ser) + ser;
        self.overhead_bytes += overhead;
        self.transfers += 1;
        end + cfg.Latency.0
    }

    /// Most busy blocks a direction remembers before `earlier`: past it the earliest gap is given
    /// up (counted busy), which delays no promise. Runs keep a handful (a DMA read's data is
    /// reserved at most a few hundred nanoseconds ahead); this only bounds a pathological case.
    pub const MAX_BLOCKS: usize = 64;

    /// Reserves `ser` of link time for a transfer ready at `ready` (issued at `now`) and returns
    /// its start: the earliest idle gap at or after `ready` that holds it whole, else the end of
    /// the last reservation. Times already promised never move, and transfers of one size issued
    /// in the order they are ready go in that order.
    #[inline]
    fn place(&mut self, now: SimTime, ready: SimTime, ser: SimTime) -> SimTime {
        debug_assert!(ready >= now, "a transfer is ready no earlier than it is issued");
        // Nearly always: the link is idle from `ready` on, or busy back to back up to it.
        if ready >= self.busy_until {
            if ready > self.busy_until {
                self.open_block(now, ready);
            }
            self.busy_until = ready + ser;
            return ready;
        }
        // A backlog (a burst of fetches): no gap from `ready` to the end, so it goes at the end.
        if ready >= self.last_start {
            let begin = self.busy_until;
            self.busy_until = begin + ser;
            return begin;
        }
        self.place_before_end(now, ready, ser)
    }

    /// A new busy block starts at `ready`, after an idle gap: the last block is remembered while
    /// it has not ended by `now`, as a later transfer may fit in the gap after it.
    #[inline]
    fn open_block(&mut self, now: SimTime, ready: SimTime) {
        if self.busy_until > now {
            self.prune(now);
            self.earlier.push_back((self.last_start, self.busy_until));
            self.bound();
        } else if !self.earlier.is_empty() {
            // Everything reserved has ended.
            self.earlier.clear();
        }
        self.last_start = ready;
    }

    /// Forgets the blocks that ended by `now`: every later transfer is ready at or after it.
    #[inline]
    fn prune(&mut self, now: SimTime) {
        while self.earlier.front().is_some_and(|b| b.1 <= now) {
            self.earlier.pop_front();
        }
    }

    /// Keeps `earlier` at `MAX_BLOCKS`, filling its first gap.
    #[inline]
    fn bound(&mut self) {
        if self.earlier.len() > Self::MAX_BLOCKS {
            let (start, _) = self.earlier.pop_front().expect("more than MAX_BLOCKS");
            self.earlier[0].0 = start;
        }
    }

    /// `place` when `ready` is before the end of the last reservation: a scan of the gaps.
    #[inline(never)]
    fn place_before_end(&mut self, now: SimTime, ready: SimTime, ser: SimTime) -> SimTime {
        self.prune(now);
        let n = self.earlier.len();
        // Gap i is between block i - 1 (or nothing) and block i (`last_start` for i = n).
        let mut prev_end = SimTime::ZERO;
        for i in 0..=n {
            let next_start = if i < n { self.earlier[i].0 } else { self.last_start };
            let begin = ready.max(prev_end);
            if begin + ser <= next_start {
                self.fill_gap(i, begin, begin + ser, prev_end == begin, begin + ser == next_start);
                return begin;
            }
            if i < n {
                prev_end = self.earlier[i].1;
            }
        }
        let begin = self.busy_until;
        self.busy_until = begin + ser;
        begin
    }

    /// Reserves [`begin`, `end`) in gap `i` (see `place_before_end`), merged with the block
    /// before it when `after_prev` and with the block after it when `before_next`.
    fn fill_gap(&mut self, i: usize, begin: SimTime, end: SimTime, after_prev: bool, before_next: bool) {
        let n = self.earlier.len();
        // With no block before gap 0, `after_prev` can only be a coincidence of time zero.
        let after_prev = after_prev && i > 0;
        match (after_prev, before_next) {
            (true, true) if i < n => {
                self.earlier[i - 1].1 = self.earlier[i].1;
                self.earlier.remove(i);
            }
            (true, true) => {
                self.last_start = self.earlier[i - 1].0;
                self.earlier.pop_back();
            }
            (true, false) => self.earlier[i - 1].1 = end,
            (false, true) if i < n => self.earlier[i].0 = begin,
            (false, true) => self.last_start = begin,
            (false, false) => {
                self.earlier.insert(i, (begin, end));
                self.bound();
            }
        }
    }
}

/// A host's PCIe link, in its `HostPort`.
#[derive(Debug, Default)]
pub struct PcieLink {
    /// The host (node index) whose link this is.
    pub host: u32,
    /// Host memory to NIC: doorbells, DMA read data.
    pub host_to_nic: PcieDirection,
    /// NIC to host memory: DMA read requests, received payload writes.
    pub nic_to_host: PcieDirection,
}

impl PcieLink {
    /// A write of `bytes` from host to NIC (a doorbell), issued at `now`; returns its arrival.
    pub fn host_write(&mut self, cfg: &PcieConfig, now: SimTime, bytes: u64) -> SimTime {
        self.host_to_nic.transfer(cfg, now, now, bytes, cfg.MaxPayloadSize.0)
    }

    /// A DMA read of `bytes` by the NIC at `now`: read requests (TLP headers only, one per
    /// `MaxReadRequestSize`) go NIC to host, then completions with the data come back host to
    /// NIC. Returns when the last byte is at the NIC.
    pub fn dma_read(&mut self, cfg: &PcieConfig, now: SimTime, bytes: u64) -> SimTime {
        let req_at_host = self.nic_to_host.request(cfg, now, bytes);
        self.host_to_nic
            .transfer(cfg, now, req_at_host, bytes, cfg.MaxPayloadSize.0)
    }

    /// A DMA write of `bytes` from the NIC into host memory at `now`; returns when it is done.
    pub fn dma_write(&mut self, cfg: &PcieConfig, now: SimTime, bytes: u64) -> SimTime {
        self.nic_to_host.transfer(cfg, now, now, bytes, cfg.MaxPayloadSize.0)
    }
}

#[cfg(test)]
mod tests;
