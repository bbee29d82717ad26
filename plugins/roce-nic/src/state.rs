//! The NIC's state: one `RoceNic` row per host, holding its queue pairs, its transmit queues
//! per class, its two buffer managers and its counters. Queue pairs are also entities
//! (`models::nic::QueuePair`), spawned when they are created; the hot state stays here, indexed
//! by queue pair number, so a packet needs no lookup beyond its QPN, and is written back to the
//! entities at every pause (`RoceNic::write_back`).

use crate::config::RoceNicConfig;
use bevy_ecs::prelude::*;
use engine::prelude::*;
use engine::ring::Ring;
use models::cc::QpCc;
use models::nic::{QpProgress, QpRole, WqeTimes};
use models::packet::Packet;
use std::collections::VecDeque;

/// A WQE at the NIC behind the active one.
#[derive(Clone, Copy, Debug)]
pub struct Waiting {
    /// The WQE's entity.
    pub wqe: Entity,
    /// Its number on its connection (from 1).
    pub number: u64,
    /// Payload bytes to write.
    pub bytes: u64,
    /// Its stamps so far (`posted`, `at_nic`).
    pub times: WqeTimes,
}

/// The WQE at the head of a connection: the one on the wire.
#[derive(Debug)]
pub struct Active {
    /// The WQE's entity.
    pub wqe: Entity,
    /// Its number on its connection (from 1).
    pub number: u64,
    /// Payload bytes to write.
    pub bytes: u64,
    /// Packets it is cut into: `ceil(bytes / Mss)`, at least one.
    pub packets: u32,
    /// PSN of its first packet (PSNs run on across a queue pair's WQEs).
    pub first_psn: u32,
    /// Packets sent (the index of the next to send).
    pub sent: u32,
    /// Packets whose payload fetch has been issued.
    pub fetched: u32,
    /// When each fetched, unsent packet's payload is at the NIC, in order.
    pub ready: Ring<SimTime>,
    /// Highest PSN acknowledged, plus one (first_psn when nothing is).
    pub acked_upto: u32,
    /// Its stamps so far; `started` on activation, `first_tx` at its first packet.
    pub times: WqeTimes,
    /// `times.first_tx` is set; a go-back-N resend of packet 0 keeps the first stamp.
    pub first_tx_set: bool,
    /// When the retransmission timer of this WQE fires (`SimTime::MAX`: not armed). A timer
    /// event whose time is not this is stale (an earlier WQE's, or from before a rewind).
    pub rto_deadline: SimTime,
}

/// One end of a connection on this NIC.
#[derive(Debug)]
pub struct Qp {
    /// The connection id (`ConnectionSpec::id`).
    pub connection: u32,
    /// Which end this is.
    pub role: QpRole,
    /// Set up (Initiator: the response arrived; Responder: from creation).
    pub ready: bool,
    /// The host of the other end.
    pub remote_host: u32,
    /// The other end's QPN, which its packets carry (`u32::MAX` until the Initiator
    /// has the response).
    pub remote_qpn: u32,
    /// The traffic class of its data and replies (`RdmaDataPacketTC`).
    pub class: u8,
    /// ECMP hash of the packets this end sends.
    pub flow: u64,
    // Initiator side.
    /// WQEs at the NIC behind the active one, in post order, with their stamps so far.
    pub waiting: VecDeque<Waiting>,
    /// The WQE on the wire, if any: one per connection at a time.
    pub active: Option<Active>,
    /// The PSN the next activated WQE starts at.
    pub next_psn: u32,
    /// In its class's round robin, so never queued there twice.
    pub in_rr: bool,
    /// Waiting in `RoceNic::fetch_waiters` for room in its class's transmit pool.
    pub fetch_blocked: bool,
    /// When the one pending `roce.rto` of this queue pair fires (`SimTime::MAX`: none). A new
    /// deadline is never earlier than a pending one, so instead of one event per WQE (most of
    /// them stale, 100 us in the heap) the pending event re-arms itself for the latest deadline.
    pub rto_armed: SimTime,
    /// WQEs completed on this end (written back to its entity at every pause).
    pub wqes_completed: u64,
    /// The last completed WQE's `ready` ring, emptied, for the next one: a new ring per WQE
    /// was three allocations (it grows 4, 8, 16), 10,000 times per 20 ms of the default run.
    pub spare_ready: Ring<SimTime>,
    // Responder side.
    /// The next in-order PSN; data above it is out of sequence.
    pub expected_psn: u32,
    /// A NAK went for the current gap: no other until an in-order packet arrives.
    pub nak_sent: bool,
    /// In-order packets since the last ACK, for `AckEveryPackets`.
    pub since_ack: u32,
    /// Payload accepted in order during the recording window (`DeliveredInWindow`).
    pub window_bytes: u64,
    /// When this end last sent a CNP (notification point).
    pub last_cnp: Option<SimTime>,
    /// CE-marked data packets since the last ACK, for the ACK's ECN echo.
    pub ce_since_ack: u32,
    /// The sender's congestion control (`None` without a controller).
    pub cc: Option<Box<CcQp>>,
}

/// A sending queue pair's congestion control, with what the NIC keeps for it.
#[derive(Debug)]
pub struct CcQp {
    /// The controller and its gate.
    pub cc: QpCc,
    /// When the one pending `roce.cc` timer event fires (`SimTime::MAX`: none).
    pub timer: SimTime,
    /// The lowest PSN never sent: a packet below it is a retransmission.
    pub next_new_psn: u32,
}

impl Qp {
    /// A queue pair with nothing posted: a Responder is ready at once, an Initiator once the
    /// response arrives (its `remote_qpn` is unknown until then).
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
            fetch_blocked: false,
            rto_armed: SimTime::MAX,
            wqes_completed: 0,
            spare_ready: Ring::default(),
            expected_psn: 0,
            nak_sent: false,
            since_ack: 0,
            window_bytes: 0,
            last_cnp: None,
            ce_since_ack: 0,
            cc: None,
        }
    }
}

/// Counters a beacon or a test reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NicCounters {
    /// Data packets put on the wire, resends included.
    pub data_packets_sent: u64,
    /// Their wire bytes, headers included.
    pub data_bytes_sent: u64,
    /// In-order data packets accepted into a receive pool.
    pub data_packets_received: u64,
    /// Their payload bytes.
    pub payload_bytes_received: u64,
    /// ACKs sent, re-acknowledgments of duplicates included.
    pub acks_sent: u64,
    /// NAKs sent, one per gap.
    pub naks_sent: u64,
    /// Packets already sent that go-back-N rewound, to be sent again.
    pub retransmitted_packets: u64,
    /// Retransmission timeouts that fired and rewound a WQE.
    pub timeouts: u64,
    /// PFC PAUSE frames sent upstream (a receive pool passed XOFF).
    pub pfc_pause_sent: u64,
    /// PFC RESUME frames sent upstream (the pool came down to XON).
    pub pfc_resume_sent: u64,
    /// PFC PAUSE frames received from the switch.
    pub pfc_pause_received: u64,
    /// PFC RESUME frames received from the switch.
    pub pfc_resume_received: u64,
    /// Data that found its receive pool full (PFC failed to hold the sender back).
    pub ingress_drops: u64,
    /// Out-of-sequence data dropped by go-back-N.
    pub out_of_sequence: u64,
    /// Connection requests that reached a host nobody listens on.
    pub rejected_requests: u64,
    /// WQEs completed on this NIC's Initiator queue pairs.
    pub wqes_completed: u64,
    /// CNPs sent as notification point.
    pub cnps_sent: u64,
    /// CNPs received, whether or not a controller reacted.
    pub cnps_received: u64,
    /// CE-marked data packets received.
    pub ce_received: u64,
    /// Peak bytes held in each receive pool.
    pub ingress_peak: [u64; 8],
    /// Peak bytes held in each transmit pool.
    pub egress_peak: [u64; 8],
}

/// The NIC of one host: row `host` of `Store<RoceNic>`. In declared order (`repr(C)`): the
/// per-class part last, after the head every event reads (`warm_head`).
#[derive(Debug)]
#[repr(C)]
pub struct RoceNic {
    /// The host whose NIC this is: its row in `Store<RoceNic>`.
    pub host: u32,
    /// The NIC's own event source: its timers and the contract events it sends come from it.
    pub source: SourceId,
    /// The application sent `listen`: connection requests are answered, else rejected
    /// (`NicCounters::rejected_requests`).
    pub listening: bool,
    /// Its queue pairs of both roles, indexed by QPN.
    pub qps: Vec<Qp>,
    /// Queue pair number of each connection this NIC initiates, by connection id: a doorbell
    /// finds its queue pair without scanning them all (64+ per NIC in many-connection runs).
    pub initiator_qpn: std::collections::HashMap<u32, u32>,
    /// Frames sent ahead of data: PFC, ACK/NAK, connection setup.
    pub ctrl: VecDeque<Packet>,
    /// Bit c: class `c`'s round robin is not empty (the scheduler visits only those classes).
    pub(crate) rr_mask: u8,
    /// Earliest pending transmit wake-up (`SimTime::MAX`: none).
    pub tx_timer: SimTime,
    /// The recording window, [start, end).
    pub window: (SimTime, SimTime),
    /// What it counted.
    pub counters: NicCounters,
    /// A slow receiver (an injected fault): the receive pool drains no faster than this.
    pub slow_drain: Option<SlowDrain>,
    /// Each traffic class's pools, PFC state and queues: last, after the row's head.
    pub class: [NicClass; 8],
}

/// One traffic class of a NIC: its two pools, its PFC state and its queues, together on three
/// lines, since a packet's work reads and writes one class and each line is a miss on a large
/// fabric.
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct NicClass {
    /// The transmit pool, in bytes (0: no pool).
    pub egress_cap: u64,
    /// Payload bytes the transmit pool holds: fetched, or being fetched, and not yet sent.
    pub egress_used: u64,
    /// The receive pool, in bytes (0: no pool).
    pub ingress_cap: u64,
    /// Wire bytes the receive pool holds until their payload's write to host memory is done.
    pub ingress_used: u64,
    /// Receive pool occupancy in bytes above which the NIC sends PAUSE (`PfcXoffFraction` of
    /// the pool).
    pub xoff: u64,
    /// Occupancy in bytes at or below which it sends RESUME (`PfcXonFraction` of the pool).
    pub xon: u64,
    /// When the pending `roce.resume` check fires (`SimTime::MAX`: none).
    pub resume_timer: SimTime,
    /// The switch has paused this class on our port.
    pub paused: bool,
    /// This NIC has paused the class upstream: PAUSE sent, RESUME not yet.
    pub upstream_paused: bool,
    /// Queue pairs with something to send, served round-robin per packet. Changed only through
    /// `RoceNic::rr_push` and `rr_pop`, which keep `RoceNic::rr_mask`.
    pub(crate) rr: Ring<u32>,
    /// Queue pairs waiting for room in the transmit pool.
    pub fetch_waiters: Ring<u32>,
    /// Payload writes to host memory in flight: (done at, bytes held).
    pub writes: Ring<(SimTime, u64)>,
}

/// A receive pool drained at a fixed rate: each packet leaves the pool when its host-memory
/// write is done and the drain has passed the bytes ahead of it.
#[derive(Clone, Copy, Debug)]
pub struct SlowDrain {
    /// The drain's rate, in bits per second.
    pub rate: engine::units::Rate,
    /// When the drain has passed every packet admitted so far.
    pub free_at: SimTime,
}

impl SlowDrain {
    /// When a packet of `bytes` admitted at `now`, whose write is done at `done`, leaves the pool.
    pub fn leave(&mut self, now: SimTime, done: SimTime, bytes: u64) -> SimTime {
        self.free_at = self.free_at.max(now) + self.rate.serialization_time(bytes);
        done.max(self.free_at)
    }
}

impl RoceNic {
    /// The NIC of `host` with no queue pairs, not listening, its pools and PFC thresholds
    /// from `cfg`.
    pub fn new(host: u32, source: SourceId, cfg: &RoceNicConfig) -> Self {
        let ingress = cfg.IngressBufferManager.as_buffer().pools();
        let egress = cfg.EgressBufferManager.pools();
        RoceNic {
            host,
            source,
            listening: false,
            qps: Vec::new(),
            initiator_qpn: std::collections::HashMap::new(),
            ctrl: VecDeque::new(),
            rr_mask: 0,
            tx_timer: SimTime::MAX,
            window: (SimTime::ZERO, SimTime::MAX),
            counters: NicCounters::default(),
            slow_drain: None,
            class: std::array::from_fn(|c| NicClass {
                egress_cap: egress[c],
                ingress_cap: ingress[c],
                xoff: (ingress[c] as f64 * cfg.IngressBufferManager.PfcXoffFraction) as u64,
                xon: (ingress[c] as f64 * cfg.IngressBufferManager.PfcXonFraction) as u64,
                resume_timer: SimTime::MAX,
                ..Default::default()
            }),
        }
    }

    /// Starts loading the row's head, the fields before `class` (warming an event at this NIC;
    /// `warm_class` then loads the classes it touches).
    #[inline]
    pub fn warm_head(&self) {
        engine::prefetch::prefetch_head(self, std::mem::offset_of!(RoceNic, class));
    }

    /// Starts loading class `c`'s lines.
    #[inline]
    pub fn warm_class(&self, c: u8) {
        engine::prefetch::prefetch_lines(&self.class[(c & 7) as usize]);
    }

    /// Starts loading the oldest and the next of class `c`'s writes to host memory, which a
    /// packet's arrival drains and appends to (its class warmed a step earlier: `warm_class`).
    #[inline]
    pub fn warm_writes(&self, c: u8) {
        let writes = &self.class[(c & 7) as usize].writes;
        if let Some(oldest) = writes.front() {
            engine::prefetch::prefetch(oldest);
        }
        if let Some(next) = writes.next_slot() {
            engine::prefetch::prefetch_write(next);
        }
    }

    /// Warms, `step` (0 to 2) at a time, what the scheduler (`Parts::pump`) reads first when
    /// this NIC's port is free: the front of its highest class's round robin (0), the queue pair
    /// there (1), and when its active WQE's next payload is at the NIC (2). Each step reads
    /// only what the one before loaded.
    #[inline]
    pub fn warm_next_qp(&self, step: usize) {
        if self.rr_mask == 0 {
            return;
        }
        let c = (7 - self.rr_mask.leading_zeros() as usize) & 7;
        let Some(front) = self.class[c].rr.front() else { return };
        if step == 0 {
            engine::prefetch::prefetch(front);
            return;
        }
        let Some(qp) = self.qps.get(*front as usize) else {
            return;
        };
        if step == 1 {
            engine::prefetch::prefetch_lines(qp);
        } else if let Some(t) = qp.active.as_ref().and_then(|a| a.ready.front()) {
            engine::prefetch::prefetch(t);
        }
    }

    /// Is there anything the port could send (now or once fetched or resumed)?
    pub fn has_tx_work(&self) -> bool {
        !self.ctrl.is_empty() || self.rr_mask != 0
    }

    /// Puts queue pair `qpn` at the back of class `c`'s round robin.
    #[inline]
    pub(crate) fn rr_push(&mut self, c: usize, qpn: u32) {
        self.class[c].rr.push_back(qpn);
        self.rr_mask |= 1 << c;
    }

    /// Takes the queue pair at the front of class `c`'s round robin.
    #[inline]
    pub(crate) fn rr_pop(&mut self, c: usize) -> Option<u32> {
        let qpn = self.class[c].rr.pop_front();
        if self.class[c].rr.is_empty() {
            self.rr_mask &= !(1 << c);
        }
        qpn
    }
}

impl RoceNic {
    /// What queue pair `qpn` has done so far, for its entity.
    pub fn progress(&self, qpn: u32) -> Option<QpProgress> {
        let qp = self.qps.get(qpn as usize)?;
        Some(match qp.role {
            // `next_psn` is past the whole active WQE from its activation on.
            QpRole::Initiator => QpProgress::initiator(
                qp.active.as_ref().map_or(qp.next_psn, |a| a.first_psn + a.sent),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_fills_three_lines_after_the_rows_head() {
        // The warming loads the head and one class's lines (`warm_head`, `warm_class`): the
        // class must be on lines of its own, and the head all that comes before the classes.
        assert_eq!(std::mem::align_of::<NicClass>(), 64);
        assert_eq!(std::mem::size_of::<NicClass>(), 3 * 64);
        let head = std::mem::offset_of!(RoceNic, class);
        assert_eq!(
            head + 8 * 3 * 64,
            std::mem::size_of::<RoceNic>(),
            "the classes end the row"
        );
        assert!(head <= 8 * 64, "a head of {head} bytes");
    }

    #[test]
    fn each_class_starts_with_its_pools_and_thresholds() {
        let mut cfg = RoceNicConfig::default();
        cfg.IngressBufferManager.PfcXoffFraction = 0.5;
        cfg.IngressBufferManager.PfcXonFraction = 0.25;
        let nic = RoceNic::new(3, SourceId::ENGINE, &cfg);
        let (egress, ingress) = (
            cfg.EgressBufferManager.pools(),
            cfg.IngressBufferManager.as_buffer().pools(),
        );
        assert!(egress[0] > 0 && ingress[0] > 0, "the default has pools to check");
        for (c, k) in nic.class.iter().enumerate() {
            assert_eq!((k.egress_cap, k.ingress_cap), (egress[c], ingress[c]), "class {c}");
            assert_eq!((k.xoff, k.xon), (ingress[c] / 2, ingress[c] / 4), "class {c}");
            assert_eq!((k.egress_used, k.ingress_used, k.resume_timer), (0, 0, SimTime::MAX));
            assert!(!k.paused && !k.upstream_paused && k.rr.is_empty() && k.writes.is_empty());
        }
    }
}
