//! The switch model: output-queued with a shared buffer, eight classes per egress port, PFC per
//! ingress port and class, drop-tail on lossy classes and RED ECN marking.
//!
//! A packet that arrives is routed (shortest path, ECMP by its flow hash and the switch's salt)
//! and admitted into its class queue at the egress port. Its bytes count against the shared
//! buffer and against the PFC counter of the ingress port and class it came in on until it
//! leaves. A lossless class is never dropped by design: when an ingress counter passes `PfcXoff`
//! the switch sends a real PAUSE frame upstream, and the headroom above XOFF absorbs what was
//! already on its way; when the counter falls to `PfcXon` it sends RESUME. The buffer is split so
//! that this holds whatever lossy traffic does: lossless classes have a reservation of ports x
//! lossless classes x (XOFF + headroom), lossy classes share the rest, each egress queue also
//! capped at `LossyQueueLimit` (drop-tail). PFC frames a switch receives pause a class of the
//! egress port they arrive on.
//!
//! This module holds the state (`Switch`, a row of the fabric's `Store<Switch>`) and the
//! decisions; `logic` is the glue that runs them from the fabric's events (the switch contract,
//! `models::switch::SwitchModel`); `port` is an egress port and its schedulers.

mod logic;
mod model;
mod port;
mod warm;

pub use crate::switch::{SwitchCounters, send_pfc_data};
pub use logic::{on_send_pfc, on_tx, receive};

use super::conservation::DropCause;
use super::link::LinkDirection;
use super::switch_config::{EcnConfig, Scheduler, SwitchConfig};
use crate::packet::{Packet, PacketKind, ecn};
use crate::wire::PFC_FRAME_BYTES;
use engine::SimTime;
use engine::rng::{SimRng, stream, unit_f64};
use port::{EgressPort, Queued};

/// Settings copied from `SwitchConfig`, in the forms the hot path uses.
#[derive(Clone, Debug)]
struct Params {
    lossless: u8,
    xoff: u64,
    xon: u64,
    xoff_headroom: u64,
    lossy_limit: u64,
    /// Bytes lossy classes may use in total: the buffer minus the lossless reservation.
    lossy_pool: u64,
    buffer: u64,
    /// DWRR quanta per class in bytes; `None` for strict priority.
    dwrr: Option<[u64; 8]>,
    ecn: EcnConfig,
    ecn_enabled: u8,
}

/// PFC state of one ingress port.
#[derive(Clone, Copy, Debug, Default)]
struct IngressPort {
    /// Bytes in the buffer that came in on this port, per class.
    bytes: [u64; 8],
    /// Bit c: we sent PAUSE for class c upstream and no RESUME yet.
    paused_upstream: u8,
}

/// A packet's class and size as admission sees them, and its ingress port's counter for the class.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    c: usize,
    bit: u8,
    bytes: u64,
    lossless: bool,
    ing: u64,
}

/// A switch's state: a row of the `Store<Switch>` the fabric builds, tied to the switch's node
/// entity; the fabric's handler holds it while events run.
#[derive(Debug)]
pub struct Switch {
    /// The switch's node id.
    pub node: u32,
    /// Its name in the topology.
    pub name: String,
    /// What it has done.
    pub counters: SwitchCounters,
    params: Params,
    egress: Vec<EgressPort>,
    /// The link direction leaving each port: the switch owns its serializers, so a packet's hop
    /// through the switch touches one entity.
    wires: Vec<LinkDirection>,
    /// Each port's link direction id (its channel's number): `FabricIndex::egress`'s ids, kept
    /// in the row the warming has already loaded, so that it finds the outgoing channel without
    /// waiting on the direction's own lines (or on the index's two dependent loads).
    wire_ids: Vec<u32>,
    ingress: Vec<IngressPort>,
    buffer_bytes: u64,
    lossy_bytes: u64,
    rng: SimRng,
}

/// PFC frames a decision produced, to be launched on the given ports once the caller has the
/// link directions: at most one PAUSE (an arrival) and one RESUME (a departure) per call. Kept as
/// (port, class, pause) and built into packets only at launch: this is made on every hop, and
/// two zeroed packets cost more than the decision itself.
#[derive(Debug, Default)]
pub(crate) struct Frames {
    list: [(u16, u8, bool); 2],
    len: u8,
}

impl Frames {
    fn push(&mut self, port: u16, class: u8, pause: bool) {
        self.list[self.len as usize] = (port, class, pause);
        self.len += 1;
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn as_slice(&self) -> &[(u16, u8, bool)] {
        &self.list[..self.len as usize]
    }
}

impl Switch {
    /// A switch with `ports` ports and empty queues; `seed` seeds its ECN marking stream.
    pub fn new(node: u32, name: String, ports: usize, cfg: &SwitchConfig, seed: u64) -> Switch {
        let lossless = cfg
            .Lossless
            .iter()
            .enumerate()
            .fold(0u8, |m, (c, &l)| m | ((l as u8) << c));
        let reserve = cfg.lossless_reserve(ports).min(cfg.BufferSize.0 as u128) as u64;
        let quantum = SwitchConfig::DWRR_QUANTUM_BYTES as u64;
        let dwrr = match &cfg.Scheduler {
            Scheduler::StrictPriority => None,
            Scheduler::Dwrr { weights } => Some(weights.map(|w| w.max(1) as u64 * quantum)),
        };
        let params = Params {
            lossless,
            xoff: cfg.PfcXoff.0,
            xon: cfg.PfcXon.0,
            xoff_headroom: cfg.PfcXoff.0 + cfg.PfcHeadroom.0,
            lossy_limit: cfg.LossyQueueLimit.0,
            lossy_pool: cfg.BufferSize.0 - reserve,
            buffer: cfg.BufferSize.0,
            dwrr,
            ecn: cfg.Ecn.clone(),
            ecn_enabled: cfg
                .Ecn
                .Enabled
                .iter()
                .enumerate()
                .fold(0u8, |m, (c, &e)| m | ((e as u8) << c)),
        };
        Switch {
            node,
            name,
            counters: SwitchCounters::default(),
            params,
            egress: (0..ports).map(|_| EgressPort::default()).collect(),
            wires: Vec::new(),
            wire_ids: Vec::new(),
            ingress: vec![IngressPort::default(); ports],
            buffer_bytes: 0,
            lossy_bytes: 0,
            rng: stream(seed, "ecn", node as u64),
        }
    }

    /// Gives the switch the link directions leaving its ports, in port order.
    pub fn with_wires(mut self, wires: Vec<LinkDirection>) -> Switch {
        assert_eq!(wires.len(), self.egress.len(), "one link direction per port");
        self.wire_ids = wires.iter().map(|w| w.id).collect();
        self.wires = wires;
        self
    }

    /// The link direction leaving `port`.
    pub fn wire(&self, port: u16) -> &LinkDirection {
        &self.wires[port as usize]
    }

    /// The link direction leaving `port`, to launch on it (as the switch's scheduler does).
    pub fn wire_mut(&mut self, port: u16) -> &mut LinkDirection {
        &mut self.wires[port as usize]
    }

    /// Bytes in the shared buffer now.
    pub fn buffer_bytes(&self) -> u64 {
        self.buffer_bytes
    }
    /// Bytes queued at egress `port` in `class`.
    pub fn queue_bytes(&self, port: u16, class: u8) -> u64 {
        self.egress[port as usize].queue_bytes[class as usize]
    }
    /// Bytes queued at egress `port`, every class (what INT reports as its queue length).
    pub fn port_bytes(&self, port: u16) -> u64 {
        self.egress[port as usize].queue_bytes.iter().sum()
    }
    /// Bytes in the buffer that came in on `port` in `class` (the PFC counter).
    pub fn ingress_bytes(&self, port: u16, class: u8) -> u64 {
        self.ingress[port as usize].bytes[class as usize]
    }
    /// Whether the downstream of `port` has paused `class`.
    pub fn egress_paused(&self, port: u16, class: u8) -> bool {
        self.egress[port as usize].paused & (1 << class) != 0
    }
    /// Number of ports.
    pub fn ports(&self) -> usize {
        self.egress.len()
    }
    /// The packet at the head of egress `port`'s `class` queue: the same one at two looks means
    /// nothing of that class left the port in between (the PFC deadlock watchdog's test).
    pub fn queue_head(&self, port: u16, class: u8) -> Option<&Packet> {
        self.egress[port as usize].queues[class as usize]
            .front()
            .map(|q| &q.pkt)
    }
    /// Whether we have paused `class` upstream of `port`.
    pub fn upstream_paused(&self, port: u16, class: u8) -> bool {
        self.ingress[port as usize].paused_upstream & (1 << class) != 0
    }

    /// A PFC frame arrived on `port`: pause or resume that class of the port's egress.
    pub(crate) fn on_pfc(&mut self, port: u16, class: u8, pause: bool) {
        let bit = 1u8 << (class & 7);
        let p = &mut self.egress[port as usize];
        if pause {
            p.paused |= bit;
            self.counters.pfc_pause_received += 1;
        } else {
            p.paused &= !bit;
            self.counters.pfc_resume_received += 1;
        }
    }

    /// Admits `pkt`, which came in on `in_port`, to egress `out`: drop, or mark, queue and count
    /// it, adding a PAUSE to `frames` if its ingress counter passed XOFF. Returns whether queued.
    pub(crate) fn enqueue(&mut self, in_port: u16, out: u16, mut pkt: Packet, frames: &mut Frames) -> bool {
        if !self.admit(in_port, out, &mut pkt, frames) {
            return false;
        }
        self.egress[out as usize].push(Queued { pkt, in_port });
        true
    }

    /// Whether a packet for `out` may skip its queue: the port sends now (serializer free at
    /// `now`, nothing queued, no send pending) under strict priority, and the class is not
    /// paused. Then `enqueue` followed by `dequeue` would hand back this very packet, so
    /// `forward` does their accounting without the queue in between.
    #[inline]
    pub(crate) fn can_cut_through(&self, now: SimTime, out: u16, class: u8) -> bool {
        let port = &self.egress[out as usize];
        self.params.dwrr.is_none()
            && port.nonempty == 0
            && !port.tx_pending
            && port.paused & (1 << (class & 7)) == 0
            && self.wires[out as usize].idle_at(now)
    }

    /// `enqueue` then `dequeue` of a packet that `can_cut_through`: the same counters, peaks,
    /// ECN marks and PFC frames, in the same order (`tests.rs` checks it against the two). Returns
    /// the packet to send now, or `None` if admission dropped it. Written out rather than as
    /// `admit` then `release`: 86% of hops in the default scenario come here, and the bytes that
    /// would go into the buffer and its counters and straight out again cost half the hop.
    #[inline]
    pub(crate) fn forward(&mut self, in_port: u16, out: u16, mut pkt: Packet, frames: &mut Frames) -> Option<Packet> {
        debug_assert!(self.params.dwrr.is_none() && self.egress[out as usize].nonempty == 0);
        let Arrival {
            c,
            bit,
            bytes,
            lossless,
            ing,
        } = self.arrival(in_port, &mut pkt);
        // Admission, with the egress queue empty.
        if !self.drop_or_mark(&mut pkt, ing, 0, lossless) {
            return None;
        }
        // In and out of the buffer: only the peaks and the departure counters change.
        let counters = &mut self.counters;
        counters.peak_buffer_bytes = counters.peak_buffer_bytes.max(self.buffer_bytes + bytes);
        counters.peak_class_queue_bytes[c] = counters.peak_class_queue_bytes[c].max(bytes);
        counters.packets += 1;
        counters.bytes += bytes;
        let ingress = &mut self.ingress[in_port as usize];
        if lossless {
            counters.peak_ingress_class_bytes[c] = counters.peak_ingress_class_bytes[c].max(ing + bytes);
            if ing + bytes > self.params.xoff && ingress.paused_upstream & bit == 0 {
                ingress.paused_upstream |= bit;
                counters.pfc_pause_sent += 1;
                frames.push(in_port, pkt.class, true);
            }
        }
        if ingress.paused_upstream & bit != 0 && ing <= self.params.xon {
            ingress.paused_upstream &= !bit;
            counters.pfc_resume_sent += 1;
            frames.push(in_port, pkt.class, false);
        }
        Some(pkt)
    }

    /// What admission looks at for `pkt`, which came in on `in_port`; masks its class to 0-7.
    #[inline(always)]
    fn arrival(&self, in_port: u16, pkt: &mut Packet) -> Arrival {
        // Stored only when it changes the class: the packet is about to be copied whole into the
        // next link's channel, and a byte stored into it just before that copy makes the copy's
        // wide loads wait for the store (a failed store-to-load forward, `perf record`).
        if pkt.class > 7 {
            pkt.class &= 7;
        }
        let c = pkt.class as usize;
        let bit = 1u8 << c;
        Arrival {
            c,
            bit,
            bytes: pkt.bytes as u64,
            lossless: self.params.lossless & bit != 0,
            ing: self.ingress[in_port as usize].bytes[c],
        }
    }

    /// The admission decision for `pkt` (class already masked), whose ingress counter holds `ing`
    /// bytes and whose egress class queue holds `queued`: false, counted as a drop, if it does not
    /// fit; else true, with the ECN mark the queue calls for.
    #[inline(always)]
    fn drop_or_mark(&mut self, pkt: &mut Packet, ing: u64, queued: u64, lossless: bool) -> bool {
        let bytes = pkt.bytes as u64;
        if lossless {
            if ing + bytes > self.params.xoff_headroom || self.buffer_bytes + bytes > self.params.buffer {
                self.counters.headroom_drops += 1;
                self.count_data_drop(pkt, DropCause::Headroom);
                return false;
            }
        } else if queued + bytes > self.params.lossy_limit || self.lossy_bytes + bytes > self.params.lossy_pool {
            self.counters.drops += 1;
            self.count_data_drop(pkt, DropCause::LossyLimit);
            return false;
        }
        let bit = 1u8 << pkt.class;
        if self.params.ecn_enabled & bit != 0 && pkt.ecn != ecn::NOT_ECT && pkt.ecn != ecn::CE {
            let p = self.params.ecn.mark_probability(queued);
            if p >= 1.0 || (p > 0.0 && unit_f64(&mut self.rng) < p) {
                pkt.ecn = ecn::CE;
                self.counters.ecn_marked += 1;
            }
        }
        true
    }

    /// Admission of `pkt` to egress `out`: the drop decision, the ECN mark, and the buffer, queue
    /// peak and ingress counters as if it were queued; a PAUSE in `frames` if its ingress counter
    /// passed XOFF. The caller queues it (or sends it at once).
    #[inline]
    fn admit(&mut self, in_port: u16, out: u16, pkt: &mut Packet, frames: &mut Frames) -> bool {
        let Arrival {
            c,
            bit,
            bytes,
            lossless,
            ing,
        } = self.arrival(in_port, pkt);
        let queued = self.egress[out as usize].queue_bytes[c];
        if !self.drop_or_mark(pkt, ing, queued, lossless) {
            return false;
        }
        self.buffer_bytes += bytes;
        if !lossless {
            self.lossy_bytes += bytes;
        }
        self.counters.peak_buffer_bytes = self.counters.peak_buffer_bytes.max(self.buffer_bytes);
        let peak = &mut self.counters.peak_class_queue_bytes[c];
        *peak = (*peak).max(queued + bytes);
        let ingress = &mut self.ingress[in_port as usize];
        ingress.bytes[c] = ing + bytes;
        if !lossless {
            return true;
        }
        let peak = &mut self.counters.peak_ingress_class_bytes[c];
        *peak = (*peak).max(ing + bytes);
        if ing + bytes > self.params.xoff && ingress.paused_upstream & bit == 0 {
            ingress.paused_upstream |= bit;
            self.counters.pfc_pause_sent += 1;
            frames.push(in_port, pkt.class, true);
        }
        true
    }

    /// Takes the next packet egress `out` may send, releasing its bytes and adding a RESUME to
    /// `frames` if its ingress counter fell to XON.
    pub(crate) fn dequeue(&mut self, out: u16, frames: &mut Frames) -> Option<Packet> {
        let port = &mut self.egress[out as usize];
        let q = match &self.params.dwrr {
            None => port.pop_strict(),
            Some(quanta) => port.pop_dwrr(quanta),
        }?;
        self.release(q.in_port, &q.pkt, frames);
        Some(q.pkt)
    }

    /// A packet that came in on `in_port` leaves: its bytes leave the buffer and its ingress
    /// counter; a RESUME in `frames` if that counter fell to XON.
    #[inline]
    fn release(&mut self, in_port: u16, pkt: &Packet, frames: &mut Frames) {
        let c = pkt.class as usize;
        let bit = 1u8 << c;
        let bytes = pkt.bytes as u64;
        self.buffer_bytes -= bytes;
        if self.params.lossless & bit == 0 {
            self.lossy_bytes -= bytes;
        }
        self.counters.packets += 1;
        self.counters.bytes += bytes;
        let ingress = &mut self.ingress[in_port as usize];
        ingress.bytes[c] -= bytes;
        if ingress.paused_upstream & bit != 0 && ingress.bytes[c] <= self.params.xon {
            ingress.paused_upstream &= !bit;
            self.counters.pfc_resume_sent += 1;
            frames.push(in_port, pkt.class, false);
        }
    }

    /// Whether egress `out` has a packet it may send now.
    #[inline]
    pub(crate) fn has_eligible(&self, out: u16) -> bool {
        self.egress[out as usize].eligible() != 0
    }

    #[inline]
    pub(crate) fn tx_pending(&mut self, out: u16) -> &mut bool {
        &mut self.egress[out as usize].tx_pending
    }

    /// A PFC frame from this switch to the node upstream; the caller, which knows the topology,
    /// sets `dst` to that node. The frame is link-local: the receiver takes it from the port it
    /// arrives on.
    pub(crate) fn pfc_frame(&self, now: SimTime, class: u8, pause: bool) -> Packet {
        Packet {
            kind: PacketKind::Pfc,
            bytes: PFC_FRAME_BYTES as u32,
            class,
            aux: pause as u32,
            src: self.node,
            dst: u32::MAX,
            sent_at: now,
            ..Default::default()
        }
    }

    /// Records an unroutable packet (no path to its destination).
    pub(crate) fn drop_unroutable(&mut self, pkt: &Packet) {
        self.counters.drops += 1;
        self.count_data_drop(pkt, DropCause::NoRoute);
    }

    /// A data packet dropped here, for the run's conservation check.
    #[cold]
    fn count_data_drop(&mut self, pkt: &Packet, cause: DropCause) {
        if pkt.kind == PacketKind::Data {
            self.counters.data_drops[cause as usize][(pkt.class & 7) as usize].add(pkt.bytes as u64);
        }
    }

    /// The data packets waiting in this switch's egress queues.
    pub fn queued_data(&self) -> impl Iterator<Item = &Packet> {
        self.egress
            .iter()
            .flat_map(|p| p.queues.iter().flatten())
            .map(|q| &q.pkt)
            .filter(|p| p.kind == PacketKind::Data)
    }
}

#[cfg(test)]
mod tests;
