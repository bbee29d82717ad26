//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015) as a
//! controller of the congestion-control contract (`models::cc`): the reaction point on the
//! sending NIC. The other two parts are not here: the notification point (a CNP per queue pair
//! at most once per `CnpInterval` for CE-marked data) is the RoCE NIC's, turned on because this
//! controller asks for CNPs ([`models::cc::Feedback`]); the congestion point is the switch's RED
//! marking (`switch.Ecn`). See README.md.
//!
//! ```
//! use dcqcn::{Dcqcn, DcqcnConfig};
//! use engine::prelude::*;
//!
//! let c: DcqcnConfig = ron::from_str("(RpTimer: \"100us\")").unwrap();
//! let mut rp = Dcqcn::new(&c, Rate::gbps(400));
//! // The first CNP, alpha 1: Rt = Rc = 400 Gbps, Rc = 400 x (1 - 1/2) = 200 Gbps.
//! rp.cnp(SimTime::from_us(10));
//! assert_eq!(rp.current_rate(), Rate::gbps(200));
//! // The timer's first event is fast recovery: Rc = (400 + 200) / 2 = 300 Gbps.
//! rp.timer(SimTime::from_us(110));
//! assert_eq!(rp.current_rate(), Rate::gbps(300));
//! ```

pub mod config;
pub mod rp;

pub use config::DcqcnConfig;
pub use rp::{Dcqcn, Stage};

use engine::scenario::FieldError;
use models::cc::{CcModel, CongestionControl, Feedback, Gate, QpInfo};

impl CcModel for DcqcnConfig {
    fn validate(&self) -> Result<(), FieldError> {
        self.check()
    }
    /// CNPs only: DCQCN reacts to nothing else.
    fn feedback(&self) -> Feedback {
        Feedback {
            cnp: true,
            ecn_echo: false,
            int: false,
        }
    }
    fn new_qp(&self, qp: &QpInfo, _gate: &mut Gate) -> Box<dyn CongestionControl> {
        Box::new(Dcqcn::new(self, qp.port_rate))
    }
    fn clone_box(&self) -> Box<dyn CcModel> {
        Box::new(self.clone())
    }
}

impl engine::registry::Choice<dyn CcModel> for DcqcnConfig {
    fn boxed(self) -> Box<dyn CcModel> {
        Box::new(self)
    }
}

#[cfg(test)]
mod tests;
