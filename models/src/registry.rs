//! What a scenario selects by name: the NIC model (`nic: RoceNic((...))`) and each application
//! (`applications: [ScalaRdma((...))]`). A plugin crate implements `NicModel` or
//! `ApplicationModel` for its config type; the program registers the built-in ones, and a fork
//! registers its own with `NICS.register::<MyNicConfig>("MyNic")` before loading a scenario.

use crate::nic::NicPools;
use engine::app::App;
use engine::registry::{Registered, Registry};
use std::any::Any;
use std::fmt::Debug;

/// A NIC model's config, as a scenario selects it.
pub trait NicModel: Debug + Send + Sync + 'static {
    /// Checks the config; the error's field is relative to `nic` (`Mss`,
    /// `EgressBufferManager.BufferSize`), so the loader can point at it.
    fn validate(&self) -> Result<(), engine::scenario::FieldError>;
    /// The traffic classes with transmit and receive pools.
    fn pools(&self) -> NicPools;
    /// The port rate, when the model has one (the host links must match it).
    fn port_rate(&self) -> Option<engine::Rate> {
        None
    }
    /// Adds the NIC's plugin(s) to `app`.
    fn add_to(&self, app: &mut App);
    /// A copy, for plugin groups that own their plugins.
    fn clone_box(&self) -> Box<dyn NicModel>;
}

/// An application's config, as a scenario lists it.
pub trait ApplicationModel: Debug + Send + Sync + 'static {
    fn as_any(&self) -> &dyn Any;
}

pub static NICS: Registry<dyn NicModel> = Registry::new("NicModel");
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
