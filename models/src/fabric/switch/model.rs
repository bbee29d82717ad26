//! The shared-buffer switch under the switch contract (`models::switch::SwitchModel`), and its
//! config as a scenario selects it: `switch: SharedBuffer((...))`, or `switch: (...)` for short.

use super::Switch;
use super::logic::{on_send_pfc, on_tx, receive};
use crate::fabric::link::LinkDirection;
use crate::fabric::{FabricConfig, FabricIndex, FabricPlugin, SwitchConfig};
use crate::packet::Packet;
use crate::registry::SwitchModelConfig;
use crate::switch::{SwitchCounters, SwitchModel, SwitchSite};
use bevy_ecs::world::World;
use engine::prelude::*;
use engine::scenario::FieldError;

/// Its settings are `FabricConfig::switch`.
impl SwitchModel for Switch {
    type Settings = SwitchConfig;
    fn settings(world: &World) -> SwitchConfig {
        world.resource::<FabricConfig>().switch.clone()
    }
    fn forwarding_latency(settings: &SwitchConfig) -> SimTime {
        settings.ForwardingLatency.0
    }
    fn lossless(settings: &SwitchConfig) -> [bool; 8] {
        settings.Lossless
    }
    fn new(settings: &SwitchConfig, site: SwitchSite, wires: Vec<LinkDirection>) -> Self {
        Switch::new(site.node, site.name.to_string(), site.ports, settings, site.seed).with_wires(wires)
    }
    #[inline(always)]
    fn arrive<const INT: bool>(&mut self, fabric: &FabricIndex, q: &mut EventQueue, in_port: u16, pkt: Packet) {
        receive::<INT>(fabric, self, q, in_port, pkt);
    }
    #[inline(always)]
    fn tx_ready<const INT: bool>(&mut self, fabric: &FabricIndex, q: &mut EventQueue, port: u16) {
        on_tx::<INT>(fabric, self, q, port);
    }
    fn send_pfc(&mut self, fabric: &FabricIndex, q: &mut EventQueue, port: u16, class: u8, pause: bool) {
        on_send_pfc(fabric, self, q, port, class, pause);
    }
    #[inline]
    fn warm_state(&self) {
        Switch::warm_state(self)
    }
    #[inline]
    fn warm_arrival(&self, fabric: &FabricIndex, q: &EventQueue, in_port: u16, pkt: &Packet, ahead: usize) {
        Switch::warm_arrival(self, fabric, q, in_port, pkt, ahead)
    }
    #[inline]
    fn warm_tx(&self, fabric: &FabricIndex, q: &EventQueue, port: u16, ahead: usize) {
        Switch::warm_tx(self, fabric, q, port, ahead)
    }
    fn node(&self) -> u32 {
        self.node
    }
    fn counters(&self) -> &SwitchCounters {
        &self.counters
    }
    fn wire(&self, port: u16) -> &LinkDirection {
        Switch::wire(self, port)
    }
    fn for_each_queued(&self, f: &mut dyn FnMut(&Packet)) {
        self.egress
            .iter()
            .flat_map(|p| p.queues.iter().flatten())
            .for_each(|q| f(&q.pkt));
    }
    fn for_each_queue(&self, f: &mut dyn FnMut(u16, u8, u64)) {
        for (port, p) in self.egress.iter().enumerate() {
            for (class, &bytes) in p.queue_bytes.iter().enumerate() {
                if bytes > 0 {
                    f(port as u16, class as u8, bytes);
                }
            }
        }
    }
}

impl SwitchModelConfig for SwitchConfig {
    fn validate(&self, max_ports: usize) -> Result<(), FieldError> {
        SwitchConfig::validate(self, max_ports)
    }
    fn forwarding_latency(&self) -> SimTime {
        self.ForwardingLatency.0
    }
    /// Puts these settings in `FabricConfig::switch` and adds `FabricPlugin`.
    fn add_to(&self, app: &mut App) {
        app.world.resource_mut::<FabricConfig>().switch = self.clone();
        app.add_plugins(FabricPlugin);
    }
    fn clone_box(&self) -> Box<dyn SwitchModelConfig> {
        Box::new(self.clone())
    }
}

impl engine::registry::Choice<dyn SwitchModelConfig> for SwitchConfig {
    fn boxed(self) -> Box<dyn SwitchModelConfig> {
        Box::new(self)
    }
}
