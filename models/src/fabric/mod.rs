//! The fabric as ECS entities: hosts, switches, link directions and PCIe links built from the
//! topology, and the handlers that move packets between them.
//!
//! A packet's arrival, targeted at a link direction, fires when its last bit reaches the far end
//! (plus the receiving switch's forwarding latency): `fabric.arrive` on a link into a switch,
//! which the fabric's handler hands to the switch model, and `fabric.to_host` on a link into a
//! host, which goes to the NIC's own handler (`models::nic`). Switch egress ports schedule
//! `fabric.switch_tx` when their serializer frees and more is queued; `fabric.send_pfc` makes a
//! switch send a PFC frame (tests, fault injection). Each link direction is one event source.
//!
//! The switches are rows of a `Store<S>` of the switch model `S` (`models::switch`), which the
//! fabric's handler holds while events run (`engine::store`): a hop reaches its switch by index,
//! not by a lookup in the world. `FabricWith<S>` builds the fabric with model `S`; `FabricPlugin`
//! is the fabric with the shared-buffer switch (`switch::Switch`). Each host's port (its PCIe
//! link and the direction it sends on) is a row of a `Store<HostPort>`, which the NIC's handler
//! holds.

pub mod conservation;
pub mod deadlock;
pub mod faults;
pub mod link;
pub mod switch;
pub mod switch_config;
pub mod tap;

use crate::nic::HostPort;
use crate::packet::Packet;
use crate::pcie::PcieLink;
use crate::sets::BuildSet;
use crate::switch::{SwitchModel, SwitchSite, Switches};
use crate::topology::routing::{Routes, switch_salt};
use crate::topology::{NodeKind, Topology, TopologyConfig};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::IntoScheduleConfigs;
use engine::prelude::*;
use engine::store::{Held, Store};
use link::LinkDirection;
use std::marker::PhantomData;
use std::sync::Arc;
pub use switch_config::SwitchConfig;

/// What the scenario says about the fabric.
#[derive(Resource, Clone, Debug)]
pub struct FabricConfig {
    /// The topology to build.
    pub topology: TopologyConfig,
    /// The shared-buffer switch's settings, read when it is the model (`FabricPlugin`); other
    /// models read their own resource.
    pub switch: SwitchConfig,
    /// `simulation.RandomSeed`, for ECMP salts and the switches' random streams.
    pub seed: u64,
}

/// A node of the topology, an entity: a host's holds its row of `Store<HostPort>` (and of its
/// NIC's store), a switch's its row of the switch model's store, at the same index as `Node::index`.
#[derive(Component, Debug)]
pub struct Node {
    /// The node id (hosts first).
    pub id: u32,
    /// The node's name in the topology.
    pub name: String,
    /// The row of its store: the host id, or the switch's `id - num_hosts`.
    pub index: u32,
}

/// The fabric's event kinds; a resource from the fabric plugin's `build` on.
#[derive(Resource, Clone, Copy, Debug)]
pub struct FabricKinds {
    /// A packet reached a switch.
    pub arrive: EventKind,
    /// A packet reached a host: the NIC's handler serves it (`models::nic`), target the link
    /// direction id.
    pub to_host: EventKind,
    /// A switch port's serializer is free and more is queued.
    pub switch_tx: EventKind,
    /// Targeted at a switch's node id, with `models::switch::send_pfc_data` as data.
    pub send_pfc: EventKind,
    /// The channels packets propagate in, one per link direction (numbered by its id).
    pub packet: ChannelKey<Packet>,
}

/// The built fabric: ids to entities, and what routing needs. Shared (read-only) by handlers.
#[derive(Debug)]
pub struct FabricIndex {
    /// The topology built.
    pub topology: Topology,
    /// The routing tables (ECMP next hops).
    pub routes: Routes,
    /// The fabric's event kinds.
    pub kinds: FabricKinds,
    /// Entity of each node id.
    pub nodes: Vec<Entity>,
    /// Entity of the node each link direction id leaves: a host's direction is in its row of
    /// `Store<HostPort>`, a switch's in its row of the switch model (`SwitchModel::wire`).
    pub dirs: Vec<Entity>,
    /// The node and port each link direction id arrives at.
    pub dir_to: Vec<(u32, u16)>,
    /// `egress[node][port]`: the link direction leaving that port.
    pub egress: Vec<Vec<u32>>,
    /// ECMP salt of each node (0 for hosts).
    pub salts: Vec<u64>,
    /// The hop stacks of packets with in-band telemetry (`models::int`): only when a
    /// controller asks for INT (`models::int::IntRequested` at build).
    pub int: Option<Arc<crate::int::IntTable>>,
}

impl FabricIndex {
    /// The link direction a host's NIC transmits on.
    pub fn host_egress(&self, host: u32) -> u32 {
        self.egress[host as usize][0]
    }
    /// Hosts in the topology (their node ids come first).
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

/// Builds the fabric from `FabricConfig`, with the shared-buffer switch (`switch::Switch`,
/// settings in `FabricConfig::switch`), and registers the packet handlers.
pub struct FabricPlugin;

impl Plugin for FabricPlugin {
    fn build(&self, app: &mut App) {
        FabricWith::<switch::Switch>::default().build(app);
    }
}

/// Builds the fabric from `FabricConfig` with switch model `S`, and registers the packet
/// handlers: the fabric's handler is compiled for `S` (`FabricHandler<S, _>`).
pub struct FabricWith<S>(PhantomData<fn() -> S>);

impl<S> Default for FabricWith<S> {
    fn default() -> Self {
        FabricWith(PhantomData)
    }
}

impl<S: SwitchModel> Plugin for FabricWith<S> {
    fn build(&self, app: &mut App) {
        crate::sets::configure(app);
        let kinds = FabricKinds {
            arrive: app.add_event_kind("fabric.arrive"),
            to_host: app.add_event_kind("fabric.to_host"),
            switch_tx: app.add_event_kind("fabric.switch_tx"),
            send_pfc: app.add_event_kind("fabric.send_pfc"),
            packet: app.queue().add_channel_type::<Packet>(),
        };
        app.insert_resource(kinds);
        app.add_systems(Build, build_fabric::<S>.in_set(BuildSet::Fabric));
        // Without faults, the handler is built without their checks (see `FabricHandler`).
        let handled = [kinds.arrive, kinds.switch_tx, kinds.send_pfc];
        let faulty = app
            .world
            .get_resource::<faults::FaultConfig>()
            .is_some_and(|f| !f.0.is_empty());
        if faulty {
            app.set_handler_for(&handled, FabricHandler::<S, true>::default());
        } else {
            app.set_handler_for(&handled, FabricHandler::<S, false>::default());
        }
        // A tap (`tap::tap_switch_ports`, added later by a capture) swaps in the checked handler.
        app.insert_resource(tap::Instrument(|app| {
            let arrive = app.world.resource::<FabricKinds>().arrive;
            app.wrap_handler(arrive, |_| Box::new(FabricHandler::<S, true>::default()));
        }));
        crate::switch::register_beacon_columns(app);
        app.insert_resource(conservation::Delivered::default());
        app.add_systems(Finish, conservation::check_conservation.in_set(BuildSet::Fabric));
        conservation::register_beacon_columns(app);
    }
}

/// Spawns every node, link direction and PCIe link, in topology order (so source ids are
/// stable), and computes the routes.
pub fn build_fabric<S: SwitchModel>(world: &mut World) {
    let cfg = world.resource::<FabricConfig>().clone();
    let settings = S::settings(world);
    let forwarding = S::forwarding_latency(&settings);
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
            let (fwd, arrive) = match topology.nodes[to.0 as usize].kind {
                NodeKind::Switch => (forwarding, kinds.arrive),
                NodeKind::Host => (SimTime::ZERO, kinds.to_host),
            };
            let dir = LinkDirection::new(
                &mut world.resource_mut::<EventQueue>(),
                id,
                from,
                to,
                link.rate,
                link.delay.0 + fwd,
                arrive,
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
    let mut salts = Vec::new();
    let (mut ports, mut switches) = (Store::<HostPort>::default(), Store::<S>::default());
    for (id, node) in topology.nodes.iter().enumerate() {
        let id = id as u32;
        let index = match node.kind {
            NodeKind::Host => id,
            NodeKind::Switch => id - topology.num_hosts as u32,
        };
        let e = world
            .spawn(Node {
                id,
                name: node.name.clone(),
                index,
            })
            .id();
        nodes.push(e);
        match node.kind {
            NodeKind::Host => {
                // The host's port: its PCIe link and the direction it sends on.
                let d = egress[id as usize][0];
                let wire = wires[d as usize].take().expect("a host has one link");
                let pcie = PcieLink {
                    host: id,
                    ..Default::default()
                };
                ports.push(e, HostPort { pcie, wire });
                dir_entity[d as usize] = Some(e);
                salts.push(0);
            }
            NodeKind::Switch => {
                let salt = switch_salt(cfg.seed, id);
                // A switch owns the directions it sends on, next to the queues that feed them.
                let own: Vec<LinkDirection> = egress[id as usize]
                    .iter()
                    .map(|&d| wires[d as usize].take().expect("one egress direction per port"))
                    .collect();
                let site = SwitchSite {
                    node: id,
                    name: &node.name,
                    ports: own.len(),
                    seed: cfg.seed,
                };
                switches.push(e, S::new(&settings, site, own));
                for &d in &egress[id as usize] {
                    dir_entity[d as usize] = Some(e);
                }
                salts.push(salt);
            }
        }
    }
    let dirs = dir_entity
        .into_iter()
        .map(|e| e.expect("every direction leaves a host or a switch"))
        .collect();
    world.insert_resource(ports);
    world.insert_resource(switches);
    world.insert_resource(Switches::of::<S>(&settings));
    let fault_cfg = world.get_resource::<faults::FaultConfig>().cloned().unwrap_or_default();
    let host_faults = faults::FaultState::new(&fault_cfg, &topology, &delays, cfg.seed, faults::FaultPart::Hosts);
    world.insert_resource(faults::HostFaults(host_faults));
    if let Some(f) = faults::FaultState::new(&fault_cfg, &topology, &delays, cfg.seed, faults::FaultPart::Switches) {
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
    let int = world
        .contains_resource::<crate::int::IntRequested>()
        .then(|| Arc::new(crate::int::IntTable::default()));
    let index = Arc::new(FabricIndex {
        topology,
        routes,
        kinds,
        nodes,
        dirs,
        dir_to,
        egress,
        salts,
        int,
    });
    if let Some(plan) = world.get_resource::<crate::shard::ShardPlan>().cloned() {
        crate::shard::port::install(world, &plan, &index);
    }
    let hosts = index.topology.num_hosts;
    world.insert_resource(Fabric(index));
    set_lookahead(&mut world.resource_mut::<EventQueue>(), hosts);
}

/// Fabrics of at least this many hosts run with the event queue's lookahead on: their state
/// outgrows the caches, so warming an event's state ahead pays; below, it costs more than it
/// hides (docs/performance.md, "Warming events ahead").
pub const LOOKAHEAD_HOSTS: usize = 2048;

/// How many events the lookahead holds when on.
pub const LOOKAHEAD_EVENTS: usize = 16;

/// Turns the lookahead on for a fabric of `hosts` hosts at or above `LOOKAHEAD_HOSTS`; never off
/// (a plugin or test may have turned it on). `RDMASIM_LOOKAHEAD=N` in the environment sets it
/// to N events instead (0: off), for measuring; the results are the same either way.
fn set_lookahead(q: &mut EventQueue, hosts: usize) {
    let forced = std::env::var("RDMASIM_LOOKAHEAD")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok());
    match forced {
        Some(n) => q.set_lookahead(n.min(engine::event::MAX_LOOKAHEAD)),
        None if hosts >= LOOKAHEAD_HOSTS && q.lookahead() == 0 => q.set_lookahead(LOOKAHEAD_EVENTS),
        None => {}
    }
}

/// The fabric's events: `fabric.arrive`, `fabric.switch_tx` and `fabric.send_pfc`. `FAULTS`: the
/// scenario injects faults, a capture taps switch ports or a controller asks for in-band
/// telemetry (the switch model's `INT`); without, the hot path carries no fault, tap or INT
/// check at all, not even a test per packet arrival (the handler is chosen once, before the
/// run).
/// `S`: the switch model, whose decisions the handler calls directly (monomorphized).
struct FabricHandler<S: SwitchModel, const FAULTS: bool> {
    state: Option<FabricState<S>>,
}

impl<S: SwitchModel, const FAULTS: bool> Default for FabricHandler<S, FAULTS> {
    fn default() -> Self {
        FabricHandler { state: None }
    }
}

struct FabricState<S: SwitchModel> {
    fabric: Arc<FabricIndex>,
    /// Switch `num_hosts + i` is row `i`.
    switches: Held<S>,
    /// The injected faults on links into switches; `None` without.
    faults: Option<Box<faults::FaultState>>,
    /// The tapped switch ports; `None` without.
    taps: Option<Box<tap::Taps>>,
}

impl<S: SwitchModel> FabricState<S> {
    #[cold]
    fn new(world: &mut World) -> Self {
        FabricState {
            fabric: world.resource::<Fabric>().0.clone(),
            switches: Held::new("the fabric's handler"),
            faults: world.remove_resource::<faults::FaultState>().map(Box::new),
            taps: tap::Taps::new::<S>(world, world.resource::<Fabric>().0.topology.num_hosts),
        }
    }
}

/// An arrival the fabric's handler was given for a host: a bug in the fabric's build.
#[cold]
#[inline(never)]
fn not_a_switch(node: u32) -> ! {
    panic!("fabric.arrive at node {node}, which is not a switch")
}

impl<S: SwitchModel, const FAULTS: bool> Handler for FabricHandler<S, FAULTS> {
    #[inline]
    fn handle(&mut self, world: &mut World, q: &mut EventQueue, ev: &SimEvent) {
        let st = self.state.get_or_insert_with(|| FabricState::new(world));
        st.switches.ensure(world);
        let fabric = &*st.fabric;
        let num_hosts = fabric.topology.num_hosts;
        if ev.kind == fabric.kinds.arrive {
            if FAULTS
                && let Some(f) = st.faults.as_deref_mut()
                && f.drop_head(q, fabric.kinds.packet, ev.target)
            {
                return;
            }
            // The packet waits in the direction's channel, and where it arrives is the event's
            // word: no lookup of the direction's entity nor of a table.
            let (to_node, to_port) = link::arrival_at(ev.data);
            match st
                .switches
                .held_rows()
                .get_mut((to_node as usize).wrapping_sub(num_hosts))
            {
                // Taken from its channel only here, where it moves straight into the switch:
                // popped earlier, it lived across the lookups in stack slots, field by field.
                Some(sw) => {
                    let pkt = q.receive(fabric.kinds.packet, ev.target);
                    if FAULTS && let Some(t) = st.taps.as_deref_mut() {
                        t.saw(ev.target, q.now(), &pkt);
                    }
                    sw.arrive::<FAULTS>(fabric, q, to_port, pkt)
                }
                None => not_a_switch(to_node),
            }
            if FAULTS && let Some(t) = st.taps.as_deref_mut() {
                t.flush(world);
            }
            return;
        }
        let switches = st.switches.held_rows();
        // A switch's own event: `switch_tx` (data packs the node) or `send_pfc` (targets it).
        let node = if ev.kind == fabric.kinds.switch_tx {
            (ev.data >> 16) as usize
        } else {
            if FAULTS && ev.target == REROUTE {
                let f = st.faults.as_deref().expect("reroute events come with faults");
                let rerouted = Arc::new(faults::reroute(fabric, f, q.now()));
                world.insert_resource(Fabric(rerouted.clone()));
                st.fabric = rerouted;
                return;
            }
            ev.target as usize
        };
        let Some(sw) = switches.get_mut(node.wrapping_sub(num_hosts)) else {
            panic!("{:?} event for node {node}, which is not a switch", ev.kind);
        };
        if ev.kind == fabric.kinds.switch_tx {
            debug_assert_eq!(ev.data >> 16, sw.node() as u64);
            sw.tx_ready::<FAULTS>(fabric, q, (ev.data & 0xFFFF) as u16);
        } else {
            let (port, class, pause) = crate::switch::read_send_pfc_data(ev.data);
            sw.send_pfc(fabric, q, port, class, pause);
        }
    }

    /// Warms a packet's arrival at a switch: five steps ahead its channel, four steps ahead the
    /// channel's head and the switch, then the switch model's own steps; a port's send likewise
    /// (`SwitchModel::warm_*`).
    #[inline]
    fn prefetch(&self, q: &EventQueue, ev: &SimEvent, ahead: usize) {
        let Some(st) = self.state.as_ref() else { return };
        let fabric = &*st.fabric;
        let num_hosts = fabric.topology.num_hosts;
        if ev.kind == fabric.kinds.arrive {
            if ahead >= 5 {
                q.prefetch_channel(fabric.kinds.packet, ev.target);
                return;
            }
            let (to_node, to_port) = link::arrival_at(ev.data);
            let Some(sw) = st.switches.held_ref().get((to_node as usize).wrapping_sub(num_hosts)) else {
                return;
            };
            if ahead == 4 {
                q.warm_channel(fabric.kinds.packet, ev.target);
                sw.warm_state();
            } else if let Some(pkt) = q.channel_head(fabric.kinds.packet, ev.target) {
                sw.warm_arrival(fabric, q, to_port, pkt, ahead);
            }
        } else if ev.kind == fabric.kinds.switch_tx {
            let node = (ev.data >> 16) as usize;
            let Some(sw) = st.switches.held_ref().get(node.wrapping_sub(num_hosts)) else {
                return;
            };
            match ahead {
                5 => sw.warm_state(),
                _ => sw.warm_tx(fabric, q, (ev.data & 0xFFFF) as u16, ahead),
            }
        }
    }

    /// An arrival and a port's send are warmed at every step (a send: the switch, then the
    /// port, the queue it will serve, that queue's head and the head's ingress port); a PFC
    /// frame's send is not warmed.
    fn warm_steps(&mut self, world: &mut World, kind: EventKind) -> u8 {
        let kinds = &self.state.get_or_insert_with(|| FabricState::new(world)).fabric.kinds;
        if kind == kinds.arrive || kind == kinds.switch_tx {
            engine::dispatch::warm_at(&[5, 4, 3, 2, 1])
        } else {
            0
        }
    }

    fn pause(&mut self, world: &mut World) {
        let Some(st) = self.state.as_mut() else {
            return;
        };
        if let Some(f) = &st.faults {
            f.publish(world, faults::FaultPart::Switches);
        }
        st.switches.put_back(world);
    }
}
