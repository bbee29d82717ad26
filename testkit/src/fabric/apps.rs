//! Building a fabric app around the kit, running it, reading the switches, and tapping the
//! packets that reach hosts.

use super::{Offer, TestKitPlugin};
use bevy_ecs::prelude::*;
use engine::prelude::*;
use models::fabric::{Fabric, FabricConfig, FabricIndex, FabricKinds, FabricPlugin, SwitchConfig};
use models::packet::Packet;
use models::registry::SwitchModelConfig;
use models::switch::{SwitchCounters, Switches};
use models::topology::TopologyConfig;
use std::sync::Arc;

/// An app with the fabric of `topology` and `switch` (seed 1) and the test kit with `offers`.
/// Panics if the switch settings do not fit the topology (a test's mistake).
pub fn fabric_app(topology: TopologyConfig, switch: SwitchConfig, offers: Vec<Offer>) -> App {
    fabric_app_with(
        topology,
        switch,
        TestKitPlugin {
            offers,
            ..Default::default()
        },
    )
}

/// `fabric_app` with a test kit of your own (host pauses, tracing).
pub fn fabric_app_with(topology: TopologyConfig, switch: SwitchConfig, kit: TestKitPlugin) -> App {
    let topo = topology.build().unwrap_or_else(|e| panic!("test topology: {e}"));
    let max_ports = topo.nodes[topo.num_hosts..]
        .iter()
        .map(|n| n.ports.len())
        .max()
        .unwrap_or(0);
    switch
        .validate(max_ports)
        .unwrap_or_else(|e| panic!("test switch settings: {e}"));
    let mut app = App::new();
    app.insert_resource(FabricConfig {
        topology,
        switch,
        seed: 1,
    });
    app.add_plugins(FabricPlugin);
    app.add_plugins(kit);
    app
}

/// `fabric_app_with` for any switch model: the one `model` adds (`SwitchModelConfig::add_to`),
/// checked against the topology. The shared-buffer switch's settings stay the defaults unless
/// `model` is that switch.
pub fn fabric_app_for(topology: TopologyConfig, model: &dyn SwitchModelConfig, kit: TestKitPlugin) -> App {
    let topo = topology.build().unwrap_or_else(|e| panic!("test topology: {e}"));
    let max_ports = topo.nodes.iter().map(|n| n.ports.len()).max().unwrap_or(0);
    model
        .validate(max_ports)
        .unwrap_or_else(|e| panic!("test switch settings: {e}"));
    let mut app = App::new();
    app.insert_resource(FabricConfig {
        topology,
        switch: SwitchConfig::default(),
        seed: 1,
    });
    model.add_to(&mut app);
    app.add_plugins(kit);
    app
}

/// Every switch's counters, in node order.
pub fn switch_counters(world: &World) -> Vec<(u32, SwitchCounters)> {
    let mut all = Switches::counters(world);
    all.sort_by_key(|s| s.0);
    all
}

/// The sum of every switch's counters (peaks are the largest of any switch).
pub fn switch_totals(world: &World) -> SwitchCounters {
    let mut t = SwitchCounters::default();
    for (_, c) in switch_counters(world) {
        t.packets += c.packets;
        t.bytes += c.bytes;
        t.drops += c.drops;
        t.headroom_drops += c.headroom_drops;
        t.pfc_pause_sent += c.pfc_pause_sent;
        t.pfc_resume_sent += c.pfc_resume_sent;
        t.pfc_pause_received += c.pfc_pause_received;
        t.pfc_resume_received += c.pfc_resume_received;
        t.ecn_marked += c.ecn_marked;
        t.peak_buffer_bytes = t.peak_buffer_bytes.max(c.peak_buffer_bytes);
        for (p, q) in t.peak_class_queue_bytes.iter_mut().zip(c.peak_class_queue_bytes) {
            *p = (*p).max(q);
        }
        for (p, q) in t.peak_ingress_class_bytes.iter_mut().zip(c.peak_ingress_class_bytes) {
            *p = (*p).max(q);
        }
    }
    t
}

/// Runs `app` to `stop` with one beacon tick at the end.
pub fn run_for(app: &mut App, stop: SimTime) -> RunStats {
    app.run(RunOptions {
        stop,
        beacon_interval: stop,
        progress: None,
    })
}

/// Puts `look` in front of the handler of the packets reaching hosts (the NIC's, or the kit's):
/// it sees each packet, the time and the host it reached, before that handler does and before
/// any fault injected on the host's link, and says whether to pass it on. Middleware the NIC
/// does not know about, for tests that watch the wire whatever the NIC. A packet it keeps back
/// is taken off the link and counted nowhere (the run's conservation balance then misses it).
/// Call it after the NIC's plugin is added.
pub fn tap_hosts(app: &mut App, look: impl FnMut(&mut World, SimTime, u32, &Packet) -> bool + Send + 'static) {
    let kinds = *app
        .world
        .get_resource::<FabricKinds>()
        .expect("tap_hosts needs the fabric plugin added first");
    app.wrap_handler(kinds.to_host, move |inner| {
        Box::new(HostTap {
            inner,
            look,
            kinds,
            fabric: None,
        })
    });
}

struct HostTap<F> {
    inner: Box<dyn Handler>,
    look: F,
    kinds: FabricKinds,
    fabric: Option<Arc<FabricIndex>>,
}

impl<F: FnMut(&mut World, SimTime, u32, &Packet) -> bool + Send + 'static> Handler for HostTap<F> {
    fn handle(&mut self, world: &mut World, q: &mut EventQueue, ev: &SimEvent) {
        if ev.kind == self.kinds.to_host {
            let fabric = self.fabric.get_or_insert_with(|| world.resource::<Fabric>().0.clone());
            let head = q.channel_values(self.kinds.packet, ev.target).next().copied();
            if let Some(pkt) = head
                && !(self.look)(world, q.now(), fabric.dir_to[ev.target as usize].0, &pkt)
            {
                q.receive(self.kinds.packet, ev.target);
                return;
            }
        }
        self.inner.handle(world, q, ev);
    }

    fn pause(&mut self, world: &mut World) {
        self.inner.pause(world);
    }
}
