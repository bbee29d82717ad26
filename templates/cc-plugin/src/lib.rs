//! A fixed-window congestion controller, the template a fork's controller starts from: every
//! queue pair may have at most `Bytes` on the wire unacknowledged (headers included), whatever
//! the network says. The whole controller is the window it sets when the NIC makes it; a real
//! one (DCQCN, Swift, HPCC) would change the gate in its hooks. See README.md.
//!
//! ```
//! use fixed_window_cc::FixedWindowConfig;
//! let c: FixedWindowConfig = ron::from_str(r#"(Bytes: "128KiB")"#).unwrap();
//! assert_eq!(c.Bytes.0, 128 << 10);
//! ```

#![warn(missing_docs)]

use engine::prelude::*;
use engine::scenario::FieldError;
use engine::units::Size;
use models::cc::{CONTROLLERS, CcModel, CongestionControl, Feedback, Gate, QpInfo, Sent};
use serde::{Deserialize, Serialize};

/// The name a scenario selects it by: `CongestionControl: FixedWindow((Bytes: "128KiB"))`.
pub const NAME: &str = "FixedWindow";

/// Registers the controller in `models::cc::CONTROLLERS`, so that scenarios loaded after it can
/// name it. A program (or a test) calls this once before loading a scenario.
pub fn register() {
    CONTROLLERS.register::<FixedWindowConfig>(NAME);
}

/// `FixedWindow((Bytes: "128KiB"))`.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FixedWindowConfig {
    /// Bytes on the wire (headers included) each queue pair may have unacknowledged. Default
    /// `FixedWindowConfig::DEFAULT_BYTES`; more than 0.
    pub Bytes: Size,
}

impl FixedWindowConfig {
    /// Default `Bytes`: 256 KiB, above a 400 Gbps port's bandwidth-delay product on a 1 us star
    /// (ours).
    pub const DEFAULT_BYTES: u64 = 256 << 10;
}

impl Default for FixedWindowConfig {
    fn default() -> Self {
        FixedWindowConfig {
            Bytes: Size(Self::DEFAULT_BYTES),
        }
    }
}

/// One queue pair's controller: nothing to remember, the gate holds the window.
#[derive(Debug)]
pub struct FixedWindow;

impl CongestionControl for FixedWindow {
    fn on_send(&mut self, _now: SimTime, _gate: &mut Gate, _sent: &Sent) {}
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl CcModel for FixedWindowConfig {
    fn validate(&self) -> Result<(), FieldError> {
        if self.Bytes.0 == 0 {
            return Err(FieldError::new("Bytes", "must be more than 0 bytes"));
        }
        Ok(())
    }
    /// A fixed window needs nothing from the receivers.
    fn feedback(&self) -> Feedback {
        Feedback::default()
    }
    fn new_qp(&self, _qp: &QpInfo, gate: &mut Gate) -> Box<dyn CongestionControl> {
        gate.window = self.Bytes.0;
        Box::new(FixedWindow)
    }
    fn clone_box(&self) -> Box<dyn CcModel> {
        Box::new(self.clone())
    }
}

impl engine::registry::Choice<dyn CcModel> for FixedWindowConfig {
    fn boxed(self) -> Box<dyn CcModel> {
        Box::new(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use models::cc::QpCc;

    #[test]
    fn the_window_is_set_when_the_queue_pair_starts() {
        let qp = QpInfo {
            host: 0,
            qpn: 0,
            connection: 0,
            remote_host: 1,
            class: 0,
            port_rate: Rate::gbps(400),
        };
        let cc = QpCc::new(&FixedWindowConfig { Bytes: Size(8192) }, &qp);
        assert_eq!(cc.gate.window, 8192);
        // Below the window a packet may start now; at it, only an ACK opens the gate.
        assert_eq!(cc.gate.wait(SimTime::ZERO, 8191), None);
        assert_eq!(cc.gate.wait(SimTime::ZERO, 8192), Some(SimTime::MAX));
    }

    #[test]
    fn a_zero_window_is_rejected_at_its_field() {
        let e = FixedWindowConfig { Bytes: Size(0) }.validate().unwrap_err();
        assert!(e.to_string().contains("Bytes"), "{e}");
    }
}
