//! The fabric as ECS entities: hosts, switches, link directions and PCIe links built from the
//! topology, and the handlers that move packets between them.
//!
//! One event kind carries packets: `fabric.arrive`, targeted at a link direction, fires when a
//! packet's last bit reaches the far end (plus the receiving switch's forwarding latency). The
//! handler hands the packet to the switch model or, at a host, to the NIC plugin's
//! `PortReceiver`. Switch egress ports schedule `fabric.switch_tx` when their serializer frees
//! and more is queued; `fabric.send_pfc` makes a switch send a PFC frame (tests, fault
//! injection). Each link direction is one event source.
//!
//! One handler serves the three kinds, and holds the `Switch` components while events run: it
//! takes them out of the world at its first event after a pause and puts them back when the loop
//! stops (every beacon tick and the end of the run, `Handler::pause`). A hop then reaches its
//! switch by index instead of by a `World::get_mut`, whose lookup of the component's id from its
//! type and of the entity's storage cost about 65 instructions a hop (6% of a run). Between
//! segments, where beacons, the `Finish` phase and tests look, the switches are in the world;
//! while events run, other handlers must not look for them (they ask the fabric by event).

pub mod conservation;
pub mod deadlock;
pub mod faults;
pub mod link;
pub mod switch;
pub mod switch_config;

use crate::packet::Packet;
use crate::pcie::PcieLink;
use crate::sets::BuildSet;
use crate::topology::routing::{Routes, switch_salt};
use crate::topology::{NodeKind, Topology, TopologyConfig};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::IntoScheduleConfigs;
use engine::prelude::*;
use link::LinkDirection;
use std::sync::Arc;
pub use switch_config::SwitchConfig;

/// What the scenario says about the fabric.
#[derive(Resource, Clone, Debug)]
pub struct FabricConfig {
    pub topology: TopologyConfig,
    pub switch: SwitchConfig,
    pub seed: u64,
}

/// A host node, an entity.
#[derive(Component, Debug)]
pub struct Host {
    pub node: u32,
    pub name: String,
}

/// Receives the packets that arrive at a host's port: the NIC plugin provides one.
///
/// The fabric's handler owns it while events run. A NIC may route its own event kinds to that
/// handler (`App::share_handler(kinds, FabricKinds::arrive)`), which passes them to `handle`:
/// then one owner serves everything that touches a NIC, and it may hold the NICs' components
/// out of the world while events run, reaching a NIC by index instead of by a query (`pause`
/// is where it puts them back). A receiver that wraps another (a test's tap) passes all three on.
pub trait PortReceiver: Send + Sync + 'static {
    fn receive(&mut self, world: &mut World, q: &mut EventQueue, host: u32, pkt: Packet);

    /// An event of a kind the NIC routed to the fabric's handler.
    fn handle(&mut self, _world: &mut World, _q: &mut EventQueue, ev: &SimEvent) {
        panic!(
            "event kind {} was routed to a port receiver that handles none",
            ev.kind.0
        )
    }

    /// The loop stopped (`Handler::pause`): put back into the world whatever was taken out.
    fn pause(&mut self, _world: &mut World) {}
}

/// Where the NIC plugin leaves its receiver for the fabric to take at the start of the run.
#[derive(Resource, Default)]
pub struct HostReceiver(pub Option<Box<dyn PortReceiver>>);

/// The fabric's event kinds; a resource from the fabric plugin's `build` on.
#[derive(Resource, Clone, Copy, Debug)]
pub struct FabricKinds {
    pub arrive: EventKind,
    pub switch_tx: EventKind,
    /// Targeted at a switch's node id, with `switch::send_pfc_data` as data.
    pub send_pfc: EventKind,
    /// The channels packets propagate in, one per link direction (numbered by its id).
    pub packet: ChannelKey<Packet>,
}

/// The built fabric: ids to entities, and what routing needs. Shared (read-only) by handlers.
#[derive(Debug)]
pub struct FabricIndex {
    pub topology: Topology,
    pub routes: Routes,
    pub kinds: FabricKinds,
    /// Entity of each node id.
    pub nodes: Vec<Entity>,
    /// Entity holding each link direction id: a host's egress direction is a `LinkDirection`
    /// component on the host's port entity (with its `PcieLink`, and the NIC's component); a
    /// switch's egress directions are in its `Switch` (`Switch::wire`).
    pub dirs: Vec<Entity>,
    /// The node and port each link direction id arrives at.
    pub dir_to: Vec<(u32, u16)>,
    /// `egress[node][port]`: the link direction leaving that port.
    pub egress: Vec<Vec<u32>>,
    /// Port entity of each host: its `PcieLink` and its egress `LinkDirection`.
    pub pcie: Vec<Entity>,
    /// ECMP salt of each node (0 for hosts).
    pub salts: Vec<u64>,
}

impl FabricIndex {
    /// The link direction a host's NIC transmits on.
    pub fn host_egress(&self, host: u32) -> u32 {
        self.egress[host as usize][0]
    }
    pub fn num_hosts(&self) -> usize {
        self.topology.num_hosts
    }
}

/// The target of a `send_pfc` event that is no switch's: a link between switches went down or
/// came up (only with faults), and the routes are recomputed. Riding on a rare kind keeps the
/// per-event kind checks as they are without faults.
const REROUTE: u32 = u32::MAX;

/// The built fabric, as a resource.
#[derive(Resource, Clone, Debug)]
pub struct Fabric(pub Arc<FabricIndex>);

/// Builds the fabric from `FabricConfig` and registers the packet handlers.
pub struct FabricPlugin;

impl Plugin for FabricPlugin {
    fn build(&self, app: &mut App) {
        crate::sets::configure(app);
        let kinds = FabricKinds {
            arrive: app.add_event_kind("fabric.arrive"),
            switch_tx: app.add_event_kind("fabric.switch_tx"),
            send_pfc: app.add_event_kind("fabric.send_pfc"),
            packet: app.queue().add_channel_type::<Packet>(),
        };
        app.insert_resource(kinds);
        app.insert_resource(HostReceiver::default());
        app.add_systems(Build, build_fabric.in_set(BuildSet::Fabric));
        // Without faults, the handler is built without their checks (see `FabricHandler`).
        let handled = [kinds.arrive, kinds.switch_tx, kinds.send_pfc];
        let faulty = app
            .world
            .get_resource::<faults::FaultConfig>()
            .is_some_and(|f| !f.0.is_empty());
        if faulty {
            app.set_handler_for(&handled, FabricHandler::<true>::default());
        } else {
            app.set_handler_for(&handled, FabricHandler::<false>::default());
        }
        switch::register_beacon_columns(app);
        app.insert_resource(conservation::Delivered::default());
        app.add_systems(Finish, conservation::check_conservation.in_set(BuildSet::Fabric));
        conservation::register_beacon_columns(app);
    }
}

/// Spawns every node, link direction and PCIe link, in topology order (so source ids are
/// stable), and computes the routes.
pub fn build_fabric(world: &mut World) {
    let cfg = world.resource::<FabricConfig>().clone();
    let kinds = *world.resource::<FabricKinds>();
    // The loader validated the topology; a failure here is a bug in that validation.
    let topology = cfg.topology.build().expect("topology validated at load");
    let routes = Routes::compute(&topology);
    // Link directions first, in id order: each registers its event source and channel.
    let mut egress: Vec<Vec<u32>> = topology.nodes.iter().map(|n| vec![u32::MAX; n.ports.len()]).collect();
    let mut wires: Vec<Option<LinkDirection>> = Vec::with_capacity(topology.links.len() * 2);
    let mut dir_to = Vec::with_capacity(topology.links.len() * 2);
    let mut delays = Vec::with_capacity(topology.links.len() * 2);
    for (l, link) in topology.links.iter().enumerate() {
        for (d, (from, to)) in [(link.a, link.b), (link.b, link.a)].into_iter().enumerate() {
            let id = (2 * l + d) as u32;
            let fwd = match topology.nodes[to.0 as usize].kind {
                NodeKind::Switch => cfg.switch.ForwardingLatency.0,
                NodeKind::Host => SimTime::ZERO,
            };
            let dir = LinkDirection::new(
                &mut world.resource_mut::<EventQueue>(),
                id,
                from,
                to,
                link.rate,
                link.delay.0 + fwd,
                kinds.arrive,
                kinds.packet,
            );
            egress[from.0 as usize][from.1 as usize] = id;
            delays.push(dir.delay);
            dir_to.push(to);
            wires.push(Some(dir));
        }
    }
    let mut dir_entity: Vec<Option<Entity>> = vec![None; wires.len()];
    let mut nodes = Vec::with_capacity(topology.nodes.len());
    let mut pcie = Vec::new();
    let mut salts = Vec::new();
    for (id, node) in topology.nodes.iter().enumerate() {
        let id = id as u32;
        match node.kind {
            NodeKind::Host => {
                nodes.push(
                    world
                        .spawn(Host {
                            node: id,
                            name: node.name.clone(),
                        })
                        .id(),
                );
                // The host's port: its PCIe link and the direction it sends on, one entity (the
                // NIC plugin adds its component here too, so a NIC event is one lookup).
                let d = egress[id as usize][0];
                let wire = wires[d as usize].take().expect("a host has one link");
                let port = world
                    .spawn((
                        PcieLink {
                            host: id,
                            ..Default::default()
                        },
                        wire,
                    ))
                    .id();
                dir_entity[d as usize] = Some(port);
                pcie.push(port);
                salts.push(0);
            }
            NodeKind::Switch => {
                let salt = switch_salt(cfg.seed, id);
                // A switch owns the directions it sends on, next to the queues that feed them.
                let own: Vec<LinkDirection> = egress[id as usize]
                    .iter()
                    .map(|&d| wires[d as usize].take().expect("one egress direction per port"))
                    .collect();
                let sw = switch::Switch::new(id, node.name.clone(), own.len(), &cfg.switch, cfg.seed).with_wires(own);
                let e = world.spawn(sw).id();
                for &d in &egress[id as usize] {
                    dir_entity[d as usize] = Some(e);
                }
                nodes.push(e);
                salts.push(salt);
            }
        }
    }
    let dirs = dir_entity
        .into_iter()
        .map(|e| e.expect("every direction leaves a host or a switch"))
        .collect();
    let fault_cfg = world.get_resource::<faults::FaultConfig>().cloned().unwrap_or_default();
    if let Some(f) = faults::FaultState::new(&fault_cfg, &topology, &delays, cfg.seed) {
        let changes = f.route_changes();
        if !changes.is_empty() {
            let mut q = world.resource_mut::<EventQueue>();
            let source = q.add_source();
            for t in changes {
                q.schedule(t, source, kinds.send_pfc, REROUTE, 0);
            }
        }
        world.insert_resource(f);
    }
    world.insert_resource(Fabric(Arc::new(FabricIndex {
        topology,
        routes,
        kinds,
        nodes,
        dirs,
        dir_to,
        egress,
        pcie,
        salts,
    })));
}

/// The fabric's events: `fabric.arrive`, `fabric.switch_tx` and `fabric.send_pfc`, and those a
/// NIC routed here for its port receiver. `FAULTS`: the scenario injects faults; without, the
/// hot path carries no fault check at all, not even a test per packet arrival (the handler is
/// chosen once, when the plugin is built).
#[derive(Default)]
struct FabricHandler<const FAULTS: bool> {
    state: Option<FabricState>,
}

struct FabricState {
    fabric: Arc<FabricIndex>,
    receiver: Box<dyn PortReceiver>,
    /// Switch `num_hosts + i` is `switches[i]` while `held`; else its entity has it.
    switches: Vec<switch::Switch>,
    held: bool,
    /// Data packets handed to hosts, per class (published as `conservation::Delivered`).
    delivered: [link::Tally; 8],
    /// The injected faults; `None` without (the hot path's one extra branch).
    faults: Option<Box<faults::FaultState>>,
}

impl FabricState {
    fn new(world: &mut World) -> Self {
        let fabric = world.resource::<Fabric>().0.clone();
        let receiver = world
            .resource_mut::<HostReceiver>()
            .0
            .take()
            .expect("no NIC plugin left a HostReceiver: add a NIC plugin");
        FabricState {
            fabric,
            receiver,
            switches: Vec::new(),
            held: false,
            delivered: Default::default(),
            faults: world.remove_resource::<faults::FaultState>().map(Box::new),
        }
    }

    /// Takes every switch out of the world (the first event after a pause).
    #[cold]
    fn take_switches(&mut self, world: &mut World) {
        let num_hosts = self.fabric.topology.num_hosts;
        for &e in &self.fabric.nodes[num_hosts..] {
            let sw = world.entity_mut(e).take::<switch::Switch>();
            self.switches.push(sw.expect("a switch node's entity has its Switch"));
        }
        self.held = true;
    }
}

impl<const FAULTS: bool> Handler for FabricHandler<FAULTS> {
    #[inline]
    fn handle(&mut self, world: &mut World, q: &mut EventQueue, ev: &SimEvent) {
        let st = self.state.get_or_insert_with(|| FabricState::new(world));
        if !st.held {
            st.take_switches(world);
        }
        let fabric = &*st.fabric;
        let num_hosts = fabric.topology.num_hosts;
        if ev.kind == fabric.kinds.arrive {
            if FAULTS
                && let Some(f) = st.faults.as_deref_mut()
                && f.drop_head(q, fabric.kinds.packet, ev.target)
            {
                return;
            }
            // The packet waits in the direction's channel: no lookup of the direction's entity.
            let pkt = q.receive(fabric.kinds.packet, ev.target);
            let (to_node, to_port) = fabric.dir_to[ev.target as usize];
            match st.switches.get_mut((to_node as usize).wrapping_sub(num_hosts)) {
                Some(sw) => switch::receive(fabric, sw, q, to_port, pkt),
                None => {
                    if pkt.kind == crate::packet::PacketKind::Data {
                        st.delivered[(pkt.class & 7) as usize].add(pkt.bytes as u64);
                    }
                    st.receiver.receive(world, q, to_node, pkt)
                }
            }
            return;
        }
        // A switch's own event: `switch_tx` (data packs the node) or `send_pfc` (targets it).
        let node = if ev.kind == fabric.kinds.switch_tx {
            (ev.data >> 16) as usize
        } else if ev.kind == fabric.kinds.send_pfc {
            if FAULTS && ev.target == REROUTE {
                let f = st.faults.as_deref().expect("reroute events come with faults");
                let rerouted = Arc::new(faults::reroute(fabric, f, q.now()));
                world.insert_resource(Fabric(rerouted.clone()));
                st.fabric = rerouted;
                return;
            }
            ev.target as usize
        } else {
            st.receiver.handle(world, q, ev);
            return;
        };
        let Some(sw) = st.switches.get_mut(node.wrapping_sub(num_hosts)) else {
            panic!("{:?} event for node {node}, which is not a switch", ev.kind);
        };
        if ev.kind == fabric.kinds.switch_tx {
            switch::on_tx(fabric, sw, q, ev.data);
        } else {
            switch::on_send_pfc(fabric, sw, q, ev.data);
        }
    }

    fn pause(&mut self, world: &mut World) {
        let Some(st) = self.state.as_mut() else {
            return;
        };
        world.insert_resource(conservation::Delivered(st.delivered));
        if let Some(f) = &st.faults {
            f.publish(world);
        }
        st.receiver.pause(world);
        if !st.held {
            return;
        }
        let num_hosts = st.fabric.topology.num_hosts;
        for (sw, &e) in st.switches.drain(..).zip(&st.fabric.nodes[num_hosts..]) {
            world.entity_mut(e).insert(sw);
        }
        st.held = false;
    }
}
