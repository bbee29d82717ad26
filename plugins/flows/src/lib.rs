//! `Flows`: a list of flows, each one RDMA WRITE (or a stream of them) from one host to
//! another, given in RON or read from an htsim connection matrix, so that rdmasim runs the
//! same workload as htsim. Each finite flow writes one `flow-fct` row. It uses only the NIC
//! contract (`models::nic`) and the application contract (`models::application`). See
//! README.md.
//!
//! In a scenario: `applications: [Flows((flows: [(src: 0, dst: 9, bytes: "2MB", start: 0.003)]))]`
//! or `applications: [Flows((matrix: "perm.cm"))]`.
//!
//! ```
//! let cfg: flows::FlowsConfig = ron::from_str(r#"(flows: [(src: 0, dst: 1, bytes: "1MB")])"#).unwrap();
//! assert_eq!(cfg.flows[0].bytes.bytes(), 1_000_000);
//! // 1 MB fits one WRITE; 0 bytes never ends.
//! assert_eq!(flows::FlowsConfig::writes_of(1_000_000), Some(1));
//! assert_eq!(flows::FlowsConfig::writes_of(0), None);
//! ```

pub mod config;
pub mod matrix;
pub mod plugin;
pub mod record;
pub mod runtime;

pub use config::{Flow, FlowSpec, FlowsConfig};
pub use plugin::{FlowsPlugin, FlowsSystems};
pub use runtime::FlowsRun;

use engine::scenario::FieldError;
use models::application::{AppContext, AppEstimate, AppPlacement, ConnectionPlan, EstimateContext, PairPlan, Plan};
use std::path::Path;

impl models::registry::ApplicationModel for FlowsConfig {
    fn load_files(&mut self, dir: &Path) -> Result<Vec<String>, FieldError> {
        self.resolve(dir)
    }
    fn check(&self, ctx: &AppContext) -> Result<(), FieldError> {
        self.check_flows(ctx.num_hosts, &ctx.pools)
    }
    /// No distribution entries: every flow names its hosts, which may also run other
    /// applications' components.
    fn plan(&self, placed: &AppPlacement, _seed: u64) -> Plan {
        let mut pairs: Vec<PairPlan> = Vec::new();
        let mut connections = Vec::new();
        for (k, f) in self.resolved.iter().enumerate() {
            if !pairs.iter().any(|p| (p.initiator, p.responder) == (f.src, f.dst)) {
                pairs.push(PairPlan {
                    initiator: f.src,
                    responder: f.dst,
                    application: self.name.clone(),
                });
            }
            connections.push(ConnectionPlan {
                id: k as u32,
                initiator: f.src,
                responder: f.dst,
                index: 0,
                application_name: format!("{}-flow-{}", self.name, f.id),
                app: placed.index,
                traffic_class: self.rdma_data_packet_tc,
            });
        }
        Plan {
            hosts: Vec::new(),
            pairs,
            connections,
        }
    }
    /// One flow-fct row per finite flow; each flow's WRITEs outstanding at once.
    fn estimate(&self, _plan: &Plan, _ctx: &EstimateContext) -> AppEstimate {
        let finite = self.resolved.iter().filter(|f| f.bytes > 0).count() as u64;
        let outstanding = self
            .resolved
            .iter()
            .map(|f| FlowsConfig::writes_of(f.bytes).unwrap_or(FlowsConfig::STREAM_PENDING))
            .sum();
        AppEstimate {
            record: Some(("flow-fct", finite)),
            outstanding_wqes: outstanding,
            outstanding_field: if self.matrix.is_some() { "matrix" } else { "flows" },
        }
    }
    fn add_to(&self, app: &mut engine::app::App, placed: &AppPlacement) {
        plugin::add_entry(app, self, placed);
    }
    fn clone_box(&self) -> Box<dyn models::registry::ApplicationModel> {
        Box::new(self.clone())
    }
}

impl engine::registry::Choice<dyn models::registry::ApplicationModel> for FlowsConfig {
    fn boxed(self) -> Box<dyn models::registry::ApplicationModel> {
        Box::new(self)
    }
}
