//! The transmit side: WQE activation, the payload fetch pipelined with transmission, and the
//! port's scheduler.
//!
//! A connection has one WQE on the wire at a time (the spec); its others wait in post order.
//! When a WQE reaches the head, the NIC issues DMA reads for its first packets, as many as the
//! `FetchWindow` and the class's transmit pool allow; every packet sent frees pool room and lets
//! the next fetch go, so fetch and transmission overlap and a full pool holds fetches back
//! instead of losing anything. The port sends control frames first (PFC, ACK/NAK, setup), then
//! data by strict priority between classes (7 highest) skipping classes the switch has paused,
//! queue pairs of a class round-robin per packet, each packet only once its payload is fetched.

use crate::config::RoceNicConfig;
use crate::state::{Active, RoceNic, Waiting};

use bevy_ecs::entity::Entity;
use engine::prelude::*;
use models::fabric::link::LinkDirection;
use models::nic::NicContract;
use models::packet::{Packet, PacketKind, ecn};
use models::pcie::PcieLink;
use models::trace::{TraceEvent, TracePoint};
use models::wire::Opcode;

/// Event kinds and settings every NIC shares.
#[derive(Clone, Debug)]
pub struct Ctx {
    /// The configuration every host's NIC shares.
    pub cfg: std::sync::Arc<RoceNicConfig>,
    /// `roce.tx`: wake the port's scheduler, at `RoceNic::tx_timer`; others are stale.
    pub tx: EventKind,
    /// `roce.rto`: a queue pair's retransmission timer; the event's data is its QPN.
    pub rto: EventKind,
    /// `roce.resume`: see whether a class's receive pool is down to XON, to send RESUME; the
    /// event's data is the class.
    pub resume: EventKind,
    /// The doorbell reached the NIC: the WQE's entity.
    pub doorbell: TypedKind<Entity>,
    /// The NIC contract's event kinds.
    pub contract: NicContract,
    /// A queue pair's congestion-control timer (`Gate::wake_at`).
    pub cc_timer: EventKind,
    /// The notification point's CNP interval, when the controller asks for CNPs.
    pub cnp_interval: Option<SimTime>,
    /// ACKs echo CE marks (the controller asks for it).
    pub ecn_echo: bool,
    /// The fabric's INT hop stacks, when the controller asks for INT (`models::int`): data
    /// packets open one each and carry the INT header, ACKs echo it.
    pub int: Option<std::sync::Arc<models::int::IntTable>>,
    /// Header bytes of a data packet: `HeaderBytes`, plus the INT header with INT.
    pub header_bytes: u64,
}

impl Ctx {
    /// Payload bytes of packet `i` of a WQE of `bytes`.
    #[inline]
    pub fn payload_of(&self, bytes: u64, i: u32) -> u64 {
        let mss = self.cfg.Mss.0;
        bytes.saturating_sub(i as u64 * mss).min(mss)
    }
    /// Packets a WQE of `bytes` is cut into: `ceil(bytes / Mss)`, at least one.
    pub fn packets_of(&self, bytes: u64) -> u32 {
        bytes.div_ceil(self.cfg.Mss.0).max(1) as u32
    }
    /// Does a CE mark on arriving data ask anything of the receiver?
    #[inline]
    pub fn reacts_to_ce(&self) -> bool {
        self.cnp_interval.is_some() || self.ecn_echo
    }
    /// Wire bytes of packets `from..to` of the active WQE `a`.
    pub fn wire_bytes(&self, a: &Active, from: u32, to: u32) -> u64 {
        if to <= from {
            return 0;
        }
        let (mss, header) = (self.cfg.Mss.0, self.header_bytes);
        let full = (to - from) as u64 * (mss + header);
        // Every packet is full but the last.
        if to == a.packets {
            full - (mss - self.payload_of(a.bytes, a.packets - 1))
        } else {
            full
        }
    }
    /// Wire bytes of `a` sent and not yet acknowledged.
    pub fn in_flight(&self, a: &Active) -> u64 {
        self.wire_bytes(a, a.acked_upto - a.first_psn, a.sent)
    }
}

/// The three parts of a host a NIC handler touches.
pub struct Parts<'a> {
    /// The host's NIC.
    pub nic: &'a mut RoceNic,
    /// The host's PCIe link: doorbells, payload fetches, payload writes.
    pub pcie: &'a mut PcieLink,
    /// The link direction the host sends on.
    pub wire: &'a mut LinkDirection,
    /// Where trace events go when a tracer subscribes (`None`: nobody listens).
    pub trace: Option<&'a mut Vec<TraceEvent>>,
}

impl Parts<'_> {
    /// Passes a trace point (one branch when nobody listens).
    #[inline]
    pub fn trace(&mut self, point: TracePoint, time: SimTime, packet: Option<Packet>, wqe: Option<(u32, u64)>) {
        if let Some(t) = self.trace.as_deref_mut() {
            t.push(TraceEvent {
                point,
                time,
                node: self.nic.host,
                port: 0,
                packet,
                wqe,
            });
        }
    }

    /// Makes `wqe` the head of queue pair `qpn` and starts fetching it.
    pub fn activate(&mut self, q: &mut EventQueue, ctx: &Ctx, qpn: u32, w: Waiting) {
        let now = q.now();
        let (wqe, bytes, mut times) = (w.wqe, w.bytes, w.times);
        times.started = now;
        let packets = ctx.packets_of(bytes);
        let qp = &mut self.nic.qps[qpn as usize];
        let first_psn = qp.next_psn;
        qp.next_psn += packets;
        let ready = std::mem::take(&mut qp.spare_ready);
        qp.active = Some(Active {
            wqe,
            number: w.number,
            bytes,
            packets,
            first_psn,
            sent: 0,
            fetched: 0,
            ready,
            acked_upto: first_psn,
            times,
            first_tx_set: false,
            rto_deadline: SimTime::MAX,
        });
        self.fill_fetch(ctx, now, qpn);
        self.enqueue_rr(qpn);
        self.pump(q, ctx);
    }

    /// Activates the next waiting WQE of `qpn`, if the connection is set up and idle.
    pub fn activate_next(&mut self, q: &mut EventQueue, ctx: &Ctx, qpn: u32) {
        let qp = &mut self.nic.qps[qpn as usize];
        if !qp.ready || qp.active.is_some() {
            return;
        }
        if let Some(w) = qp.waiting.pop_front() {
            self.activate(q, ctx, qpn, w);
        }
    }

    /// Puts `qpn` at the back of its class's round robin unless it is in it already.
    pub fn enqueue_rr(&mut self, qpn: u32) {
        let qp = &mut self.nic.qps[qpn as usize];
        if !qp.in_rr {
            qp.in_rr = true;
            let c = qp.class as usize & 7;
            self.nic.rr_push(c, qpn);
        }
    }

    /// Issues fetches for `qpn`'s active WQE while its window and its class's pool allow.
    pub fn fill_fetch(&mut self, ctx: &Ctx, now: SimTime, qpn: u32) {
        let nic = &mut *self.nic;
        let qp = &mut nic.qps[qpn as usize];
        let Some(a) = qp.active.as_mut() else { return };
        let c = qp.class as usize & 7;
        let window = ctx.cfg.FetchWindow.0;
        while a.fetched < a.packets {
            if (a.fetched - a.sent) as u64 * ctx.cfg.Mss.0 >= window {
                break;
            }
            let payload = ctx.payload_of(a.bytes, a.fetched);
            if nic.class[c].egress_used + payload > nic.class[c].egress_cap {
                if !qp.fetch_blocked {
                    qp.fetch_blocked = true;
                    nic.class[c].fetch_waiters.push_back(qpn);
                }
                break;
            }
            nic.class[c].egress_used += payload;
            nic.counters.egress_peak[c] = nic.counters.egress_peak[c].max(nic.class[c].egress_used);
            a.ready.push_back(self.pcie.dma_read(&ctx.cfg.Pcie, now, payload));
            a.fetched += 1;
        }
    }

    /// Room came back to class `c`'s transmit pool off the send path (a WQE completed with
    /// payload fetched for a resend): let the queue pairs waiting for it fetch.
    pub fn release_pool(&mut self, ctx: &Ctx, now: SimTime, c: usize) {
        self.wake_fetch_waiters(ctx, now, c);
    }

    /// Lets queue pairs waiting for pool room in class `c` fetch again.
    #[inline]
    fn wake_fetch_waiters(&mut self, ctx: &Ctx, now: SimTime, c: usize) {
        // Called for every packet sent; nobody waits unless a pool filled up.
        if !self.nic.class[c].fetch_waiters.is_empty() {
            self.wake_fetch_waiters_slow(ctx, now, c);
        }
    }

    #[cold]
    fn wake_fetch_waiters_slow(&mut self, ctx: &Ctx, now: SimTime, c: usize) {
        while let Some(&w) = self.nic.class[c].fetch_waiters.front() {
            self.nic.class[c].fetch_waiters.pop_front();
            self.nic.qps[w as usize].fetch_blocked = false;
            self.fill_fetch(ctx, now, w);
            if self.nic.qps[w as usize].fetch_blocked {
                break;
            }
        }
    }

    /// Wakes the scheduler at `t` unless it will already wake by then.
    pub fn arm_tx(&mut self, q: &mut EventQueue, ctx: &Ctx, t: SimTime) {
        if t < self.nic.tx_timer {
            self.nic.tx_timer = t;
            q.schedule(t, self.nic.source, ctx.tx, self.nic.host, 0);
        }
    }

    /// Puts a control frame at the back (or, for PFC, the front) of the control queue.
    pub fn send_ctrl(&mut self, q: &mut EventQueue, ctx: &Ctx, pkt: Packet, urgent: bool) {
        if urgent {
            self.nic.ctrl.push_front(pkt);
        } else {
            self.nic.ctrl.push_back(pkt);
        }
        self.pump(q, ctx);
    }

    /// Sends the next frames if the port is free, and arranges to be called again when needed.
    /// Up to `TxBurstPackets` frames go into the port's transmit FIFO at once, back to back; a
    /// PAUSE or a new control frame takes effect after them, as behind a real NIC's FIFO. This
    /// saves a wake-up event per frame without changing when any bit is on the wire.
    pub fn pump(&mut self, q: &mut EventQueue, ctx: &Ctx) {
        let now = q.now();
        if !self.wire.idle_at(now) {
            let t = self.wire.busy_until;
            self.arm_tx(q, ctx, t);
            return;
        }
        let mut launched = 0;
        while launched < ctx.cfg.TxBurstPackets {
            let at = self.wire.busy_until.max(now);
            if !self.send_next(q, ctx, now, at) {
                break;
            }
            launched += 1;
        }
        if launched > 0 && self.nic.has_tx_work() {
            let t = self.wire.busy_until;
            self.arm_tx(q, ctx, t);
        }
    }

    /// Puts the next frame on the wire from `at` (decided at `now`); false if none may go.
    /// When a queue pair's payload is not fetched yet, arms the scheduler for when it will be.
    fn send_next(&mut self, q: &mut EventQueue, ctx: &Ctx, now: SimTime, at: SimTime) -> bool {
        if let Some(mut pkt) = self.nic.ctrl.pop_front() {
            if pkt.kind != PacketKind::Ack && pkt.kind != PacketKind::Nak {
                // ACK/NAK keep the time their data arrived (see rx.rs); others carry send time.
                pkt.sent_at = at;
            }
            let point = if pkt.kind == PacketKind::Pfc {
                TracePoint::PfcSent
            } else {
                TracePoint::PacketSent
            };
            self.trace(point, now, Some(pkt), None);
            self.wire.launch_from_host(q, at, pkt);
            return true;
        }
        let mut earliest = SimTime::MAX;
        // Classes with queue pairs waiting, highest first.
        let mut classes = self.nic.rr_mask;
        while classes != 0 {
            // Masked, as every class index here, so that indexing `class` needs no bounds check.
            let c = (7 - classes.leading_zeros() as usize) & 7;
            classes &= !(1 << c);
            if self.nic.class[c].paused {
                continue;
            }
            for _ in 0..self.nic.class[c].rr.len() {
                let Some(qpn) = self.nic.rr_pop(c) else { break };
                let ready_at = self.nic.qps[qpn as usize]
                    .active
                    .as_ref()
                    .and_then(|a| a.ready.front().copied());
                match ready_at {
                    Some(t) if t <= at => {
                        if let Some(wait) = self.cc_wait(ctx, qpn, at) {
                            // Held back by its controller: paced (wake then) or out of window
                            // (an ACK pumps again).
                            earliest = earliest.min(wait);
                            self.nic.rr_push(c, qpn);
                            continue;
                        }
                        self.send_data(q, ctx, qpn, c, now, at);
                        return true;
                    }
                    Some(t) => {
                        earliest = earliest.min(t);
                        self.nic.rr_push(c, qpn);
                    }
                    None => {
                        let qp = &mut self.nic.qps[qpn as usize];
                        if qp.active.as_ref().is_some_and(|a| a.sent < a.packets) {
                            // Fetch held back by a full pool: it rejoins when room frees.
                            self.nic.rr_push(c, qpn);
                        } else {
                            qp.in_rr = false;
                        }
                    }
                }
            }
        }
        if earliest != SimTime::MAX {
            self.arm_tx(q, ctx, earliest.max(at));
        }
        false
    }

    /// Sends the next packet of `qpn`'s active WQE (its payload is at the NIC by `at`).
    fn send_data(&mut self, q: &mut EventQueue, ctx: &Ctx, qpn: u32, c: usize, now: SimTime, at: SimTime) {
        let host = self.nic.host;
        let qp = &mut self.nic.qps[qpn as usize];
        let a = qp.active.as_mut().expect("queue pair in rr without an active WQE");
        a.ready.pop_front();
        let i = a.sent;
        a.sent += 1;
        if i == 0 && !a.first_tx_set {
            a.first_tx_set = true;
            a.times.first_tx = at;
        }
        let payload = ctx.payload_of(a.bytes, i);
        let pkt = Packet {
            flow: qp.flow,
            sent_at: at,
            src: host,
            dst: qp.remote_host,
            qp: qp.remote_qpn,
            psn: a.first_psn + i,
            bytes: (payload + ctx.header_bytes) as u32,
            payload: payload as u32,
            // The message length, for a capture's RETH (`PacketKind::Data`); nothing reads it.
            aux: a.bytes.min(u32::MAX as u64) as u32,
            kind: PacketKind::Data,
            opcode: Opcode::write_opcode(i as u64, a.packets as u64),
            class: qp.class,
            ecn: ecn::ECT0,
            ack_req: i + 1 == a.packets,
            int: match ctx.int.as_deref() {
                None => 0,
                Some(t) => open_int(t),
            },
        };
        let all_sent = a.sent == a.packets;
        if all_sent {
            qp.in_rr = false;
        } else {
            self.nic.rr_push(c, qpn);
        }
        self.nic.class[c].egress_used -= payload;
        self.nic.counters.data_packets_sent += 1;
        self.nic.counters.data_bytes_sent += pkt.bytes as u64;
        self.trace(TracePoint::PacketSent, now, Some(pkt), None);
        let end = self.wire.launch_from_host(q, at, pkt);
        if all_sent {
            let deadline = end + ctx.cfg.RetransmitTimeout.0;
            let qp = &mut self.nic.qps[qpn as usize];
            if let Some(a) = qp.active.as_mut() {
                a.rto_deadline = deadline;
            }
            if qp.rto_armed == SimTime::MAX {
                qp.rto_armed = deadline;
                q.schedule(deadline, self.nic.source, ctx.rto, host, qpn as u64);
            }
        }
        if self.nic.qps[qpn as usize].cc.is_some() {
            self.cc_sent(q, ctx, qpn, now, &pkt);
        }
        self.fill_fetch(ctx, now, qpn);
        self.wake_fetch_waiters(ctx, now, c);
    }

    /// When queue pair `qpn`'s controller lets its next packet start, if not at `at`.
    #[inline]
    fn cc_wait(&self, ctx: &Ctx, qpn: u32, at: SimTime) -> Option<SimTime> {
        let qp = &self.nic.qps[qpn as usize];
        let cc = qp.cc.as_ref()?;
        cc.cc.gate.wait(at, ctx.in_flight(qp.active.as_ref()?))
    }

    /// Tells `qpn`'s controller that `pkt` went on the wire.
    #[inline(never)]
    fn cc_sent(&mut self, q: &mut EventQueue, ctx: &Ctx, qpn: u32, now: SimTime, pkt: &Packet) {
        let qp = &mut self.nic.qps[qpn as usize];
        let in_flight = qp.active.as_ref().map_or(0, |a| ctx.in_flight(a));
        let Some(cc) = qp.cc.as_deref_mut() else { return };
        let retransmit = pkt.psn < cc.next_new_psn;
        cc.next_new_psn = cc.next_new_psn.max(pkt.psn + 1);
        let sent = models::cc::Sent {
            at: pkt.sent_at,
            psn: pkt.psn,
            bytes: pkt.bytes,
            payload: pkt.payload,
            retransmit,
            in_flight,
        };
        cc.cc.on_send(now, &sent);
        self.arm_cc_timer(q, ctx, qpn);
    }

    /// Schedules `qpn`'s congestion-control timer if its controller wants an earlier one.
    pub fn arm_cc_timer(&mut self, q: &mut EventQueue, ctx: &Ctx, qpn: u32) {
        let (host, source) = (self.nic.host, self.nic.source);
        let Some(cc) = self.nic.qps[qpn as usize].cc.as_deref_mut() else {
            return;
        };
        let t = cc.cc.gate.wake_at;
        if t < cc.timer {
            cc.timer = t;
            q.schedule(t, source, ctx.cc_timer, host, qpn as u64);
        }
    }

    /// After a controller's hook off the send path: arm its timer and let the queue pair send
    /// if the gate opened.
    pub fn cc_settle(&mut self, q: &mut EventQueue, ctx: &Ctx, qpn: u32) {
        self.arm_cc_timer(q, ctx, qpn);
        if self.nic.qps[qpn as usize].in_rr {
            self.pump(q, ctx);
        }
    }

    /// `roce.cc`: the time `qpn`'s controller asked for came (or a stale timer fired).
    pub fn on_cc_timer(&mut self, q: &mut EventQueue, ctx: &Ctx, qpn: u32) {
        let now = q.now();
        let Some(cc) = self.nic.qps.get_mut(qpn as usize).and_then(|qp| qp.cc.as_deref_mut()) else {
            return;
        };
        if cc.timer != now {
            return;
        }
        cc.timer = SimTime::MAX;
        if cc.cc.gate.wake_at <= now {
            cc.cc.on_timer(now);
        }
        self.cc_settle(q, ctx, qpn);
    }

    /// Go-back-N: resend `qpn`'s active WQE from `psn`, fetching its payload again.
    pub fn rewind(&mut self, q: &mut EventQueue, ctx: &Ctx, qpn: u32, psn: u32) {
        let now = q.now();
        let nic = &mut *self.nic;
        let qp = &mut nic.qps[qpn as usize];
        let c = qp.class as usize & 7;
        let Some(a) = qp.active.as_mut() else { return };
        if psn < a.first_psn || psn >= a.first_psn + a.packets {
            return;
        }
        let to = psn - a.first_psn;
        for i in a.sent..a.fetched {
            nic.class[c].egress_used -= ctx.payload_of(a.bytes, i);
        }
        nic.counters.retransmitted_packets += (a.sent.saturating_sub(to)) as u64;
        a.sent = to;
        a.fetched = to;
        a.ready.clear();
        a.rto_deadline = SimTime::MAX;
        self.fill_fetch(ctx, now, qpn);
        self.enqueue_rr(qpn);
        self.wake_fetch_waiters(ctx, now, c);
        self.pump(q, ctx);
    }
}

/// A new INT stack for a data packet (only with INT): out of line, off the send path of a run
/// without it.
#[cold]
#[inline(never)]
fn open_int(t: &models::int::IntTable) -> u32 {
    t.open()
}
