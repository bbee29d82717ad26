//! How a scenario's `nic: Name((...))` becomes a NIC: the config type a NIC plugin registers in
//! `models::registry::NICS`.

use super::NicPools;
use engine::app::App;
use engine::scenario::FieldError;
use std::fmt::Debug;

/// A NIC model's config, as a scenario selects it.
pub trait NicModel: Debug + Send + Sync + 'static {
    /// Checks the config; the error's field is relative to `nic` (`Mss`,
    /// `EgressBufferManager.BufferSize`), so the loader can point at it.
    fn validate(&self) -> Result<(), FieldError>;
    /// The traffic classes with transmit and receive pools.
    fn pools(&self) -> NicPools;
    /// The port rate, when the model has one (the host links must match it).
    fn port_rate(&self) -> Option<engine::Rate> {
        None
    }
    /// Whether its data packets carry in-band telemetry (`models::int`: a controller asks for
    /// it). The hop stacks live in one world's table, so such a run has one shard.
    fn carries_int(&self) -> bool {
        false
    }
    /// Adds the NIC's plugin(s) to `app`.
    fn add_to(&self, app: &mut App);
    /// A copy, for plugin groups that own their plugins.
    fn clone_box(&self) -> Box<dyn NicModel>;
}
