//! The NIC's state: one `IdealNic` component per host, holding its queue pairs (indexed by queue
//! pair number, so a packet's `qp` field is all the lookup it needs), its control frames per
//! class, the round-robin list of queue pairs with data to send, the classes the switch has
//! paused, and its counters. Choosing the next frame to send lives here too, apart from the
//! handlers, so it is a plain function of the state and the time.

use crate::config::IdealNicConfig;
use bevy_ecs::prelude::*;
use engine::prelude::*;
use models::nic::{QpProgress, QpRole, WqeTimes};
use models::packet::{Packet, PacketKind, ecn};
use models::wire::Opcode;
use std::collections::VecDeque;

/// PSNs are 24 bits on the wire.
const PSN_MASK: u32 = 0x00FF_FFFF;

/// A WQE at the NIC behind the one on the wire, with its stamps so far.
#[derive(Clone, Copy, Debug)]
pub struct Waiting {
    /// The WQE's entity.
    pub wqe: Entity,
    /// Its payload bytes.
    pub bytes: u64,
    /// Its stamps so far (posted, doorbell).
    pub times: WqeTimes,
}

/// The WQE at the head of its connection: the one on the wire.
#[derive(Clone, Copy, Debug)]
pub struct Active {
    /// The WQE's entity.
    pub wqe: Entity,
    /// Its payload bytes.
    pub bytes: u64,
    /// The data packets it takes (`IdealNicConfig::packets`).
    pub packets: u64,
    /// Packets sent so far (the index of the next one).
    pub sent: u64,
    /// PSN of the last packet, once it is sent: the PSN its ACK must carry.
    pub last_psn: u32,
    /// Its stamps so far, `started` included.
    pub times: WqeTimes,
}

/// One end of a connection on this NIC.
#[derive(Clone, Debug)]
pub struct Qp {
    /// The connection's id.
    pub connection: u32,
    /// Which end this is.
    pub role: QpRole,
    /// Usable: the Responder's end from its creation, the Initiator's once the response came.
    pub ready: bool,
    /// The far end's host id.
    pub remote_host: u32,
    /// The far end's QPN (`u32::MAX` until the connection manager says).
    pub remote_qpn: u32,
    /// The traffic class (priority) its packets travel in.
    pub class: u8,
    /// ECMP hash of the packets this end sends.
    pub flow: u64,
    /// Initiator: WQEs waiting in post order behind `active`.
    pub waiting: VecDeque<Waiting>,
    /// Initiator: the WQE on the wire.
    pub active: Option<Active>,
    /// The PSN of the next data packet this end sends.
    pub next_psn: u32,
    /// In the NIC's round-robin list.
    pub in_rr: bool,
    /// Responder: payload bytes received on this queue pair.
    pub payload_received: u64,
    /// Of it, what arrived in the recording window (`models::nic::DeliveredInWindow`).
    pub window_bytes: u64,
    /// Responder: the PSN expected next (written back to the queue pair's entity at every pause).
    pub expected_psn: u32,
    /// Initiator: WQEs completed (likewise written back).
    pub wqes_completed: u64,
}

impl Qp {
    /// A new end, ready at once if it is the Responder's.
    pub fn new(connection: u32, role: QpRole, remote_host: u32, class: u8, flow: u64) -> Self {
        Qp {
            connection,
            role,
            ready: role == QpRole::Responder,
            remote_host,
            remote_qpn: u32::MAX,
            class,
            flow,
            waiting: VecDeque::new(),
            active: None,
            next_psn: 0,
            in_rr: false,
            payload_received: 0,
            window_bytes: 0,
            expected_psn: 0,
            wqes_completed: 0,
        }
    }

    /// Puts the oldest waiting WQE on the wire at `now`, if nothing is and the end is ready.
    /// Returns whether it did (the caller adds the queue pair to the round-robin list).
    pub fn start_next(&mut self, now: SimTime, cfg: &IdealNicConfig) -> bool {
        if !self.ready || self.active.is_some() {
            return false;
        }
        let Some(w) = self.waiting.pop_front() else {
            return false;
        };
        let mut times = w.times;
        times.started = now;
        self.active = Some(Active {
            wqe: w.wqe,
            bytes: w.bytes,
            packets: cfg.packets(w.bytes),
            sent: 0,
            last_psn: 0,
            times,
        });
        true
    }
}

/// Counters a beacon or a test reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NicCounters {
    /// Data packets sent.
    pub data_packets_sent: u64,
    /// Data bytes on the wire, headers included.
    pub data_bytes_sent: u64,
    /// Payload bytes in the data packets sent.
    pub payload_bytes_sent: u64,
    /// Data packets received.
    pub data_packets_received: u64,
    /// Payload bytes in the data packets received.
    pub payload_bytes_received: u64,
    /// Data packets that arrived marked CE (counted; this NIC has no congestion control).
    pub ce_received: u64,
    /// ACKs sent.
    pub acks_sent: u64,
    /// ACKs received.
    pub acks_received: u64,
    /// Connection manager messages (request, response, acknowledgment).
    pub cm_sent: u64,
    /// Connection manager messages received.
    pub cm_received: u64,
    /// PFC PAUSE frames received from the switch.
    pub pfc_pause_received: u64,
    /// PFC frames that resumed a class.
    pub pfc_resume_received: u64,
    /// Connection requests that reached a host that got no `listen`.
    pub rejected_requests: u64,
    /// Packets for no queue pair of this NIC, or an ACK for no WQE on the wire (a bug upstream).
    pub stray_packets: u64,
    /// WQEs completed (Initiator side).
    pub wqes_completed: u64,
}

/// The NIC of one host: row `host` of `Store<IdealNic>`.
#[derive(Debug)]
pub struct IdealNic {
    /// The host's id.
    pub host: u32,
    /// The source its events (transmit wake-ups, `established`, `wqe_completed`) come from.
    pub source: SourceId,
    /// Got `listen`: accepts connection requests.
    pub listening: bool,
    /// Queue pairs by QPN.
    pub qps: Vec<Qp>,
    /// Control frames (ACK, connection manager) per class, sent ahead of data.
    pub ctrl: [VecDeque<Packet>; 8],
    /// Queue pairs with data to send, served one packet each in turn.
    pub rr: VecDeque<u32>,
    /// Classes the switch has paused on this port (PFC).
    pub paused: [bool; 8],
    /// When the port's serializer is free.
    pub busy_until: SimTime,
    /// A transmit wake-up is pending.
    pub tx_scheduled: bool,
    /// The recording window, [start, end).
    pub window: (SimTime, SimTime),
    /// What it has sent and received.
    pub counters: NicCounters,
}

impl IdealNic {
    /// A NIC with no queue pairs, not listening.
    pub fn new(host: u32, source: SourceId) -> Self {
        IdealNic {
            host,
            source,
            listening: false,
            qps: Vec::new(),
            ctrl: Default::default(),
            rr: VecDeque::new(),
            paused: [false; 8],
            busy_until: SimTime::ZERO,
            tx_scheduled: false,
            window: (SimTime::ZERO, SimTime::MAX),
            counters: NicCounters::default(),
        }
    }

    /// Anything queued to send, paused or not.
    pub fn has_tx_work(&self) -> bool {
        !self.rr.is_empty() || self.ctrl.iter().any(|c| !c.is_empty())
    }

    /// Adds `qpn` to the round-robin list if it is not there.
    pub fn schedule_qp(&mut self, qpn: u32) {
        let qp = &mut self.qps[qpn as usize];
        if !qp.in_rr {
            qp.in_rr = true;
            self.rr.push_back(qpn);
        }
    }

    /// Queues a control frame in its class.
    pub fn push_ctrl(&mut self, pkt: Packet) {
        self.ctrl[pkt.class as usize & 7].push_back(pkt);
    }

    /// The frame to put on the wire at `now`: a control frame of the lowest unpaused class that
    /// has one, else the next data packet of the next queue pair in round-robin order whose
    /// class is not paused. Updates the WQE's stamps and the counters as if it were sent.
    pub fn next_frame(&mut self, now: SimTime, cfg: &IdealNicConfig) -> Option<Packet> {
        for class in 0..8 {
            if self.paused[class] {
                continue;
            }
            if let Some(pkt) = self.ctrl[class].pop_front() {
                match pkt.kind {
                    PacketKind::Ack => self.counters.acks_sent += 1,
                    _ => self.counters.cm_sent += 1,
                }
                return Some(pkt);
            }
        }
        for _ in 0..self.rr.len() {
            let qpn = self.rr.pop_front()?;
            if self.paused[self.qps[qpn as usize].class as usize & 7] {
                // Keep its place in the cycle; it is served when its class resumes.
                self.rr.push_back(qpn);
                continue;
            }
            let (pkt, more) = self.data_packet(qpn, now, cfg);
            if more {
                self.rr.push_back(qpn);
            } else {
                self.qps[qpn as usize].in_rr = false;
            }
            return Some(pkt);
        }
        None
    }

    /// Cuts the next packet of `qpn`'s active WQE. Returns it and whether more remain.
    fn data_packet(&mut self, qpn: u32, now: SimTime, cfg: &IdealNicConfig) -> (Packet, bool) {
        let host = self.host;
        let qp = &mut self.qps[qpn as usize];
        // Only queue pairs with an active WQE and unsent packets are in the list.
        let a = qp
            .active
            .as_mut()
            .expect("a queue pair in the round-robin list has a WQE on the wire");
        let mss = cfg.Mss.0.max(1);
        let offset = a.sent * mss;
        let payload = a.bytes.saturating_sub(offset).min(mss);
        if a.sent == 0 {
            a.times.first_tx = now;
        }
        let last = a.sent + 1 == a.packets;
        let psn = qp.next_psn;
        qp.next_psn = (psn + 1) & PSN_MASK;
        let pkt = Packet {
            flow: qp.flow,
            sent_at: now,
            src: host,
            dst: qp.remote_host,
            qp: qp.remote_qpn,
            psn,
            bytes: (payload + cfg.HeaderBytes.0) as u32,
            payload: payload as u32,
            aux: 0,
            kind: PacketKind::Data,
            opcode: Opcode::write_opcode(a.sent, a.packets),
            class: qp.class,
            // ECN-capable, so a marking switch marks rather than drops; CE is only counted.
            ecn: ecn::ECT0,
            ack_req: last,
            int: 0,
        };
        a.sent += 1;
        if last {
            a.last_psn = psn;
        }
        self.counters.data_packets_sent += 1;
        self.counters.data_bytes_sent += pkt.bytes as u64;
        self.counters.payload_bytes_sent += payload;
        (pkt, !last)
    }
}

impl IdealNic {
    /// What queue pair `qpn` has done so far, for its entity.
    pub fn progress(&self, qpn: u32) -> Option<QpProgress> {
        let qp = self.qps.get(qpn as usize)?;
        Some(match qp.role {
            QpRole::Initiator => QpProgress::initiator(
                qp.next_psn,
                qp.waiting.len() + qp.active.is_some() as usize,
                qp.wqes_completed,
            ),
            QpRole::Responder => QpProgress::responder(qp.expected_psn),
        })
    }

    /// The WQEs this NIC holds, with their stamps so far.
    pub fn held_wqes(&self) -> impl Iterator<Item = (Entity, WqeTimes)> + '_ {
        self.qps.iter().flat_map(|qp| {
            let active = qp.active.as_ref().map(|a| (a.wqe, a.times));
            active.into_iter().chain(qp.waiting.iter().map(|w| (w.wqe, w.times)))
        })
    }
}
