//! The Scala RoCE NIC model: segmentation, the payload fetch over PCIe pipelined with
//! transmission, transmit queues per traffic class, egress and ingress buffer managers with PFC,
//! acknowledgments, go-back-N. It implements the NIC contract of `models::nic`; see README.md.
pub mod config;
pub mod counters;
pub mod diagnostics;
pub mod plugin;
pub mod rx;
pub mod state;
pub mod tx;

pub use config::RoceNicConfig;
pub use plugin::{RoceNicPlugin, RoceNics};
pub use state::{NicCounters, RoceNic};

impl models::nic::NicModel for RoceNicConfig {
    fn validate(&self) -> Result<(), engine::scenario::FieldError> {
        RoceNicConfig::validate(self)
    }
    fn pools(&self) -> models::nic::NicPools {
        models::nic::NicPools {
            egress: self.EgressBufferManager.has_pool(),
            ingress: self.IngressBufferManager.as_buffer().has_pool(),
        }
    }
    fn port_rate(&self) -> Option<engine::Rate> {
        Some(self.PortRate)
    }
    fn carries_int(&self) -> bool {
        self.CongestionControl.feedback().int
    }
    fn add_to(&self, app: &mut engine::app::App) {
        app.add_plugins(RoceNicPlugin { config: self.clone() });
    }
    fn clone_box(&self) -> Box<dyn models::nic::NicModel> {
        Box::new(self.clone())
    }
}

impl engine::registry::Choice<dyn models::nic::NicModel> for RoceNicConfig {
    fn boxed(self) -> Box<dyn models::nic::NicModel> {
        Box::new(self)
    }
}
