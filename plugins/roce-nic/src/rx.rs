//! The receive side: data into the receive pool and over PCIe into host memory, go-back-N and
//! acknowledgments at the Responder; ACK, NAK and completion at the Initiator; PFC from the
//! switch; connection setup.
//!
//! Acknowledgment rule (ours, configurable): the Responder acknowledges a data packet that
//! carries AckReq (the sender sets it on the last packet of each WQE) and, with
//! `AckEveryPackets` = N > 0, every N-th in-order packet. ACKs are cumulative. An ACK or NAK
//! carries in `sent_at` the time the data it answers arrived, which gives the WQE's `last_rx`
//! stamp at the Initiator.
//!
//! PFC at the NIC: a class's receive pool holds each packet until its payload is written to host
//! memory over PCIe. Past XOFF the NIC sends PAUSE for that class; once the writes have brought
//! the pool to XON or below (a time known from the PCIe schedule) it sends RESUME.

use crate::tx::{Ctx, Parts};
use engine::prelude::*;
use models::nic::{QpRole, QueuePair};
use models::packet::{Packet, PacketKind};
use models::trace::TracePoint;
use models::wire::{CM_MESSAGE_BYTES, CNP_BYTES, Opcode, PFC_FRAME_BYTES, ROCE_ACK_BYTES};

/// What a receive asks the world to do once the NIC's borrow ends.
#[derive(Debug)]
pub enum Effect {
    /// Spawn this queue pair's entity: an end of a connection was set up.
    SpawnQp(QueuePair),
    /// A WQE is acknowledged in full: write its stamps to its entity and mark it completed.
    Complete {
        /// The WQE's entity.
        wqe: bevy_ecs::entity::Entity,
        /// Its final stamps.
        times: models::nic::WqeTimes,
    },
}

impl Parts<'_> {
    /// Handles a packet that reached this host: data, ACK, NAK, CNP, PFC or connection setup.
    /// What needs the world goes to `out`.
    pub fn receive(&mut self, q: &mut EventQueue, ctx: &Ctx, pkt: Packet, out: &mut Vec<Effect>) {
        let point = if pkt.kind == PacketKind::Pfc {
            TracePoint::PfcReceived
        } else {
            TracePoint::PacketReceived
        };
        self.trace(point, q.now(), Some(pkt), None);
        match pkt.kind {
            PacketKind::Data => {
                // The ACK answering a packet with INT takes its hop stack; else it ends here.
                let int = pkt.int;
                if !self.rx_data(q, ctx, pkt) && int != 0 {
                    close_int(ctx, int);
                }
            }
            PacketKind::Ack => {
                if pkt.int != 0 {
                    self.rx_int(q, ctx, pkt.int, pkt.qp, pkt.psn);
                }
                self.rx_ack(q, ctx, pkt, out)
            }
            PacketKind::Nak => {
                if let Some(qpn) = self.initiator_qp(pkt.qp) {
                    if let Some(cc) = self.nic.qps[qpn as usize].cc.as_deref_mut() {
                        cc.cc.on_nak(q.now(), &models::cc::Nak { psn: pkt.psn });
                        self.arm_cc_timer(q, ctx, qpn);
                    }
                    self.rewind(q, ctx, qpn, pkt.psn);
                }
            }
            PacketKind::Cnp => self.rx_cnp(q, ctx, pkt),
            PacketKind::Pfc => {
                let c = pkt.class as usize & 7;
                if pkt.aux == 1 {
                    self.nic.class[c].paused = true;
                    self.nic.counters.pfc_pause_received += 1;
                } else {
                    self.nic.class[c].paused = false;
                    self.nic.counters.pfc_resume_received += 1;
                    self.pump(q, ctx);
                }
            }
            PacketKind::ConnectRequest => self.rx_connect_request(q, ctx, pkt, out),
            PacketKind::ConnectResponse => self.rx_connect_response(q, ctx, pkt, out),
            PacketKind::ConnectAck | PacketKind::Probe => {}
        }
    }

    fn initiator_qp(&self, qpn: u32) -> Option<u32> {
        let qp = self.nic.qps.get(qpn as usize)?;
        (qp.role == QpRole::Initiator).then_some(qpn)
    }

    fn reply(&self, to: &Packet, kind: PacketKind, psn: u32, sent_at: SimTime, remote_qpn: u32, flow: u64) -> Packet {
        Packet {
            flow,
            sent_at,
            src: self.nic.host,
            dst: to.src,
            qp: remote_qpn,
            psn,
            bytes: ROCE_ACK_BYTES as u32,
            payload: 0,
            aux: 0,
            kind,
            opcode: Opcode::RC_ACKNOWLEDGE,
            class: to.class,
            ecn: 0,
            ack_req: false,
            int: 0,
        }
    }

    /// An ACK answering `to`: it echoes `to`'s INT records, and carries the INT header, if `to`
    /// has them.
    fn ack(&self, to: &Packet, psn: u32, sent_at: SimTime, remote_qpn: u32, flow: u64) -> Packet {
        let mut ack = self.reply(to, PacketKind::Ack, psn, sent_at, remote_qpn, flow);
        if to.int != 0 {
            ack.int = to.int;
            ack.bytes += models::int::HEADER_BYTES;
        }
        ack
    }

    /// An ACK echoing INT records reached the sender: its controller's `on_int`, and the stack
    /// is closed.
    #[cold]
    #[inline(never)]
    fn rx_int(&mut self, q: &mut EventQueue, ctx: &Ctx, int: u32, qp: u32, psn: u32) {
        let hops = close_int(ctx, int);
        let Some(qpn) = self.initiator_qp(qp) else { return };
        let Some(cc) = self.nic.qps[qpn as usize].cc.as_deref_mut() else {
            return;
        };
        let echo = models::cc::IntEcho {
            psn,
            hops: hops.as_slice(),
        };
        cc.cc.on_int(q.now(), &echo);
        self.arm_cc_timer(q, ctx, qpn);
    }

    /// Handles a data packet; true if an ACK answering it went (and took its INT stack).
    fn rx_data(&mut self, q: &mut EventQueue, ctx: &Ctx, pkt: Packet) -> bool {
        let now = q.now();
        let Some(qp) = self.nic.qps.get(pkt.qp as usize) else {
            return false;
        };
        if qp.role != QpRole::Responder {
            return false;
        }
        let (expected, remote_qpn, flow) = (qp.expected_psn, qp.remote_qpn, qp.flow);
        if pkt.is_ce() && ctx.reacts_to_ce() {
            self.notify(q, ctx, &pkt);
        }
        if pkt.psn > expected {
            self.nic.counters.out_of_sequence += 1;
            self.trace(TracePoint::PacketDropped, now, Some(pkt), None);
            let qp = &mut self.nic.qps[pkt.qp as usize];
            if !qp.nak_sent {
                qp.nak_sent = true;
                self.nic.counters.naks_sent += 1;
                let nak = self.reply(&pkt, PacketKind::Nak, expected, now, remote_qpn, flow);
                self.send_ctrl(q, ctx, nak, false);
            }
            return false;
        }
        if pkt.psn < expected {
            // A duplicate from a go-back-N resend: re-acknowledge so the sender moves on.
            if pkt.ack_req {
                self.nic.counters.acks_sent += 1;
                let mut ack = self.ack(&pkt, expected - 1, now, remote_qpn, flow);
                ack.aux = self.echo(ctx, pkt.qp);
                self.send_ctrl(q, ctx, ack, false);
                return true;
            }
            return false;
        }
        let c = pkt.class as usize & 7;
        self.drain_writes(now, c);
        let held = pkt.bytes as u64;
        if self.nic.class[c].ingress_used + held > self.nic.class[c].ingress_cap {
            // Only when PFC could not hold the sender back; go-back-N recovers it.
            self.nic.counters.ingress_drops += 1;
            self.trace(TracePoint::PacketDropped, now, Some(pkt), None);
            return false;
        }
        self.nic.class[c].ingress_used += held;
        let peak = &mut self.nic.counters.ingress_peak[c];
        *peak = (*peak).max(self.nic.class[c].ingress_used);
        let mut done = self.pcie.dma_write(&ctx.cfg.Pcie, now, pkt.payload as u64);
        if let Some(d) = self.nic.slow_drain.as_mut() {
            done = d.leave(now, done, held);
        }
        self.nic.class[c].writes.push_back((done, held));
        self.nic.counters.data_packets_received += 1;
        self.nic.counters.payload_bytes_received += pkt.payload as u64;
        let every = ctx.cfg.AckEveryPackets;
        let in_window = models::nic::in_recording_window(self.nic.window, now);
        let qp = &mut self.nic.qps[pkt.qp as usize];
        qp.window_bytes += if in_window { pkt.payload as u64 } else { 0 };
        qp.expected_psn += 1;
        qp.nak_sent = false;
        qp.since_ack += 1;
        let acked = pkt.ack_req || (every > 0 && qp.since_ack >= every);
        if acked {
            qp.since_ack = 0;
            self.nic.counters.acks_sent += 1;
            let mut ack = self.ack(&pkt, pkt.psn, now, remote_qpn, flow);
            ack.aux = self.echo(ctx, pkt.qp);
            self.send_ctrl(q, ctx, ack, false);
        }
        if self.nic.class[c].ingress_used > self.nic.class[c].xoff && !self.nic.class[c].upstream_paused {
            self.nic.class[c].upstream_paused = true;
            self.nic.counters.pfc_pause_sent += 1;
            let frame = self.pfc_frame(c, true);
            self.send_ctrl(q, ctx, frame, true);
        }
        if self.nic.class[c].upstream_paused {
            self.arm_resume(q, ctx, c);
        }
        acked
    }

    /// Notification point: CE-marked data reached Responder queue pair `pkt.qp`. Sends its
    /// sender a CNP unless one went less than `CnpInterval` ago; counts the mark for the echo.
    #[cold]
    fn notify(&mut self, q: &mut EventQueue, ctx: &Ctx, pkt: &Packet) {
        let now = q.now();
        self.nic.counters.ce_received += 1;
        let qp = &mut self.nic.qps[pkt.qp as usize];
        if ctx.ecn_echo {
            qp.ce_since_ack += 1;
        }
        let Some(interval) = ctx.cnp_interval else { return };
        if qp.last_cnp.is_some_and(|t| now < t + interval) {
            return;
        }
        qp.last_cnp = Some(now);
        let cnp = Packet {
            flow: qp.flow,
            src: self.nic.host,
            dst: pkt.src,
            qp: qp.remote_qpn,
            bytes: CNP_BYTES as u32,
            kind: PacketKind::Cnp,
            opcode: Opcode::CNP,
            class: ctx.cfg.CnpClass,
            ..Default::default()
        };
        self.nic.counters.cnps_sent += 1;
        self.send_ctrl(q, ctx, cnp, false);
    }

    /// The ECN echo an ACK from Responder queue pair `qpn` carries in `aux` (0 without echo).
    #[inline]
    fn echo(&mut self, ctx: &Ctx, qpn: u32) -> u32 {
        if ctx.ecn_echo {
            std::mem::take(&mut self.nic.qps[qpn as usize].ce_since_ack)
        } else {
            0
        }
    }

    /// A CNP for one of our queue pairs: its controller's `on_cnp`.
    fn rx_cnp(&mut self, q: &mut EventQueue, ctx: &Ctx, pkt: Packet) {
        self.nic.counters.cnps_received += 1;
        let Some(qpn) = self.initiator_qp(pkt.qp) else { return };
        let Some(cc) = self.nic.qps[qpn as usize].cc.as_deref_mut() else {
            return;
        };
        cc.cc.on_cnp(q.now());
        self.cc_settle(q, ctx, qpn);
    }

    /// The controller's `on_ecn_echo` and `on_ack` for an ACK that moved `qpn`'s active WQE
    /// from `before` (its old `acked_upto`).
    #[inline(never)]
    fn cc_acked(&mut self, q: &mut EventQueue, ctx: &Ctx, qpn: u32, before: u32, pkt: &Packet) {
        let now = q.now();
        let qp = &mut self.nic.qps[qpn as usize];
        let Some(a) = qp.active.as_ref() else { return };
        let ack = models::cc::Acked {
            psn: pkt.psn,
            newly_acked: ctx.wire_bytes(a, before - a.first_psn, a.acked_upto - a.first_psn),
            in_flight: ctx.in_flight(a),
            data_arrived: pkt.sent_at,
        };
        let Some(cc) = qp.cc.as_deref_mut() else { return };
        cc.cc.on_ack(now, &ack);
        self.cc_settle(q, ctx, qpn);
    }

    fn pfc_frame(&self, class: usize, pause: bool) -> Packet {
        Packet {
            src: self.nic.host,
            dst: u32::MAX,
            bytes: PFC_FRAME_BYTES as u32,
            kind: PacketKind::Pfc,
            class: class as u8,
            aux: pause as u32,
            ..Default::default()
        }
    }

    /// Frees the receive pool of writes to host memory that are done by `now`.
    fn drain_writes(&mut self, now: SimTime, c: usize) {
        while let Some(&(done, bytes)) = self.nic.class[c].writes.front() {
            if done > now {
                break;
            }
            self.nic.class[c].writes.pop_front();
            self.nic.class[c].ingress_used -= bytes;
        }
    }

    /// Schedules the check for RESUME at the time the pending writes bring class `c` to XON.
    fn arm_resume(&mut self, q: &mut EventQueue, ctx: &Ctx, c: usize) {
        let mut used = self.nic.class[c].ingress_used;
        let mut at = q.now();
        for &(done, bytes) in self.nic.class[c].writes.iter() {
            if used <= self.nic.class[c].xon {
                break;
            }
            used -= bytes;
            at = done;
        }
        if at < self.nic.class[c].resume_timer {
            self.nic.class[c].resume_timer = at;
            q.schedule(at, self.nic.source, ctx.resume, self.nic.host, c as u64);
        }
    }

    /// `roce.resume`: send RESUME if class `c`'s pool is down to XON, else look again later.
    pub fn on_resume_check(&mut self, q: &mut EventQueue, ctx: &Ctx, c: usize) {
        let now = q.now();
        if self.nic.class[c].resume_timer == now {
            self.nic.class[c].resume_timer = SimTime::MAX;
        }
        if !self.nic.class[c].upstream_paused {
            return;
        }
        self.drain_writes(now, c);
        if self.nic.class[c].ingress_used <= self.nic.class[c].xon {
            self.nic.class[c].upstream_paused = false;
            self.nic.counters.pfc_resume_sent += 1;
            let frame = self.pfc_frame(c, false);
            self.send_ctrl(q, ctx, frame, true);
        } else {
            self.arm_resume(q, ctx, c);
        }
    }

    fn rx_ack(&mut self, q: &mut EventQueue, ctx: &Ctx, pkt: Packet, out: &mut Vec<Effect>) {
        let now = q.now();
        let Some(qpn) = self.initiator_qp(pkt.qp) else { return };
        if pkt.aux > 0
            && let Some(cc) = self.nic.qps[qpn as usize].cc.as_deref_mut()
        {
            let echo = models::cc::EcnEcho {
                psn: pkt.psn,
                marked: pkt.aux,
            };
            cc.cc.on_ecn_echo(now, &echo);
            self.arm_cc_timer(q, ctx, qpn);
        }
        let qp = &mut self.nic.qps[qpn as usize];
        let Some(a) = qp.active.as_mut() else { return };
        if pkt.psn < a.first_psn {
            return;
        }
        let before = a.acked_upto;
        a.acked_upto = a.acked_upto.max(pkt.psn + 1);
        if qp.cc.is_some() && a.acked_upto > before {
            self.cc_acked(q, ctx, qpn, before, &pkt);
        }
        let qp = &mut self.nic.qps[qpn as usize];
        let Some(a) = qp.active.as_mut() else { return };
        if a.acked_upto < a.first_psn + a.packets {
            return;
        }
        let mut a = qp.active.take().expect("checked above");
        a.ready.clear();
        qp.spare_ready = std::mem::take(&mut a.ready);
        // An ACK of the first transmission can complete a WQE that go-back-N is resending:
        // the payload fetched again but not yet resent goes back to the pool, as a rewind's
        // does, and whoever waits for room may fetch.
        if a.fetched > a.sent {
            let c = qp.class as usize & 7;
            let held: u64 = (a.sent..a.fetched).map(|i| ctx.payload_of(a.bytes, i)).sum();
            self.nic.class[c].egress_used -= held;
            self.release_pool(ctx, now, c);
        }
        a.times.last_rx = pkt.sent_at;
        a.times.completed = now;
        self.nic.counters.wqes_completed += 1;
        let qp = &mut self.nic.qps[qpn as usize];
        qp.wqes_completed += 1;
        let conn = qp.connection;
        self.trace(TracePoint::WqeCompleted, now, None, Some((conn, a.number)));
        out.push(Effect::Complete {
            wqe: a.wqe,
            times: a.times,
        });
        ctx.contract
            .wqe_completed
            .schedule(q, now, self.nic.source, self.nic.host, a.wqe);
        self.activate_next(q, ctx, qpn);
    }

    fn rx_connect_request(&mut self, q: &mut EventQueue, ctx: &Ctx, pkt: Packet, out: &mut Vec<Effect>) {
        if !self.nic.listening {
            self.nic.counters.rejected_requests += 1;
            return;
        }
        let now = q.now();
        let qpn = self.nic.qps.len() as u32;
        // The reverse path's flow hash: same 5-tuple, ends swapped.
        let flow = models::topology::routing::flow_hash(self.nic.host, pkt.src, (pkt.flow >> 48) as u16, 4791);
        let mut qp = crate::state::Qp::new(pkt.psn, QpRole::Responder, pkt.src, pkt.class, flow);
        qp.remote_qpn = pkt.aux;
        self.nic.qps.push(qp);
        out.push(Effect::SpawnQp(QueuePair {
            connection: pkt.psn,
            host: self.nic.host,
            role: QpRole::Responder,
            qpn,
            created_at: now,
            progress: Default::default(),
        }));
        let resp = cm_packet(self.nic.host, &pkt, PacketKind::ConnectResponse, pkt.aux, qpn, flow);
        self.send_ctrl(q, ctx, resp, false);
    }

    fn rx_connect_response(&mut self, q: &mut EventQueue, ctx: &Ctx, pkt: Packet, out: &mut Vec<Effect>) {
        let now = q.now();
        let Some(qpn) = self.initiator_qp(pkt.qp) else { return };
        let qp = &mut self.nic.qps[qpn as usize];
        if qp.ready {
            return;
        }
        qp.ready = true;
        qp.remote_qpn = pkt.aux;
        let (conn, flow) = (qp.connection, qp.flow);
        out.push(Effect::SpawnQp(QueuePair {
            connection: conn,
            host: self.nic.host,
            role: QpRole::Initiator,
            qpn,
            created_at: now,
            progress: Default::default(),
        }));
        let ack = cm_packet(self.nic.host, &pkt, PacketKind::ConnectAck, pkt.aux, qpn, flow);
        self.send_ctrl(q, ctx, ack, false);
        ctx.contract
            .established
            .schedule(q, now, self.nic.source, self.nic.host, conn);
        self.activate_next(q, ctx, qpn);
    }
}

/// Closes INT stack `id` in the fabric's table, returning its records.
#[cold]
#[inline(never)]
fn close_int(ctx: &Ctx, id: u32) -> models::int::Hops {
    ctx.int.as_deref().map_or_else(Default::default, |t| t.close(id))
}

/// A connection-manager message answering `to`: `qp` is the receiver's QPN, `aux` ours, `psn`
/// the connection id.
pub fn cm_packet(host: u32, to: &Packet, kind: PacketKind, qp: u32, aux: u32, flow: u64) -> Packet {
    Packet {
        flow,
        src: host,
        dst: to.src,
        qp,
        psn: to.psn,
        bytes: CM_MESSAGE_BYTES as u32,
        aux,
        kind,
        opcode: Opcode::UD_SEND_ONLY,
        class: to.class,
        ..Default::default()
    }
}
