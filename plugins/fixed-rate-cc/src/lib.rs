//! A fixed-rate pacer, the congestion-control contract's (`models::cc`) smallest controller:
//! every queue pair sends at `Rate` at most, whatever the network says. It asks for every
//! congestion signal (CNPs, ECN echoes) and counts each hook it gets without acting on it, so
//! the contract's tests can see the NIC deliver them. See README.md.
//!
//! ```
//! use fixed_rate_cc::FixedRateConfig;
//! let c: FixedRateConfig = ron::from_str(r#"(Rate: "100Gbps")"#).unwrap();
//! assert_eq!(c.Rate, engine::Rate::gbps(100));
//! ```

use engine::prelude::*;
use engine::scenario::FieldError;
use models::cc::{Acked, CcModel, CongestionControl, EcnEcho, Feedback, Gate, Nak, QpInfo, Sent, paced_next_send};
use serde::{Deserialize, Serialize};

/// `FixedRate((Rate: "100Gbps"))`.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FixedRateConfig {
    /// Each queue pair's rate on the wire, headers included. Default 100 Gbps (ours); more than
    /// 0. A rate at or above the port's leaves the port the only limit.
    pub Rate: Rate,
}

impl Default for FixedRateConfig {
    fn default() -> Self {
        FixedRateConfig { Rate: Rate::gbps(100) }
    }
}

/// What one queue pair's pacer was told, hook by hook.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HookCounts {
    /// Packets sent (`on_send`), first sends and retransmissions.
    pub sends: u64,
    /// Of `sends`, the retransmissions.
    pub retransmits: u64,
    /// ACKs received (`on_ack`).
    pub acks: u64,
    /// NAKs received (`on_nak`).
    pub naks: u64,
    /// CNPs received (`on_cnp`).
    pub cnps: u64,
    /// ACKs with an ECN echo (`on_ecn_echo`).
    pub ecn_echoes: u64,
    /// The CE-marked packets those echoes reported.
    pub ecn_marked: u64,
    /// Retransmission timeouts (`on_timeout`).
    pub timeouts: u64,
}

/// One queue pair's pacer.
#[derive(Debug)]
pub struct FixedRate {
    /// The pace, from `FixedRateConfig::Rate`.
    pub rate: Rate,
    /// The hooks the NIC called, for the contract's tests.
    pub counts: HookCounts,
}

impl FixedRate {
    /// When the packet after `sent` may start: `sent`'s first bit plus its bytes at the rate.
    pub fn next_send(&self, sent: &Sent) -> SimTime {
        paced_next_send(self.rate, sent)
    }
}

impl CongestionControl for FixedRate {
    fn on_send(&mut self, _now: SimTime, gate: &mut Gate, sent: &Sent) {
        self.counts.sends += 1;
        self.counts.retransmits += sent.retransmit as u64;
        gate.next_send = self.next_send(sent);
    }
    fn on_ack(&mut self, _now: SimTime, _gate: &mut Gate, _ack: &Acked) {
        self.counts.acks += 1;
    }
    fn on_nak(&mut self, _now: SimTime, _gate: &mut Gate, _nak: &Nak) {
        self.counts.naks += 1;
    }
    fn on_cnp(&mut self, _now: SimTime, _gate: &mut Gate) {
        self.counts.cnps += 1;
    }
    fn on_ecn_echo(&mut self, _now: SimTime, _gate: &mut Gate, echo: &EcnEcho) {
        self.counts.ecn_echoes += 1;
        self.counts.ecn_marked += echo.marked as u64;
    }
    fn on_timeout(&mut self, _now: SimTime, _gate: &mut Gate) {
        self.counts.timeouts += 1;
    }
    fn rate(&self) -> Option<Rate> {
        Some(self.rate)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl CcModel for FixedRateConfig {
    fn validate(&self) -> Result<(), FieldError> {
        if self.Rate.bps() == 0 {
            return Err(FieldError::new("Rate", "must be more than 0 bit/s"));
        }
        Ok(())
    }
    fn feedback(&self) -> Feedback {
        Feedback {
            cnp: true,
            ecn_echo: true,
            int: false,
        }
    }
    fn new_qp(&self, _qp: &QpInfo, _gate: &mut Gate) -> Box<dyn CongestionControl> {
        Box::new(FixedRate {
            rate: self.Rate,
            counts: HookCounts::default(),
        })
    }
    fn clone_box(&self) -> Box<dyn CcModel> {
        Box::new(self.clone())
    }
}

impl engine::registry::Choice<dyn CcModel> for FixedRateConfig {
    fn boxed(self) -> Box<dyn CcModel> {
        Box::new(self)
    }
}

#[cfg(test)]
mod tests;
