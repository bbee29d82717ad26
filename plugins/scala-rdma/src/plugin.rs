//! `ScalaRdmaPlugin`: the Scala RDMA application's handlers, phase systems, record and beacon
//! columns, added once whatever the number of `ScalaRdma((...))` entries; each entry adds its
//! build system with `add_entry`. It speaks to the NIC only through `models::nic`.

use crate::config::ScalaRdmaConfig;
use crate::runtime::{self, AppKinds, ScalaRdma};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::IntoScheduleConfigs;
use engine::prelude::*;
use models::application::{
    AppFigures, AppPlacement, AppReporters, ApplicationSlot, ConnectionFigures, ContractHandlers, claim_contract,
};
use models::fabric::deadlock::WatchdogSystems;
use models::nic::NicContract;
use models::sets::BuildSet;

/// The Scala RDMA application, selected in RON as an entry `ScalaRdma((...))` of `applications`.
/// Its phase systems go in `ApplicationSlot(slot)`, the first entry's.
#[derive(Clone, Debug, Default)]
pub struct ScalaRdmaPlugin {
    /// The `ApplicationSlot` of the first `ScalaRdma` entry in the scenario.
    pub slot: usize,
}

/// The system set of this plugin's phase systems, for others to order against.
#[derive(SystemSet, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScalaRdmaSystems;

impl Plugin for ScalaRdmaPlugin {
    fn build(&self, app: &mut App) {
        let contract = *app.world.resource::<NicContract>();
        let kinds = AppKinds {
            data_start: app.add_event_kind("scala.data_start"),
            contract,
        };
        app.set_handler(kinds.data_start, runtime::on_data_start);
        let claim = claim_contract(
            app,
            ContractHandlers {
                established: runtime::on_established,
                wqe_completed: runtime::on_completed,
            },
        );
        app.insert_resource(ScalaRdma::new(kinds, claim));
        app.world
            .get_resource_or_insert_with(AppReporters::default)
            .0
            .push(figures);
        let slot = ApplicationSlot(self.slot);
        app.add_systems(
            Start,
            (crate::record::open, runtime::schedule_starts)
                .chain()
                .in_set(BuildSet::Applications)
                .in_set(slot)
                .in_set(ScalaRdmaSystems),
        );
        // The stall watchdog looks between segments only; after the fabric's (same report).
        let stalls = || {
            crate::watchdog::check_stalls
                .in_set(WatchdogSystems::Application)
                .after(WatchdogSystems::Fabric)
                .in_set(ScalaRdmaSystems)
        };
        app.add_systems(BeaconTick, stalls());
        app.add_systems(Finish, stalls());
        app.add_beacon_column("tx_client", |w| {
            w.get_resource::<ScalaRdma>().map_or(0, |a| a.tx_client)
        });
        app.add_beacon_column("rx_client", |w| {
            w.get_resource::<ScalaRdma>().map_or(0, |a| a.rx_client)
        });
    }
}

/// Adds one `ScalaRdma((...))` entry: the plugin, if no entry added it yet, and the entry's
/// build system in its slot.
pub fn add_entry(app: &mut App, config: &ScalaRdmaConfig, placed: &AppPlacement) {
    if !app.world.contains_resource::<ScalaRdma>() {
        app.add_plugins(ScalaRdmaPlugin { slot: placed.index });
    }
    let slot = ApplicationSlot(placed.index);
    let (config, placed) = (config.clone(), placed.clone());
    app.add_systems(
        Build,
        (move |world: &mut World| runtime::build_entry(world, &config, &placed))
            .in_set(BuildSet::Applications)
            .in_set(slot)
            .in_set(ScalaRdmaSystems),
    );
}

/// The summary's figures: WQEs, and each connection's WQEs completed in the recording window.
fn figures(world: &mut World) -> AppFigures {
    let Some(app) = world.get_resource::<ScalaRdma>() else {
        return AppFigures::default();
    };
    let (posted, completed, initiators) = (app.tx_client, app.rx_client, app.initiators.clone());
    let connections = initiators
        .iter()
        .filter_map(|&e| world.get::<runtime::InitiatorInstance>(e))
        .map(|i| ConnectionFigures {
            connection: i.connection,
            initiator: i.node,
            responder: i.responder,
            recorded_wqes: i.recorded,
        })
        .collect();
    AppFigures {
        wqes_posted: posted,
        wqes_completed: completed,
        connections,
    }
}
