//! The tracer: takes the NICs' trace events, keeps the frames the filters choose, and writes them
//! in time order. A frame's timestamp is when its first bit left a port, which is up to a link
//! delay and a frame's serialization before the event that reports it (a frame reaching a host),
//! or a burst after it (a frame queued behind others): frames wait in a heap until no later event
//! can report an earlier one, so the capture is sorted by time.

use crate::{CaptureConfig, CaptureError, CaptureStats, Direction};
use engine::SimTime;
use engine::units::Rate;
use models::Packet;
use models::trace::{TraceEvent, TracePoint, Tracer};
use models::wire::PcapWriter;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::BufWriter;
use std::sync::{Arc, Mutex};

/// The largest frame a port can report (an IPv4 packet of 65,535 bytes in Ethernet), in bytes:
/// it bounds how long before its event a received frame left the far port.
pub(crate) const LARGEST_FRAME_BYTES: u64 = 65_535 + 14;

/// A host's link, as the capture needs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostLink {
    /// The link's rate (the NIC's port rate).
    pub rate: Rate,
    /// Its one-way delay into the host.
    pub delay: SimTime,
    /// The switch port facing the host is chosen: what reaches the host is captured.
    pub tapped: bool,
}

/// One host's port: whether it is captured, and when its serializer frees (the NIC's own
/// `busy_until`, mirrored from the frames it sends, since an ACK's event does not carry it).
struct Port {
    link: HostLink,
    chosen: bool,
    busy_until: SimTime,
}

/// A frame waiting for its turn: ordered by time, then by arrival at the tracer.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Waiting {
    time: SimTime,
    seq: u64,
    packet: PacketBytes,
}

/// A packet in the heap (ordering only ever looks at time and sequence first, which are unique).
#[derive(PartialEq, Eq)]
struct PacketBytes(Packet);

impl PartialOrd for PacketBytes {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PacketBytes {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

/// The capture's state, shared by the tracer (in the run) and the handle (after it).
pub(crate) struct Capture {
    config: CaptureConfig,
    ports: Vec<Port>,
    horizon: SimTime,
    heap: BinaryHeap<Reverse<Waiting>>,
    seq: u64,
    writer: Option<PcapWriter<BufWriter<File>>>,
    stats: CaptureStats,
    error: Option<std::io::Error>,
}

impl Capture {
    /// `switch_horizon`: how long after it left a frame between switches can be reported.
    pub(crate) fn new(
        config: CaptureConfig,
        links: Vec<HostLink>,
        switch_horizon: SimTime,
        file: File,
    ) -> std::io::Result<Self> {
        let writer = PcapWriter::new(BufWriter::with_capacity(1 << 20, file))?;
        let horizon = links
            .iter()
            .map(|l| l.delay + l.rate.serialization_time(LARGEST_FRAME_BYTES))
            .max()
            .unwrap_or(SimTime::ZERO)
            .max(switch_horizon);
        let ports = links
            .into_iter()
            .enumerate()
            .map(|(h, link)| Port {
                link,
                chosen: config.hosts.as_ref().is_none_or(|hs| hs.contains(&(h as u32))),
                busy_until: SimTime::ZERO,
            })
            .collect();
        Ok(Self {
            config,
            ports,
            horizon,
            heap: BinaryHeap::new(),
            seq: 0,
            writer: Some(writer),
            stats: CaptureStats::default(),
            error: None,
        })
    }

    fn full(&self) -> bool {
        self.stats.frames >= self.config.max_packets || self.error.is_some()
    }

    fn record(&mut self, e: &TraceEvent) {
        if self.full() {
            return;
        }
        let Some(pkt) = e.packet else { return };
        if e.point == TracePoint::SwitchSent {
            // The fabric reports only tapped ports, stamped with when the frame left.
            self.keep(e.time, pkt);
            self.write_until(e.time.saturating_sub(self.horizon));
            return;
        }
        let Some(port) = self.ports.get_mut(e.node as usize) else {
            return;
        };
        let left_at = match e.point {
            TracePoint::PacketSent | TracePoint::PfcSent => {
                // Data and PFC frames carry their send time; an ACK carries its data's arrival,
                // so its send time is the mirrored serializer's.
                let at = match pkt.kind {
                    models::PacketKind::Ack | models::PacketKind::Nak => e.time.max(port.busy_until),
                    _ => pkt.sent_at,
                };
                port.busy_until = at + port.link.rate.serialization_time(u64::from(pkt.bytes));
                if !(port.chosen && self.config.direction.tx()) {
                    return;
                }
                at
            }
            TracePoint::PacketReceived | TracePoint::PfcReceived => {
                if !(port.chosen && self.config.direction.rx() || port.link.tapped) {
                    return;
                }
                // The first bit left the far port a delay and a serialization before the last
                // bit arrived.
                e.time
                    .saturating_sub(port.link.delay)
                    .saturating_sub(port.link.rate.serialization_time(u64::from(pkt.bytes)))
            }
            _ => return,
        };
        self.keep(left_at, pkt);
        self.write_until(e.time.saturating_sub(self.horizon));
    }

    /// Keeps a frame that left at `left_at`, if in the window, until its turn.
    fn keep(&mut self, left_at: SimTime, pkt: Packet) {
        if left_at >= self.config.from && left_at < self.config.until {
            self.seq += 1;
            self.heap.push(Reverse(Waiting {
                time: left_at,
                seq: self.seq,
                packet: PacketBytes(pkt),
            }));
        }
    }

    /// Writes every waiting frame that left before `t` (no later event can report one earlier).
    fn write_until(&mut self, t: SimTime) {
        while let Some(Reverse(w)) = self.heap.peek() {
            if w.time >= t || self.full() {
                break;
            }
            let Some(Reverse(w)) = self.heap.pop() else { break };
            let Some(bytes) = crate::frame::frame_bytes(&w.packet.0) else {
                continue;
            };
            let Some(writer) = self.writer.as_mut() else { break };
            match writer.write_packet(w.time, &bytes) {
                Ok(()) => {
                    self.stats.frames += 1;
                    self.stats.bytes += bytes.len() as u64;
                }
                Err(e) => self.error = Some(e),
            }
        }
    }

    /// Writes what still waits and flushes the file.
    pub(crate) fn finish(&mut self) -> Result<CaptureStats, CaptureError> {
        self.write_until(SimTime::MAX);
        self.stats.capped = self.stats.frames >= self.config.max_packets;
        self.heap.clear();
        let path = self.config.path.clone();
        if let Some(e) = self.error.take() {
            return Err(CaptureError::Write { path, source: e });
        }
        if let Some(mut w) = self.writer.take() {
            w.flush().map_err(|source| CaptureError::Write { path, source })?;
        }
        Ok(self.stats)
    }
}

/// The subscriber the NICs' `Tracers` hold.
pub(crate) struct PcapTracer(pub Arc<Mutex<Capture>>);

impl Tracer for PcapTracer {
    fn record(&mut self, event: &TraceEvent) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).record(event);
    }
}

impl Direction {
    fn tx(self) -> bool {
        matches!(self, Direction::Tx | Direction::Both)
    }
    fn rx(self) -> bool {
        matches!(self, Direction::Rx | Direction::Both)
    }
}
