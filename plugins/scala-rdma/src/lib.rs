//! The Scala RDMA application: Initiators and Responders that keep `MaxPendingWQEs` RDMA WRITEs
//! of 250,000 bytes outstanding per connection, as `spec/scala-rdma-traffic-generation.md`
//! describes. See README.md.

pub mod config;
pub mod pairing;
pub mod plan;
pub mod plugin;
pub mod record;
pub mod runtime;
pub mod watchdog;

pub use config::ScalaRdmaConfig;
pub use models::application::Plan;
pub use plugin::{ScalaRdmaPlugin, ScalaRdmaSystems};
pub use runtime::{InitiatorInstance, ScalaRdma};

use engine::scenario::FieldError;
use models::application::{AppContext, AppEstimate, AppPlacement, DistributionEntry, EstimateContext};

impl models::registry::ApplicationModel for ScalaRdmaConfig {
    fn check(&self, ctx: &AppContext) -> Result<(), FieldError> {
        self.validate_against_pools(&ctx.pools.egress, &ctx.pools.ingress)
            .map_err(|e| FieldError::new("RdmaDataPacketTC", e.to_string()))
    }
    fn distribution(&self) -> Vec<DistributionEntry> {
        plan::distribution(self)
    }
    fn plan(&self, placed: &AppPlacement, seed: u64) -> Plan {
        plan::plan_of(self, placed, seed)
    }
    /// rdma-perf has at most one row per WQE the Initiators' links can carry from the client
    /// start window to the stop time; each connection keeps `MaxPendingWQEs` outstanding.
    fn estimate(&self, plan: &Plan, ctx: &EstimateContext) -> AppEstimate {
        let rate: u128 = plan
            .hosts
            .iter()
            .filter(|h| h.component == plan::COMPONENTS[plan::INITIATOR])
            .map(|h| ctx.host_rate_bps.get(h.node_id as usize).copied().unwrap_or(0))
            .sum();
        AppEstimate {
            record: Some(("rdma-perf", record::max_rows(rate, ctx.span))),
            outstanding_wqes: plan.connections.len() as u64 * self.max_pending_wqes.get() as u64,
            outstanding_field: "MaxPendingWQEs",
        }
    }
    fn add_to(&self, app: &mut engine::app::App, placed: &AppPlacement) {
        plugin::add_entry(app, self, placed);
    }
    fn clone_box(&self) -> Box<dyn models::registry::ApplicationModel> {
        Box::new(self.clone())
    }
}

impl engine::registry::Choice<dyn models::registry::ApplicationModel> for ScalaRdmaConfig {
    fn boxed(self) -> Box<dyn models::registry::ApplicationModel> {
        Box::new(self)
    }
}
