//! The congestion-control contract: what a NIC tells a queue pair's controller, and the gate
//! (pacing time, window, timer) the NIC obeys for that queue pair.
//!
//! A controller is one crate: a config type implementing [`CcModel`], registered by name in
//! [`CONTROLLERS`], so a scenario selects it with one RON line,
//! `nic: RoceNic((CongestionControl: FixedRate((Rate: "100Gbps"))))`; `None` (the default) is no
//! controller at all, and the NIC runs as if this module did not exist. For each queue pair that
//! sends, the NIC asks the model for a [`CongestionControl`] and keeps it with its [`Gate`] in a
//! [`QpCc`]. The NIC calls the hooks:
//!
//! | hook | when |
//! | --- | --- |
//! | `on_send` | a data packet of the queue pair is put on the wire (`Sent::at` is its first bit) |
//! | `on_ack` | an ACK acknowledges more of the queue pair's data |
//! | `on_nak` | a NAK asks the queue pair to go back to a PSN (before the NIC rewinds) |
//! | `on_cnp` | a congestion notification packet (CNP) for the queue pair arrives |
//! | `on_ecn_echo` | an ACK echoes data packets that arrived CE-marked (before its `on_ack`) |
//! | `on_int` | an ACK echoes the INT hop records of the data packet it answers (before its `on_ack`) |
//! | `on_timeout` | the retransmission timer fired (before the NIC rewinds) |
//! | `on_timer` | the time the controller asked for in `Gate::wake_at` came |
//!
//! and obeys the gate: it starts no data packet of the queue pair before `next_send`, nor while
//! the queue pair's bytes in flight (sent, not yet acknowledged) are `window` or more.
//!
//! **Feedback from the receiver.** A model declares the signals it needs ([`Feedback`]): with
//! `cnp`, every NIC is a notification point (RoCEv2 annex A17.9): for CE-marked data it sends
//! the data's sender a CNP (BTH opcode 0x81, `wire::CNP_BYTES` on the wire), at most one per
//! queue pair per CNP interval; with `ecn_echo`, each ACK carries the count of CE-marked data
//! packets it answers. With `int`, the sending NIC marks its data packets for in-band telemetry
//! (`models::int`), every switch they pass pushes a hop record (queue length, bytes sent,
//! time, line rate), and the ACK answering a packet echoes its records to `on_int`; the INT
//! header's bytes (`models::int::HEADER_BYTES`) are on the wire in both. With none, the receiver
//! behaves as without congestion control.
//!
//! A fixed-rate pacer, the whole of a controller:
//!
//! ```
//! use engine::prelude::*;
//! use models::cc::{CcModel, CongestionControl, Feedback, Gate, QpInfo, Sent};
//!
//! #[derive(Clone, Debug)]
//! struct Pace(Rate);
//!
//! #[derive(Debug)]
//! struct PaceQp(Rate);
//!
//! impl CongestionControl for PaceQp {
//!     fn on_send(&mut self, _now: SimTime, gate: &mut Gate, sent: &Sent) {
//!         gate.next_send = sent.at + self.0.serialization_time(sent.bytes as u64);
//!     }
//!     fn as_any(&self) -> &dyn std::any::Any {
//!         self
//!     }
//! }
//!
//! impl CcModel for Pace {
//!     fn feedback(&self) -> Feedback {
//!         Feedback::default()
//!     }
//!     fn new_qp(&self, _qp: &QpInfo, _gate: &mut Gate) -> Box<dyn CongestionControl> {
//!         Box::new(PaceQp(self.0))
//!     }
//!     fn clone_box(&self) -> Box<dyn CcModel> {
//!         Box::new(self.clone())
//!     }
//! }
//!
//! let qp = QpInfo { host: 0, qpn: 0, connection: 0, remote_host: 1, class: 0, port_rate: Rate::gbps(400) };
//! let mut cc = models::cc::QpCc::new(&Pace(Rate::gbps(100)), &qp);
//! let sent = Sent { at: SimTime::from_us(1), psn: 0, bytes: 4154, payload: 4096, retransmit: false, in_flight: 4154 };
//! cc.on_send(SimTime::from_us(1), &sent);
//! // 4,154 B at 100 Gbps is 332,320 ps.
//! assert_eq!(cc.gate.next_send, SimTime::from_us(1) + SimTime::from_ps(332_320));
//! ```

mod choice;

pub use choice::CcChoice;

use crate::int::IntHop;
use engine::SimTime;
use engine::registry::{Registered, Registry};
use engine::scenario::FieldError;
use engine::units::Rate;
use std::fmt::Debug;

/// What the NIC obeys for one queue pair; the controller changes it in its hooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gate {
    /// The earliest time the queue pair's next data packet may start on the wire.
    pub next_send: SimTime,
    /// Bytes on the wire (headers included) the queue pair may have in flight: no packet starts
    /// while it has this many or more unacknowledged. `u64::MAX`: no window.
    pub window: u64,
    /// When to call `on_timer` (`SimTime::MAX`: never). The NIC keeps one timer per queue
    /// pair; a time not after `now` left by `on_timer` itself is cleared.
    pub wake_at: SimTime,
}

impl Gate {
    /// No pacing, no window, no timer: how a queue pair without congestion control sends.
    pub const OPEN: Gate = Gate {
        next_send: SimTime::ZERO,
        window: u64::MAX,
        wake_at: SimTime::MAX,
    };

    /// When a packet could start, at `at` with `in_flight` bytes unacknowledged: `None` if it
    /// may start now, `Some(t)` once the pacing allows at `t`, `Some(SimTime::MAX)` when only
    /// an acknowledgment can open the window.
    #[inline]
    pub fn wait(&self, at: SimTime, in_flight: u64) -> Option<SimTime> {
        if in_flight >= self.window {
            Some(SimTime::MAX)
        } else if self.next_send > at {
            Some(self.next_send)
        } else {
            None
        }
    }
}

impl Default for Gate {
    fn default() -> Self {
        Gate::OPEN
    }
}

/// The queue pair a controller is made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpInfo {
    /// The sending host (node id) and the queue pair's number there.
    pub host: u32,
    /// The queue pair's number on that host.
    pub qpn: u32,
    /// The connection id (`models::nic::ConnectionSpec::id`).
    pub connection: u32,
    /// The receiving host (node id).
    pub remote_host: u32,
    /// The traffic class its data goes in.
    pub class: u8,
    /// The NIC's port rate (line rate).
    pub port_rate: Rate,
}

/// A data packet put on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    /// When its first bit leaves (at or after the hook's `now`: the port may be busy).
    pub at: SimTime,
    /// Its PSN.
    pub psn: u32,
    /// Bytes on the wire, headers included.
    pub bytes: u32,
    /// Its payload bytes.
    pub payload: u32,
    /// It was sent before (go-back-N).
    pub retransmit: bool,
    /// The queue pair's bytes in flight, this packet included.
    pub in_flight: u64,
}

/// An ACK that acknowledged more data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Acked {
    /// Every packet up to and including this PSN is acknowledged (cumulative).
    pub psn: u32,
    /// Wire bytes this ACK acknowledged that were not acknowledged before.
    pub newly_acked: u64,
    /// The queue pair's bytes in flight after it.
    pub in_flight: u64,
    /// When the data it answers reached the receiver.
    pub data_arrived: SimTime,
}

/// A NAK: the receiver expects `psn` next, and the NIC goes back to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nak {
    /// The PSN the receiver expects next.
    pub psn: u32,
}

/// An ACK echoing CE marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EcnEcho {
    /// The ACK's PSN.
    pub psn: u32,
    /// CE-marked data packets the receiver got since its previous ACK on this queue pair.
    pub marked: u32,
}

/// An ACK echoing the INT hop records of the data packet it answers (`Feedback::int`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntEcho<'a> {
    /// The ACK's PSN: the data packet it answers.
    pub psn: u32,
    /// The records the switches on the data's path pushed, first hop first (at most
    /// `models::int::MAX_HOPS`).
    pub hops: &'a [IntHop],
}

/// The signals a controller needs from the receiving NIC and the fabric.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Feedback {
    /// Receivers send CNPs for CE-marked data (the notification point is on).
    pub cnp: bool,
    /// ACKs carry the count of CE-marked data packets they answer.
    pub ecn_echo: bool,
    /// Data packets carry in-band telemetry: each switch pushes a hop record, and the ACK
    /// answering a packet echoes them (`CongestionControl::on_int`).
    pub int: bool,
}

/// One queue pair's controller. Every hook may change the gate; all but `on_send` default to
/// doing nothing.
pub trait CongestionControl: Debug + Send + Sync + 'static {
    /// A data packet went on the wire (first send or retransmission).
    fn on_send(&mut self, now: SimTime, gate: &mut Gate, sent: &Sent);
    /// An ACK acknowledged more data.
    fn on_ack(&mut self, _now: SimTime, _gate: &mut Gate, _ack: &Acked) {}
    /// A NAK asks the queue pair to go back to a PSN (before the NIC rewinds).
    fn on_nak(&mut self, _now: SimTime, _gate: &mut Gate, _nak: &Nak) {}
    /// A CNP arrived from the notification point.
    fn on_cnp(&mut self, _now: SimTime, _gate: &mut Gate) {}
    /// An ACK echoed CE marks.
    fn on_ecn_echo(&mut self, _now: SimTime, _gate: &mut Gate, _echo: &EcnEcho) {}
    /// An ACK echoed the INT hop records of the data packet it answers (`Feedback::int`); called
    /// for every such ACK, before its `on_ack` (if it acknowledges more).
    fn on_int(&mut self, _now: SimTime, _gate: &mut Gate, _echo: &IntEcho) {}
    /// The retransmission timer fired (before the NIC rewinds).
    fn on_timeout(&mut self, _now: SimTime, _gate: &mut Gate) {}
    /// The controller's own timer (`Gate::wake_at`) came due.
    fn on_timer(&mut self, _now: SimTime, _gate: &mut Gate) {}
    /// The controller's current sending rate, for telemetry (`cc-rate` record); `None`: it has none.
    fn rate(&self) -> Option<Rate> {
        None
    }
    /// For tests and beacon columns that read a controller's own state.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A controller's config, as a scenario selects it (`CongestionControl: Name((...))`).
pub trait CcModel: Debug + Send + Sync + 'static {
    /// Checks the config; the error's field is relative to the selection (`Rate`).
    fn validate(&self) -> Result<(), FieldError> {
        Ok(())
    }
    /// The signals it needs from receivers.
    fn feedback(&self) -> Feedback;
    /// A controller for a queue pair that starts sending; it may set the initial gate.
    fn new_qp(&self, qp: &QpInfo, gate: &mut Gate) -> Box<dyn CongestionControl>;
    /// A copy, for configs that are cloned.
    fn clone_box(&self) -> Box<dyn CcModel>;
}

/// The controllers a scenario can name; the program registers the built-in ones, a fork adds
/// its own with `CONTROLLERS.register::<MyCcConfig>("MyCc")`.
pub static CONTROLLERS: Registry<dyn CcModel> = Registry::new("CongestionControl");

impl Registered for dyn CcModel {
    fn registry() -> &'static Registry<dyn CcModel> {
        &CONTROLLERS
    }
}

/// One queue pair's congestion-control state, as a NIC keeps it: the controller and its gate.
#[derive(Debug)]
pub struct QpCc {
    /// What the controller allows: next send time, window, timer.
    pub gate: Gate,
    /// The controller.
    pub controller: Box<dyn CongestionControl>,
}

impl QpCc {
    /// A controller from `model` for `qp`, with the gate it sets up.
    pub fn new(model: &dyn CcModel, qp: &QpInfo) -> Self {
        let mut gate = Gate::OPEN;
        let controller = model.new_qp(qp, &mut gate);
        QpCc { gate, controller }
    }
    /// Passes `on_send` to the controller with the gate.
    pub fn on_send(&mut self, now: SimTime, sent: &Sent) {
        self.controller.on_send(now, &mut self.gate, sent);
    }
    /// Passes `on_ack` to the controller with the gate.
    pub fn on_ack(&mut self, now: SimTime, ack: &Acked) {
        self.controller.on_ack(now, &mut self.gate, ack);
    }
    /// Passes `on_nak` to the controller with the gate.
    pub fn on_nak(&mut self, now: SimTime, nak: &Nak) {
        self.controller.on_nak(now, &mut self.gate, nak);
    }
    /// Passes `on_cnp` to the controller with the gate.
    pub fn on_cnp(&mut self, now: SimTime) {
        self.controller.on_cnp(now, &mut self.gate);
    }
    /// Passes `on_ecn_echo` to the controller with the gate.
    pub fn on_ecn_echo(&mut self, now: SimTime, echo: &EcnEcho) {
        self.controller.on_ecn_echo(now, &mut self.gate, echo);
    }
    /// Passes `on_int` to the controller with the gate.
    pub fn on_int(&mut self, now: SimTime, echo: &IntEcho) {
        self.controller.on_int(now, &mut self.gate, echo);
    }
    /// Passes `on_timeout` to the controller with the gate.
    pub fn on_timeout(&mut self, now: SimTime) {
        self.controller.on_timeout(now, &mut self.gate);
    }
    /// Calls `on_timer`, then clears a `wake_at` that is not in the future (no busy loop).
    pub fn on_timer(&mut self, now: SimTime) {
        self.controller.on_timer(now, &mut self.gate);
        if self.gate.wake_at <= now {
            self.gate.wake_at = SimTime::MAX;
        }
    }
}

/// The pacing rule a rate-based controller applies on each send: the next packet may start
/// when this one would have ended at `rate`.
#[inline]
pub fn paced_next_send(rate: Rate, sent: &Sent) -> SimTime {
    sent.at + rate.serialization_time(sent.bytes as u64)
}

#[cfg(test)]
mod tests;
