//! HPCC, High Precision Congestion Control (Li et al., SIGCOMM 2019), as a controller of the
//! congestion-control contract (`models::cc`): each queue pair keeps a window `W` and sends at
//! `R = W / T` (T the base round trip), both set from the in-band telemetry the switches on its
//! path push into its data packets and its receiver echoes in ACKs (`Feedback::int`,
//! `models::int`). The update is the paper's Algorithm 1, as the authors' ns-3 code runs it
//! (`RdmaHw::UpdateRateHp`, `FastReactHp`): see [`Hpcc`] and README.md.
//!
//! ```
//! use hpcc::HpccConfig;
//! use models::cc::CcModel;
//! let c: HpccConfig = ron::from_str(r#"(UTarget: 0.95, MaxStage: 5, BaseRtt: "5us")"#).unwrap();
//! assert!(c.validate().is_ok() && c.feedback().int);
//! ```

mod config;
mod control;

pub use config::HpccConfig;
pub use control::Hpcc;

use models::cc::{CcModel, CongestionControl, Feedback, Gate, QpInfo};

impl CcModel for HpccConfig {
    fn validate(&self) -> Result<(), engine::scenario::FieldError> {
        HpccConfig::validate(self)
    }
    /// INT only: HPCC reacts to nothing else.
    fn feedback(&self) -> Feedback {
        Feedback {
            int: true,
            ..Feedback::default()
        }
    }
    fn new_qp(&self, qp: &QpInfo, gate: &mut Gate) -> Box<dyn CongestionControl> {
        let hpcc = Hpcc::new(self, qp.port_rate);
        gate.window = hpcc.window_bytes();
        Box::new(hpcc)
    }
    fn clone_box(&self) -> Box<dyn CcModel> {
        Box::new(self.clone())
    }
}

impl engine::registry::Choice<dyn CcModel> for HpccConfig {
    fn boxed(self) -> Box<dyn CcModel> {
        Box::new(self)
    }
}

#[cfg(test)]
mod tests;
