//! The progress watchdog: its settings (the scenario's top-level `watchdog` field) and what it
//! found. Two checks fill `WatchdogReport` at every beacon tick and at the end of the run: the
//! application's (a connection with work outstanding that completes none for `StallTimeout`,
//! `scala_rdma::watchdog`) and the fabric's (a cycle of PFC-paused switch ports held for
//! `PfcDeadlockTimeout`, `fabric::deadlock`). Both compare state between ticks: nothing runs per
//! packet or per event. The run's summary and manifest carry the report; with `Fatal` a
//! non-empty report makes `rdmasim run` exit 1.

use bevy_ecs::prelude::*;
use engine::params::PositiveDuration;
use engine::prelude::*;
use serde::{Deserialize, Serialize};

/// `watchdog: (StallTimeout: 0.2, PfcDeadlockTimeout: 0.005, Fatal: false)`.
#[allow(non_snake_case)]
#[derive(Resource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WatchdogConfig {
    /// Time a connection with WQEs outstanding (or a connection request unanswered) may go
    /// without completing one before it is reported. Default 0.2 s (ours): three times a RoCE
    /// NIC's 67.1 ms local ACK timeout (4.096 us x 2^14), so a go-back-N recovery after a
    /// timeout, or two in a row, is never taken for a stall.
    pub StallTimeout: PositiveDuration,
    /// Time every port of a cycle of PFC-paused switch ports must stay paused, with the same
    /// packet at the head of its queue, before the cycle is reported as a deadlock. Default
    /// 0.005 s (ours): a healthy pause lasts about one drain of XOFF - XON (microseconds).
    pub PfcDeadlockTimeout: PositiveDuration,
    /// Any finding makes `rdmasim run` exit 1 (CI use; `--strict` sets it too). Default false.
    pub Fatal: bool,
}

impl WatchdogConfig {
    /// Default `StallTimeout`: 200 ms.
    pub const DEFAULT_STALL_TIMEOUT_MS: u64 = 200;
    /// Default `PfcDeadlockTimeout`: 5 ms.
    pub const DEFAULT_PFC_DEADLOCK_TIMEOUT_MS: u64 = 5;
}

impl Default for WatchdogConfig {
    fn default() -> Self {
        WatchdogConfig {
            StallTimeout: PositiveDuration(Duration(SimTime::from_us(Self::DEFAULT_STALL_TIMEOUT_MS * 1000))),
            PfcDeadlockTimeout: PositiveDuration(Duration(SimTime::from_us(
                Self::DEFAULT_PFC_DEADLOCK_TIMEOUT_MS * 1000,
            ))),
            Fatal: false,
        }
    }
}

/// A connection that made no progress for `StallTimeout`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StalledConnection {
    /// The connection's id.
    pub connection: u32,
    /// Node id and name of the Initiator's and the Responder's hosts.
    pub initiator: u32,
    /// The Initiator host's name.
    pub initiator_name: String,
    /// The Responder's node id.
    pub responder: u32,
    /// The Responder host's name.
    pub responder_name: String,
    /// The connection's index within its pair (`connection_index` in rdma-perf).
    pub index: u32,
    /// The traffic class of its data.
    pub class: u8,
    /// `setup`: its connection request was never answered; `data`: WQEs outstanding.
    pub phase: String,
    /// WQEs posted so far.
    pub posted: u64,
    /// WQEs completed so far.
    pub completed: u64,
    /// The last check at which it was seen progressing (or idle), in simulated seconds: it has
    /// completed nothing since at least then.
    pub since_sec: f64,
    /// The check that reported it.
    pub detected_sec: f64,
    /// The check at which it completed a WQE again, if it did.
    pub resumed_sec: Option<f64>,
    /// Its queue pairs' state from the NIC (`nic::QpDiagnostics`), at detection.
    pub qp_state: String,
}

/// One port of a PFC deadlock's cycle: `switch`'s egress `port` toward `toward` is paused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PausedPort {
    /// The switch's name.
    pub switch: String,
    /// Its node id.
    pub node: u32,
    /// The paused egress port.
    pub port: u16,
    /// The node that port leads to.
    pub toward: String,
}

/// A cycle of paused switch ports in one class, each waiting for the next.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PfcDeadlock {
    /// The traffic class.
    pub class: u8,
    /// Since when every port of the cycle has been paused (the last of them to pause).
    pub since_sec: f64,
    /// The check that reported it, in simulated seconds.
    pub detected_sec: f64,
    /// The paused ports, each waiting for the next.
    pub cycle: Vec<PausedPort>,
}

/// What the watchdog found, in the order found. Empty on a healthy run.
#[derive(Resource, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WatchdogReport {
    /// Connections that stalled.
    pub stalls: Vec<StalledConnection>,
    /// PFC deadlocks.
    pub deadlocks: Vec<PfcDeadlock>,
}

impl WatchdogReport {
    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.stalls.is_empty() && self.deadlocks.is_empty()
    }
}

impl std::fmt::Display for StalledConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.phase.as_str() {
            "setup" => "its connection request is unanswered".to_string(),
            _ => format!(
                "{} WQEs outstanding ({} posted, {} completed)",
                self.posted - self.completed,
                self.posted,
                self.completed
            ),
        };
        write!(
            f,
            "connection {} (Initiator {} {} -> Responder {} {}, index {}, class {}): {what}, no progress since {:.6} s (seen at {:.6} s",
            self.connection,
            self.initiator,
            self.initiator_name,
            self.responder,
            self.responder_name,
            self.index,
            self.class,
            self.since_sec,
            self.detected_sec,
        )?;
        if let Some(r) = self.resumed_sec {
            write!(f, ", resumed at {r:.6} s")?;
        }
        write!(f, "); queue pairs: {}", self.qp_state)
    }
}

impl std::fmt::Display for PfcDeadlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PFC deadlock in class {} since {:.6} s (seen at {:.6} s):",
            self.class, self.since_sec, self.detected_sec
        )?;
        for p in &self.cycle {
            write!(f, " {} port {} -> {},", p.switch, p.port, p.toward)?;
        }
        match self.cycle.first() {
            Some(p) => write!(f, " back to {}", p.switch),
            None => Ok(()),
        }
    }
}
