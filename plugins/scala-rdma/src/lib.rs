//! The Scala RDMA application: Initiators and Responders that keep `MaxPendingWQEs` RDMA WRITEs
//! of 250,000 bytes outstanding per connection, as `spec/scala-rdma-traffic-generation.md`
//! describes. See README.md.
pub mod config;
pub mod pairing;
pub mod placement;
pub mod plan;
pub mod plugin;
pub mod record;
pub mod runtime;
pub mod watchdog;

pub use config::ScalaRdmaConfig;
pub use plan::Plan;
pub use plugin::{ScalaRdmaPlugin, ScalaRdmaSystems};
pub use runtime::{InitiatorInstance, ScalaRdma};

impl models::registry::ApplicationModel for ScalaRdmaConfig {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl engine::registry::Choice<dyn models::registry::ApplicationModel> for ScalaRdmaConfig {
    fn boxed(self) -> Box<dyn models::registry::ApplicationModel> {
        Box::new(self)
    }
}
