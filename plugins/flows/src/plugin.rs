//! `FlowsPlugin`: the handlers, the `Start` system and the record, added once whatever the
//! number of `Flows((...))` entries; each entry adds its build system with `add_entry`. It
//! speaks to the NIC only through `models::nic`.

use crate::config::FlowsConfig;
use crate::runtime::{self, FlowKinds, FlowsRun};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::IntoScheduleConfigs;
use engine::prelude::*;
use models::application::{
    AppFigures, AppPlacement, AppReporters, ApplicationSlot, ConnectionFigures, ContractHandlers, claim_contract,
};
use models::nic::NicContract;
use models::sets::BuildSet;

/// The flows application; its phase systems go in `ApplicationSlot(slot)`, the first entry's.
#[derive(Clone, Debug, Default)]
pub struct FlowsPlugin {
    /// The `ApplicationSlot` of the first `Flows` entry in the scenario.
    pub slot: usize,
}

/// The system set of this plugin's phase systems, for others to order against.
#[derive(SystemSet, Clone, Debug, PartialEq, Eq, Hash)]
pub struct FlowsSystems;

impl Plugin for FlowsPlugin {
    fn build(&self, app: &mut App) {
        let contract = *app.world.resource::<NicContract>();
        let kinds = FlowKinds {
            start: app.add_event_kind("flows.start"),
            contract,
        };
        app.set_handler(kinds.start, runtime::on_start);
        let claim = claim_contract(
            app,
            ContractHandlers {
                established: runtime::on_established,
                wqe_completed: runtime::on_completed,
            },
        );
        app.insert_resource(FlowsRun {
            flows: Vec::new(),
            by_connection: Vec::new(),
            kinds,
            claim,
            posted: 0,
            completed: 0,
            listeners: Vec::new(),
        });
        app.world
            .get_resource_or_insert_with(AppReporters::default)
            .0
            .push(figures);
        app.add_systems(
            Start,
            (crate::record::open, runtime::schedule_starts)
                .chain()
                .in_set(BuildSet::Applications)
                .in_set(ApplicationSlot(self.slot))
                .in_set(FlowsSystems),
        );
    }
}

/// Adds one `Flows((...))` entry: the plugin, if no entry added it yet, and the entry's build
/// system in its slot.
pub fn add_entry(app: &mut App, config: &FlowsConfig, placed: &AppPlacement) {
    if !app.world.contains_resource::<FlowsRun>() {
        app.add_plugins(FlowsPlugin { slot: placed.index });
    }
    let slot = ApplicationSlot(placed.index);
    let (config, placed) = (config.clone(), placed.clone());
    app.add_systems(
        Build,
        (move |world: &mut World| runtime::build_entry(world, &config, &placed))
            .in_set(BuildSet::Applications)
            .in_set(slot)
            .in_set(FlowsSystems),
    );
}

/// The summary's figures: WRITEs, and each flow's WRITEs completed in the recording window.
fn figures(world: &mut World) -> AppFigures {
    let Some(run) = world.get_resource::<FlowsRun>() else {
        return AppFigures::default();
    };
    AppFigures {
        wqes_posted: run.posted,
        wqes_completed: run.completed,
        connections: run
            .flows
            .iter()
            .map(|f| ConnectionFigures {
                connection: f.connection,
                initiator: f.flow.src,
                responder: f.flow.dst,
                recorded_wqes: f.recorded,
            })
            .collect(),
    }
}
