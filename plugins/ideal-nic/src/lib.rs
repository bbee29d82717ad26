//! The ideal NIC: the smallest NIC that keeps the NIC contract (`models::nic`), selected in RON
//! as `nic: IdealNic((...))`. It is the reference a research fork starts from and the second
//! NIC the contract test suite runs on.
//!
//! What it leaves out, on purpose: PCIe (a doorbell and a payload fetch take no time), buffer
//! limits (it never sends PFC and never drops), congestion control (CE marks are counted only)
//! and loss recovery (it needs lossless classes). What it keeps: real packets on the wire,
//! segmentation into `Mss`-byte packets with RDMA WRITE opcodes, one WQE of a connection on the
//! wire at a time, queue pairs served round-robin per packet, obedience to the switch's PFC,
//! connection setup in three messages, and one ACK per WQE.
//!
//! Add it after the contract and the fabric (whose `Build` system needs a `FabricConfig` before
//! a run), and before the application:
//!
//! ```
//! use engine::prelude::*;
//! use ideal_nic::{IdealNicConfig, IdealNicPlugin};
//! use models::fabric::FabricPlugin;
//! use models::nic::{NicContractPlugin, NicPools};
//!
//! let config: IdealNicConfig = ron::from_str(r#"(Mss: "1KiB")"#).unwrap();
//! config.validate().unwrap();
//! let mut app = App::new();
//! app.add_plugins(NicContractPlugin);
//! app.add_plugins(FabricPlugin);
//! app.add_plugins(IdealNicPlugin { config });
//! // Unbounded buffers: every class may carry data.
//! assert_eq!(app.world.resource::<NicPools>().egress, [true; 8]);
//! ```

pub mod config;
mod logic;
mod model;
pub mod state;

pub use config::{IdealNicConfig, IdealNicConfigError};
pub use logic::{IdealNicIndex, IdealNicKinds, spawn_nics};
pub use state::{IdealNic, NicCounters};

use bevy_ecs::prelude::*;
use bevy_ecs::schedule::IntoScheduleConfigs;
use engine::prelude::*;
use logic::NicHandler;
use models::nic::BuildSet;
use models::nic::{NicContract, NicPools};

/// The ideal NIC's systems (its `Build` system, `spawn_nics`), for others to order against.
#[derive(SystemSet, Clone, Debug, PartialEq, Eq, Hash)]
pub struct IdealNicSystems;

/// `nic: IdealNic((...))`. Needs `NicContractPlugin` added before it, and a fabric plugin whose
/// `Build` system inserts `Fabric` in `BuildSet::Fabric`.
#[derive(Clone, Debug, Default)]
pub struct IdealNicPlugin {
    /// The NIC's settings, the same on every host.
    pub config: IdealNicConfig,
}

impl IdealNicPlugin {
    /// Unbounded buffers: every class has a transmit and a receive pool.
    pub const POOLS: NicPools = NicPools {
        egress: [true; 8],
        ingress: [true; 8],
    };
}

impl Plugin for IdealNicPlugin {
    fn build(&self, app: &mut App) {
        let contract = *app
            .world
            .get_resource::<NicContract>()
            .expect("IdealNicPlugin needs NicContractPlugin added before it");
        app.insert_resource(self.config.clone());
        app.insert_resource(Self::POOLS);
        app.insert_resource(IdealNicIndex::default());
        let tx = app.add_event_kind("ideal_nic.tx");
        app.insert_resource(IdealNicKinds { tx });
        let fabric = *app
            .world
            .get_resource::<models::fabric::FabricKinds>()
            .expect("IdealNicPlugin needs a fabric plugin added before it");
        app.set_handler_for(
            &[
                fabric.to_host,
                contract.listen.kind(),
                contract.connect.kind(),
                contract.post_wqe.kind(),
                tx,
            ],
            NicHandler::default(),
        );
        app.add_systems(Build, spawn_nics.in_set(BuildSet::Nics).in_set(IdealNicSystems));
        app.add_systems(
            Finish,
            logic::publish_delivered.in_set(BuildSet::Nics).in_set(IdealNicSystems),
        );
    }
}

#[cfg(test)]
mod tests;
