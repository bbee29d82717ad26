//! `IdealNic` in the scenario registry: how a scenario's `nic: IdealNic((...))` becomes this
//! plugin.

use crate::{IdealNicConfig, IdealNicPlugin};
use models::nic::NicModel;
use models::nic::NicPools;

impl NicModel for IdealNicConfig {
    fn validate(&self) -> Result<(), engine::scenario::FieldError> {
        IdealNicConfig::validate(self).map_err(|e| engine::scenario::FieldError::new(e.field(), e.to_string()))
    }
    /// Unbounded buffers: every class may carry data.
    fn pools(&self) -> NicPools {
        NicPools {
            egress: [true; 8],
            ingress: [true; 8],
        }
    }
    fn add_to(&self, app: &mut engine::app::App) {
        app.add_plugins(IdealNicPlugin { config: self.clone() });
    }
    fn clone_box(&self) -> Box<dyn NicModel> {
        Box::new(self.clone())
    }
}

impl engine::registry::Choice<dyn NicModel> for IdealNicConfig {
    fn boxed(self) -> Box<dyn NicModel> {
        Box::new(self)
    }
}
