//! What a scenario selects by name: the NIC model (`nic: RoceNic((...))`), each application
//! (`applications: [ScalaRdma((...))]`) and the switch model (`switch: OutputQueued(())`). A
//! plugin crate implements `NicModel`, `ApplicationModel` or `SwitchModelConfig` for its config
//! type (`NicModel` lives with the rest of the NIC contract, in `models::nic`, and is re-exported
//! here); the program registers the built-in ones, and a fork
//! registers its own with `NICS.register::<MyNicConfig>("MyNic")` before loading a scenario.

use crate::application::{AppContext, AppEstimate, AppPlacement, DistributionEntry, EstimateContext, Plan};
pub use crate::nic::NicModel;
use engine::app::App;
use engine::registry::{Registered, Registry};
use engine::scenario::FieldError;
use std::fmt::Debug;
use std::path::Path;

/// An application's config, as a scenario lists it. The program never looks inside one: it
/// asks for the entries it places, checks, plans and estimates through these methods, and adds
/// the application with `add_to` (see `crate::application` for the contract's parts).
pub trait ApplicationModel: Debug + Send + Sync + 'static {
    /// Checks the config on its own; the error's field is relative to the entry
    /// (`MaxPendingWQEs`), so the loader can point at it.
    fn validate(&self) -> Result<(), FieldError> {
        Ok(())
    }
    /// Reads the files the config names, relative to `dir` (the scenario file's folder), at
    /// load, and returns their texts, which the loader adds to the scenario's hash (a run's
    /// identity covers its inputs); the error's field is relative to the entry.
    fn load_files(&mut self, _dir: &Path) -> Result<Vec<String>, FieldError> {
        Ok(Vec::new())
    }
    /// Checks against the rest of the scenario (hosts, the NIC's pools); field as `validate`.
    fn check(&self, _ctx: &AppContext) -> Result<(), FieldError> {
        Ok(())
    }
    /// Its components that take hosts from the shared placement budget, client first, each with
    /// its ratio or `None` when left out. None (the default): it places nothing.
    fn distribution(&self) -> Vec<DistributionEntry> {
        Vec::new()
    }
    /// Its part of the plan, from its placement; connection ids count from 0 (the program
    /// numbers the whole plan in scenario order).
    fn plan(&self, placed: &AppPlacement, seed: u64) -> Plan;
    /// What it would cost (see `limits`): by default no record, one outstanding WQE per
    /// connection of `plan` (its own part).
    fn estimate(&self, plan: &Plan, _ctx: &EstimateContext) -> AppEstimate {
        AppEstimate {
            record: None,
            outstanding_wqes: plan.connections.len() as u64,
            outstanding_field: "",
        }
    }
    /// Adds the application's plugin(s) to `app`; its phase systems go in
    /// `ApplicationSlot(placed.index)`.
    fn add_to(&self, app: &mut App, placed: &AppPlacement);
    /// A copy, for plugin groups that own their plugins.
    fn clone_box(&self) -> Box<dyn ApplicationModel>;
}

/// The NIC models a scenario can name in `nic:`; a fork adds its own with `NICS.register`.
pub static NICS: Registry<dyn NicModel> = Registry::new("NicModel");
/// The applications a scenario can name in `applications:`.
pub static APPLICATIONS: Registry<dyn ApplicationModel> = Registry::new("Application");

impl Registered for dyn NicModel {
    fn registry() -> &'static Registry<dyn NicModel> {
        &NICS
    }
}
impl Registered for dyn ApplicationModel {
    fn registry() -> &'static Registry<dyn ApplicationModel> {
        &APPLICATIONS
    }
}

/// A switch model's config, as a scenario selects it (`switch: SharedBuffer((...))`); the model
/// itself keeps the contract in `crate::switch`.
pub trait SwitchModelConfig: Debug + Send + Sync + 'static {
    /// Checks the config against the largest switch of the topology (`max_ports` ports); the
    /// error's field is relative to `switch`.
    fn validate(&self, max_ports: usize) -> Result<(), FieldError>;
    /// The forwarding latency of every switch.
    fn forwarding_latency(&self) -> engine::SimTime;
    /// Adds the fabric with this switch model (`crate::fabric::FabricWith`) to `app`, which holds
    /// the `FabricConfig`.
    fn add_to(&self, app: &mut App);
    /// A copy, for plugin groups that own their plugins.
    fn clone_box(&self) -> Box<dyn SwitchModelConfig>;
}

/// The switch models a scenario can name in `switch:`.
pub static SWITCHES: Registry<dyn SwitchModelConfig> = Registry::new("SwitchModel");

impl Registered for dyn SwitchModelConfig {
    fn registry() -> &'static Registry<dyn SwitchModelConfig> {
        &SWITCHES
    }
}
/// Congestion controllers, selected inside a NIC's config (`models::cc`).
pub use crate::cc::CONTROLLERS;
