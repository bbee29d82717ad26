//! Turns a checked scenario into an `App`: the resources the plugins read, then the plugins in
//! the order the build sets expect (contract, the fabric with the selected switch, the selected
//! NIC, the applications).

use crate::scenario::Loaded;
use engine::app::PluginGroupBuilder;
use engine::clock::WallClock;
use engine::prelude::*;
use engine::records::Output;
use models::application::AppPlacement;
use models::fabric::{FabricConfig, SwitchConfig};
use models::nic::NicContractPlugin;
use models::registry::ApplicationModel;

/// Where the records go and what this run is called.
#[derive(Clone, Debug)]
pub struct RunSetup {
    /// Where the records go (`--out`, or nowhere).
    pub output: Output,
    /// Overrides the scenario's `name` in the output files (`--name`).
    pub name: Option<String>,
    /// The clock the records' `time_utc` reads (fixed by `SOURCE_DATE_EPOCH`).
    pub clock: WallClock,
}

impl RunSetup {
    /// The run's name: `--name`, else the scenario's `name`.
    pub fn simulation_name<'a>(&'a self, loaded: &'a Loaded) -> &'a str {
        self.name.as_deref().unwrap_or(&loaded.scenario.name)
    }
}

/// The spec's `job_id`: the simulation's name and the scenario's hash.
pub fn job_id(name: &str, loaded: &Loaded) -> String {
    format!("{name}-{:016x}", loaded.hash)
}

/// The NIC the scenario selected, as a plugin.
pub struct ScenarioNic(pub Box<dyn models::nic::NicModel>);

impl Plugin for ScenarioNic {
    fn build(&self, app: &mut App) {
        self.0.add_to(app);
    }
}

/// The fabric with the switch model the scenario selected, as a plugin.
pub struct ScenarioSwitch(pub Box<dyn models::registry::SwitchModelConfig>);

impl Plugin for ScenarioSwitch {
    fn build(&self, app: &mut App) {
        self.0.add_to(app);
    }
}

/// The scenario's applications, each with its placement, added in scenario order: each in its
/// `ApplicationSlot`, the slots ordered, then the NIC contract's events shared among them.
pub struct ScenarioApplications(pub Vec<(Box<dyn ApplicationModel>, AppPlacement)>);

impl Plugin for ScenarioApplications {
    fn build(&self, app: &mut App) {
        models::application::configure_slots(app, self.0.len());
        for (model, placed) in &self.0 {
            model.add_to(app, placed);
        }
        models::application::install_contract_handlers(app);
    }
}

/// The scenario's plugins, in the order the build sets expect. A fork replaces one with
/// `plugins(loaded).disable::<ScenarioSwitch>().add(MyFabricPlugin)` and `build_app_with`.
pub fn plugins(loaded: &Loaded) -> PluginGroupBuilder {
    PluginGroupBuilder::default()
        .add(NicContractPlugin)
        .add(ScenarioSwitch(loaded.scenario.switch.model().clone_box()))
        .add(models::fabric::deadlock::PfcDeadlockPlugin)
        .add(ScenarioNic(loaded.scenario.nic.value.clone_box()))
        .add(ScenarioApplications(
            loaded
                .scenario
                .applications
                .iter()
                .zip(&loaded.placements)
                .map(|(a, p)| (a.value.clone_box(), p.clone()))
                .collect(),
        ))
        .add(models::telemetry::TelemetryPlugin(loaded.scenario.telemetry.clone()))
}

/// The app for a loaded scenario with its plugins (`plugins`), ready to run.
pub fn build_app(loaded: &Loaded, setup: &RunSetup) -> std::io::Result<App> {
    build_app_with(loaded, setup, plugins(loaded))
}

/// As `build_app`, with a plugin group of the caller's (see `plugins`).
pub fn build_app_with(loaded: &Loaded, setup: &RunSetup, group: PluginGroupBuilder) -> std::io::Result<App> {
    let s = &loaded.scenario;
    let name = setup.simulation_name(loaded).to_string();
    let seed = s.simulation.RandomSeed;
    let mut app = App::new();
    app.insert_resource(s.simulation.clone());
    app.insert_resource(loaded.timeline);
    app.insert_resource(FabricConfig {
        topology: s.topology.clone(),
        // The shared-buffer switch's `add_to` puts its own settings here.
        switch: SwitchConfig::default(),
        seed,
    });
    app.insert_resource(s.watchdog.clone());
    if !s.faults.0.is_empty() {
        app.insert_resource(s.faults.clone());
    }
    app.insert_resource(RunInfo {
        simulation: name.clone(),
        job_id: job_id(&name, loaded),
        seed,
        shard: 0,
        shards: 1,
    });
    app.insert_resource(Records::new(setup.output.clone(), &name, 0, setup.clock.clone())?);
    app.add_plugins(group);
    Ok(app)
}
