//! The ideal output-queued switch: the second switch model of the switch contract
//! (`models::switch`), selected in RON as `switch: OutputQueued(())`. It is the reference the
//! shared-buffer switch's queueing is checked against: what queueing alone does, without buffer
//! limits, PFC or ECN.
//!
//! Each egress port has one FIFO, whatever a packet's class (the output-queued switch of queueing
//! theory: packets leave a port in the order they arrived for it), and an unbounded buffer. A
//! packet is routed as the fabric routes (shortest paths, ECMP), reaches the switch after the
//! forwarding latency, and goes out at once if its port's serializer is free and nothing waits,
//! else behind what waits. It never drops (but for a packet with no route), never marks ECN,
//! never sends PFC, and does not obey the PFC frames it receives (it counts them).
//!
//! ```
//! use engine::prelude::*;
//! use models::fabric::{FabricConfig, SwitchConfig};
//! use models::registry::SwitchModelConfig;
//! use models::topology::TopologyConfig;
//! use oq_switch::OqSwitchConfig;
//!
//! let config: OqSwitchConfig = ron::from_str(r#"(ForwardingLatency: "300ns")"#).unwrap();
//! assert_eq!(config.forwarding_latency(), SimTime::from_ns(300));
//! let mut app = App::new();
//! app.insert_resource(FabricConfig {
//!     topology: TopologyConfig::default(),
//!     switch: SwitchConfig::default(),
//!     seed: 1,
//! });
//! config.add_to(&mut app); // the fabric, with this switch model
//! ```

mod config;
mod switch;

pub use config::OqSwitchConfig;
pub use switch::OqSwitch;
