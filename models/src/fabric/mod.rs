//! The fabric as ECS entities: hosts, switches, link directions and PCIe links built from the
//! topology, and the handlers that move packets between them.
//!
//! One event kind carries packets: `fabric.arrive`, targeted at a link direction, fires when a
//! packet's last bit reaches the far end (plus the receiving switch's forwarding latency). The
//! handler hands the packet to the switch model or, at a host, to the NIC plugin's
//! `PortReceiver`. Switch egress ports schedule `fabric.switch_tx` when their serializer frees
//! and more is queued. Each link direction is one event source.

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
pub trait PortReceiver: Send + Sync + 'static {
    fn receive(&mut self, world: &mut World, q: &mut EventQueue, host: u32, pkt: Packet);
}

/// Where the NIC plugin leaves its receiver for the fabric to take at the start of the run.
#[derive(Resource, Default)]
pub struct HostReceiver(pub Option<Box<dyn PortReceiver>>);

/// The fabric's event kinds.
#[derive(Clone, Copy, Debug)]
pub struct FabricKinds {
    pub arrive: EventKind,
    pub switch_tx: EventKind,
}

/// The built fabric: ids to entities, and what routing needs. Shared (read-only) by handlers.
#[derive(Debug)]
pub struct FabricIndex {
    pub topology: Topology,
    pub routes: Routes,
    pub kinds: FabricKinds,
    /// Entity of each node id.
    pub nodes: Vec<Entity>,
    /// Entity of each link direction id.
    pub dirs: Vec<Entity>,
    /// `egress[node][port]`: the link direction leaving that port.
    pub egress: Vec<Vec<u32>>,
    /// PCIe link entity of each host.
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
        };
        app.insert_resource(PendingKinds(kinds));
        app.insert_resource(HostReceiver::default());
        app.add_systems(Build, build_fabric.in_set(BuildSet::Fabric));
        app.set_handler(kinds.arrive, ArriveHandler::default());
        app.set_handler(kinds.switch_tx, SwitchTxHandler::default());
        switch::register_beacon_columns(app);
    }
}

#[derive(Resource)]
struct PendingKinds(FabricKinds);

/// Spawns every node, link direction and PCIe link, in topology order (so source ids are
/// stable), and computes the routes.
pub fn build_fabric(world: &mut World) {
    let cfg = world.resource::<FabricConfig>().clone();
    let kinds = world.resource::<PendingKinds>().0;
    // The loader validated the topology; a failure here is a bug in that validation.
    let topology = cfg.topology.build().expect("topology validated at load");
    let routes = Routes::compute(&topology);
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
                pcie.push(
                    world
                        .spawn(PcieLink {
                            host: id,
                            ..Default::default()
                        })
                        .id(),
                );
                salts.push(0);
            }
            NodeKind::Switch => {
                let salt = switch_salt(cfg.seed, id);
                let sw = switch::Switch::new(id, node.name.clone(), node.ports.len(), &cfg.switch, cfg.seed);
                nodes.push(world.spawn(sw).id());
                salts.push(salt);
            }
        }
    }
    let mut egress: Vec<Vec<u32>> = topology.nodes.iter().map(|n| vec![u32::MAX; n.ports.len()]).collect();
    let mut dirs = Vec::with_capacity(topology.links.len() * 2);
    for (l, link) in topology.links.iter().enumerate() {
        for (d, (from, to)) in [(link.a, link.b), (link.b, link.a)].into_iter().enumerate() {
            let id = (2 * l + d) as u32;
            let source = world.resource_mut::<EventQueue>().add_source();
            let fwd = match topology.nodes[to.0 as usize].kind {
                NodeKind::Switch => cfg.switch.ForwardingLatency.0,
                NodeKind::Host => SimTime::ZERO,
            };
            let dir = LinkDirection::new(id, from, to, link.rate, link.delay.0 + fwd, source);
            egress[from.0 as usize][from.1 as usize] = id;
            dirs.push(world.spawn(dir).id());
        }
    }
    world.insert_resource(Fabric(Arc::new(FabricIndex {
        topology,
        routes,
        kinds,
        nodes,
        dirs,
        egress,
        pcie,
        salts,
    })));
}

/// `fabric.arrive`: a packet reached the far end of a link direction.
#[derive(Default)]
struct ArriveHandler {
    state: Option<ArriveState>,
}

struct ArriveState {
    fabric: Arc<FabricIndex>,
    switch: switch::SwitchLogic,
    receiver: Box<dyn PortReceiver>,
}

impl ArriveState {
    fn new(world: &mut World) -> Self {
        let fabric = world.resource::<Fabric>().0.clone();
        let receiver = world
            .resource_mut::<HostReceiver>()
            .0
            .take()
            .expect("no NIC plugin left a HostReceiver: add a NIC plugin");
        ArriveState {
            switch: switch::SwitchLogic::new(world, fabric.clone()),
            fabric,
            receiver,
        }
    }
}

impl Handler for ArriveHandler {
    #[inline]
    fn handle(&mut self, world: &mut World, q: &mut EventQueue, ev: SimEvent) {
        let st = self.state.get_or_insert_with(|| ArriveState::new(world));
        let entity = st.fabric.dirs[ev.target as usize];
        let (pkt, to_node, to_port) = {
            // `World::get_mut` skips the query's archetype refresh: fewer instructions per packet.
            let mut dir = world.get_mut::<LinkDirection>(entity).expect("link direction entity");
            let pkt = dir.take_arrival(q, st.fabric.kinds.arrive);
            (pkt, dir.to_node, dir.to_port)
        };
        if (to_node as usize) < st.fabric.topology.num_hosts {
            st.receiver.receive(world, q, to_node, pkt);
        } else {
            st.switch.receive(world, q, to_node, to_port, pkt);
        }
    }
}

/// `fabric.switch_tx`: a switch egress serializer is free and may have more to send.
#[derive(Default)]
struct SwitchTxHandler {
    state: Option<switch::SwitchLogic>,
}

impl Handler for SwitchTxHandler {
    fn handle(&mut self, world: &mut World, q: &mut EventQueue, ev: SimEvent) {
        let st = self.state.get_or_insert_with(|| {
            let fabric = world.resource::<Fabric>().0.clone();
            switch::SwitchLogic::new(world, fabric)
        });
        st.on_tx(world, q, ev.target, ev.data);
    }
}
