//! `ScalaRdmaPlugin`: every `ScalaRdma((...))` entry of a scenario's `applications`, sharing
//! one placement budget. It speaks to the NIC only through `models::nic`.

use crate::config::ScalaRdmaConfig;
use crate::runtime::{self, AppKinds, ScalaRdma};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::IntoScheduleConfigs;
use engine::prelude::*;
use models::fabric::deadlock::WatchdogSystems;
use models::nic::NicContract;
use models::sets::BuildSet;

/// The Scala RDMA application, selected in RON as an entry `ScalaRdma((...))` of `applications`.
#[derive(Clone, Debug, Default)]
pub struct ScalaRdmaPlugin {
    pub apps: Vec<ScalaRdmaConfig>,
}

#[derive(Resource)]
pub(crate) struct PendingApps {
    pub apps: Vec<ScalaRdmaConfig>,
    pub kinds: AppKinds,
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
        app.set_handler(contract.established, runtime::on_established);
        app.set_handler(contract.wqe_completed, runtime::on_completed);
        app.insert_resource(PendingApps {
            apps: self.apps.clone(),
            kinds,
        });
        app.add_systems(
            Build,
            runtime::build_instances
                .in_set(BuildSet::Applications)
                .in_set(ScalaRdmaSystems),
        );
        app.add_systems(
            Start,
            (crate::record::open, runtime::schedule_starts)
                .chain()
                .in_set(BuildSet::Applications)
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
