//! The model's settings, `switch: OutputQueued((...))`, and its registration by the program.

use crate::switch::OqSwitch;
use bevy_ecs::prelude::*;
use engine::prelude::*;
use engine::scenario::FieldError;
use engine::units::Duration;
use models::fabric::FabricWith;
use models::registry::SwitchModelConfig;
use serde::{Deserialize, Serialize};

/// Settings of every output-queued switch; a resource while the fabric is built.
#[allow(non_snake_case)]
#[derive(Resource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OqSwitchConfig {
    /// Time from a packet's last bit arriving to the switch being able to send it on. Default
    /// 500 ns, the shared-buffer switch's default, so the two compare hop for hop.
    pub ForwardingLatency: Duration,
}

impl OqSwitchConfig {
    /// Default `ForwardingLatency`: 500 ns.
    pub const DEFAULT_FORWARDING_LATENCY_NS: u64 = 500;
}

impl Default for OqSwitchConfig {
    fn default() -> Self {
        OqSwitchConfig {
            ForwardingLatency: Duration::from_ns(Self::DEFAULT_FORWARDING_LATENCY_NS),
        }
    }
}

impl SwitchModelConfig for OqSwitchConfig {
    /// Any latency and any number of ports will do: there is no buffer to size.
    fn validate(&self, _max_ports: usize) -> Result<(), FieldError> {
        Ok(())
    }
    fn forwarding_latency(&self) -> SimTime {
        self.ForwardingLatency.0
    }
    fn add_to(&self, app: &mut App) {
        app.insert_resource(self.clone());
        app.add_plugins(FabricWith::<OqSwitch>::default());
    }
    fn clone_box(&self) -> Box<dyn SwitchModelConfig> {
        Box::new(self.clone())
    }
}

impl engine::registry::Choice<dyn SwitchModelConfig> for OqSwitchConfig {
    fn boxed(self) -> Box<dyn SwitchModelConfig> {
        Box::new(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_from_ron_with_defaults_and_refuses_unknown_fields() {
        let c: OqSwitchConfig = ron::from_str("()").unwrap();
        assert_eq!(c.forwarding_latency(), SimTime::from_ns(500));
        let c: OqSwitchConfig = ron::from_str(r#"(ForwardingLatency: "1us")"#).unwrap();
        assert_eq!(c.forwarding_latency(), SimTime::from_us(1));
        let e = ron::from_str::<OqSwitchConfig>("(BufferSize: 1)").unwrap_err();
        assert!(e.to_string().contains("BufferSize"), "{e}");
    }
}
