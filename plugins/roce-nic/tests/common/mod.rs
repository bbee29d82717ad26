//! A tiny driver application for the RoCE NIC's tests and benchmark. It speaks to the NIC only
//! through the contract of `models::nic`: at build it pushes its `ConnectionSpec`s into
//! `Connections`; at start it schedules `listen` and `connect`; on `established` it posts
//! `initial` WQE entities at once; on `wqe_completed` it records the completion and, in closed
//! loop, posts one more (the spec's `MaxPendingWQEs` generation).
//!
//! A tap (`testkit::fabric::tap_hosts`, middleware the NIC does not know about) records every
//! data packet reaching a host and can drop chosen packets once, a clean, deterministic way to
//! inject a loss.
#![allow(dead_code)] // Each test binary uses a different part of the kit.

use bevy_ecs::prelude::*;
use bevy_ecs::schedule::IntoScheduleConfigs;
use engine::prelude::*;
use engine::store::Store;
use models::fabric::link::LinkDirection;
use models::fabric::{FabricConfig, FabricPlugin, SwitchConfig};
use models::nic::{ConnectionSpec, Connections, HostPort, NicContract, NicContractPlugin, Wqe, WqeTimes};
use models::packet::{Packet, PacketKind};
use models::pcie::PcieLink;
use models::sets::BuildSet;
use models::topology::{StarTopology, TopologyConfig};
use roce_nic::{NicCounters, RoceNic, RoceNicConfig, RoceNicPlugin};
use std::collections::BTreeSet;

/// The spec's WQE size, in bytes.
pub const WQE_BYTES: u64 = 250_000;
/// The spec's default `DoorbellPayloadSize`, in bytes.
pub const DOORBELL_PAYLOAD_BYTES: u64 = 64;
/// UDP (8 B) and IPv4 (20 B) headers the doorbell message carries on top, in bytes.
pub const DOORBELL_HEADER_BYTES: u64 = 8 + 20;
/// Host link rate of the test stars.
pub const RATE: Rate = Rate::gbps(400);
/// Link delay (propagation) of the test stars.
pub const DELAY: SimTime = SimTime::from_us(1);

/// What the driver does.
#[derive(Resource, Clone, Debug)]
pub struct DriverConfig {
    /// `(initiator, responder)` host of each connection.
    pub connections: Vec<(u32, u32)>,
    /// Traffic class of every connection (`RdmaDataPacketTC`).
    pub class: u8,
    /// Bytes of every WQE.
    pub wqe_bytes: u64,
    /// WQEs posted on each connection when it is established.
    pub initial: u64,
    /// Post one more WQE each time one completes (keeps `initial` outstanding).
    pub closed_loop: bool,
}

impl DriverConfig {
    /// `initial` WQEs of `WQE_BYTES` on each connection, class 0, open loop.
    pub fn new(connections: Vec<(u32, u32)>, initial: u64) -> Self {
        DriverConfig {
            connections,
            class: 0,
            wqe_bytes: WQE_BYTES,
            initial,
            closed_loop: false,
        }
    }
}

/// A `wqe_completed` the driver received.
#[derive(Clone, Copy, Debug)]
pub struct Done {
    pub entity: Entity,
    pub at: SimTime,
    pub connection: u32,
    pub number: u64,
    pub bytes: u64,
    pub times: WqeTimes,
}

/// What the driver saw.
#[derive(Resource, Default, Debug)]
pub struct DriverLog {
    pub established: Vec<(u32, SimTime)>,
    /// `(entity, connection, number)` in post order.
    pub posted: Vec<(Entity, u32, u64)>,
    pub completions: Vec<Done>,
}

/// A data packet the tap saw reach a host.
#[derive(Clone, Copy, Debug)]
pub struct Seen {
    pub at: SimTime,
    pub host: u32,
    pub pkt: Packet,
    /// The tap dropped it (the NIC never saw it).
    pub dropped: bool,
}

/// The tap's record and its fault plan.
#[derive(Resource, Default, Debug)]
pub struct Tap {
    /// Keep every data packet in `seen` (tests; the benchmark leaves it off).
    pub trace: bool,
    pub seen: Vec<Seen>,
    /// `(receiving host, psn)` of data packets to drop, each the first time it arrives.
    pub drop_once: BTreeSet<(u32, u32)>,
    pub dropped: u64,
}

/// What the tap does with a packet reaching `host` at `now`: records it, and keeps back the
/// chosen ones (false).
fn tap_packet(world: &mut World, now: SimTime, host: u32, pkt: &Packet) -> bool {
    if pkt.kind != PacketKind::Data {
        return true;
    }
    let mut tap = world.resource_mut::<Tap>();
    let dropped = tap.drop_once.remove(&(host, pkt.psn));
    tap.dropped += dropped as u64;
    if tap.trace {
        tap.seen.push(Seen {
            at: now,
            host,
            pkt: *pkt,
            dropped,
        });
    }
    !dropped
}

/// Each connection's event source.
#[derive(Resource, Default)]
struct Sources(Vec<SourceId>);

/// The driver application. Add it after the NIC.
pub struct DriverPlugin(pub DriverConfig);

impl Plugin for DriverPlugin {
    fn build(&self, app: &mut App) {
        let contract = *app.world.resource::<NicContract>();
        app.insert_resource(self.0.clone());
        app.insert_resource(DriverLog::default());
        app.insert_resource(Sources::default());
        if !app.world.contains_resource::<Tap>() {
            app.insert_resource(Tap::default());
        }
        app.set_handler(
            contract.established,
            move |w: &mut World, q: &mut EventQueue, ev: SimEvent| {
                let connection = contract.established.payload(&ev);
                w.resource_mut::<DriverLog>().established.push((connection, ev.time));
                for _ in 0..w.resource::<DriverConfig>().initial {
                    post(w, q, contract, connection);
                }
            },
        );
        app.set_handler(
            contract.wqe_completed,
            move |w: &mut World, q: &mut EventQueue, ev: SimEvent| {
                let entity = contract.wqe_completed.payload(&ev);
                let wqe = w.get::<Wqe>(entity).expect("wqe_completed names a live WQE").clone();
                w.resource_mut::<DriverLog>().completions.push(Done {
                    entity,
                    at: ev.time,
                    connection: wqe.connection,
                    number: wqe.number,
                    bytes: wqe.bytes,
                    times: wqe.times,
                });
                if w.resource::<DriverConfig>().closed_loop {
                    // A finished WQE is only a log line now: free the entity, keep the loop going.
                    w.despawn(entity);
                    post(w, q, contract, wqe.connection);
                }
            },
        );
        app.add_systems(Build, add_connections.in_set(BuildSet::Applications));
        app.add_systems(Start, schedule_setup);
    }
}

/// Spawns the next WQE of `connection` and posts it now.
fn post(w: &mut World, q: &mut EventQueue, contract: NicContract, connection: u32) {
    let cfg = w.resource::<DriverConfig>();
    let (initiator, bytes) = (cfg.connections[connection as usize].0, cfg.wqe_bytes);
    let number = 1 + w
        .resource::<DriverLog>()
        .posted
        .iter()
        .filter(|p| p.1 == connection)
        .count() as u64;
    let times = WqeTimes {
        posted: q.now(),
        ..Default::default()
    };
    let entity = w
        .spawn(Wqe {
            connection,
            number,
            bytes,
            times,
            completed: false,
        })
        .id();
    w.resource_mut::<DriverLog>().posted.push((entity, connection, number));
    let source = w.resource::<Sources>().0[connection as usize];
    let now = q.now();
    contract.post_wqe.schedule(q, now, source, initiator, entity);
}

fn add_connections(world: &mut World) {
    let cfg = world.resource::<DriverConfig>().clone();
    for (id, &(initiator, responder)) in cfg.connections.iter().enumerate() {
        let source = world.resource_mut::<EventQueue>().add_source();
        world.resource_mut::<Sources>().0.push(source);
        world.resource_mut::<Connections>().list.push(ConnectionSpec {
            id: id as u32,
            initiator,
            responder,
            class: cfg.class,
            doorbell_bytes: DOORBELL_PAYLOAD_BYTES + DOORBELL_HEADER_BYTES,
            udp_src_port: 49152 + id as u16,
            source,
        });
    }
}

fn schedule_setup(world: &mut World) {
    let contract = *world.resource::<NicContract>();
    let conns = world.resource::<DriverConfig>().connections.clone();
    let sources = world.resource::<Sources>().0.clone();
    let mut q = world.resource_mut::<EventQueue>();
    for (id, &(initiator, responder)) in conns.iter().enumerate() {
        contract
            .listen
            .schedule(&mut q, SimTime::ZERO, sources[id], responder, ());
        contract
            .connect
            .schedule(&mut q, SimTime::ZERO, sources[id], initiator, id as u32);
    }
}

/// A star of `hosts` hosts (400 Gbps, 1 us links) with `switch`, the RoCE NIC with `nic`, the
/// driver with `driver` and a tap (tracing if `trace`).
pub fn star_app(hosts: u32, nic: RoceNicConfig, switch: SwitchConfig, driver: DriverConfig, tap: Tap) -> App {
    nic.validate().expect("test NIC config is valid");
    switch.validate(hosts as usize).expect("test switch config is valid");
    let mut app = App::new();
    app.insert_resource(FabricConfig {
        topology: TopologyConfig::Star(StarTopology {
            hosts,
            link_rate: RATE,
            link_delay: Duration(DELAY),
        }),
        switch,
        seed: 7,
    });
    app.insert_resource(tap);
    app.add_plugins(NicContractPlugin);
    app.add_plugins(FabricPlugin);
    app.add_plugins(RoceNicPlugin { config: nic });
    app.add_plugins(DriverPlugin(driver));
    testkit::fabric::tap_hosts(&mut app, tap_packet);
    app
}

/// A tap that records every data packet.
pub fn tracing_tap() -> Tap {
    Tap {
        trace: true,
        ..Default::default()
    }
}

/// Runs `app` to `stop`.
pub fn run(app: &mut App, stop: SimTime) -> RunStats {
    app.run(RunOptions {
        stop,
        beacon_interval: stop,
        progress: None,
    })
}

/// The counters of `host`'s NIC.
pub fn nic_counters(world: &World, host: u32) -> NicCounters {
    world
        .resource::<Store<RoceNic>>()
        .get(host as usize)
        .expect("RoceNic")
        .counters
}

/// The link direction `host`'s NIC transmits on.
pub fn host_egress(world: &World, host: u32) -> &LinkDirection {
    &world
        .resource::<Store<HostPort>>()
        .get(host as usize)
        .expect("host port")
        .wire
}

/// `host`'s PCIe link.
pub fn pcie(world: &World, host: u32) -> &PcieLink {
    &world
        .resource::<Store<HostPort>>()
        .get(host as usize)
        .expect("host port")
        .pcie
}

/// The completions of `connection`, in the order they were reported.
pub fn completions_of(log: &DriverLog, connection: u32) -> Vec<Done> {
    log.completions
        .iter()
        .filter(|d| d.connection == connection)
        .copied()
        .collect()
}

/// Every WQE posted completed exactly once, and `Wqe::completed` says so where it still exists.
pub fn assert_each_completes_once(world: &World) {
    let log = world.resource::<DriverLog>();
    for &(entity, conn, number) in &log.posted {
        let n = log.completions.iter().filter(|d| d.entity == entity).count();
        assert_eq!(n, 1, "WQE {number} of connection {conn} completed {n} times");
        if let Some(w) = world.get::<Wqe>(entity) {
            assert!(w.completed, "WQE {number} of connection {conn} not marked completed");
        }
    }
    assert_eq!(
        log.completions.len(),
        log.posted.len(),
        "completions of WQEs never posted"
    );
}
