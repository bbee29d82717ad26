//! The contract suites' application, which a NIC's own tests and benchmarks reuse: it speaks to
//! the NIC only through `models::nic` (it never names a NIC), and it watches the wire only
//! through a tap on the hosts' ports, so what it sees is the same whatever NIC is under it.
//!
//! At build it adds its connections to `Connections` (a source each); at start it schedules
//! `listen` and `connect`; on `established` it posts its WQEs for that connection at once; on
//! `wqe_completed` it records the completion with what the tap had seen delivered by then and,
//! in closed loop, posts one more (the spec's `MaxPendingWQEs` generation). The tap
//! (`crate::fabric::tap_hosts`, middleware the NIC does not know about) counts the payload of
//! every data packet that reaches a host, per (sender, receiver) pair, can keep every such
//! packet, and can drop chosen ones once: a clean, deterministic way to inject a loss.

use bevy_ecs::prelude::*;
use bevy_ecs::schedule::IntoScheduleConfigs;
use engine::prelude::*;
use engine::store::Store;
use models::fabric::link::LinkDirection;
use models::nic::{ConnectionSpec, Connections, HostPort, NicContract, Wqe, WqeTimes};
use models::packet::{Packet, PacketKind};
use models::pcie::PcieLink;
use models::sets::BuildSet;
use std::collections::{BTreeMap, BTreeSet};

/// The spec's WQE size, in bytes.
pub const WQE_BYTES: u64 = 250_000;
/// The spec's default `DoorbellPayloadSize`, in bytes.
pub const DOORBELL_PAYLOAD_BYTES: u64 = 64;
/// UDP (8 B) and IPv4 (20 B) headers the doorbell message carries on top, in bytes.
pub const DOORBELL_HEADER_BYTES: u64 = 8 + 20;

/// What the driver does: its connections and the WQEs it posts on each.
#[derive(Resource, Clone, Debug)]
pub struct DriverConfig {
    /// `(initiator, responder)` host of each connection.
    pub connections: Vec<(u32, u32)>,
    /// The sizes of the WQEs posted on each connection when it is established, in post order.
    pub wqe_bytes: Vec<u64>,
    /// Traffic class of every connection.
    pub class: u8,
    /// Post one more WQE, of the size of the one that completed, each time one completes (keeps
    /// `wqe_bytes.len()` outstanding per connection), and despawn the completed one.
    pub closed_loop: bool,
}

impl DriverConfig {
    /// `initial` WQEs of `WQE_BYTES` on each connection, class 0, open loop.
    pub fn new(connections: Vec<(u32, u32)>, initial: u64) -> Self {
        DriverConfig {
            connections,
            wqe_bytes: vec![WQE_BYTES; initial as usize],
            class: 0,
            closed_loop: false,
        }
    }
}

/// A WQE the driver posted.
#[derive(Clone, Copy, Debug)]
pub struct Posted {
    /// Its `Wqe` entity.
    pub entity: Entity,
    /// Its connection id.
    pub connection: u32,
    /// Its number on the connection, from 1 in post order.
    pub number: u64,
    /// Its payload, in bytes.
    pub bytes: u64,
    /// When it was posted.
    pub at: SimTime,
}

/// A `wqe_completed` the driver received, with the `Wqe` component as it was then.
#[derive(Clone, Copy, Debug)]
pub struct Completion {
    /// The WQE's entity.
    pub entity: Entity,
    /// The event's time.
    pub at: SimTime,
    /// `Wqe::connection`.
    pub connection: u32,
    /// `Wqe::number`.
    pub number: u64,
    /// `Wqe::bytes`.
    pub bytes: u64,
    /// `Wqe::times`.
    pub times: WqeTimes,
    /// `Wqe::completed`.
    pub completed_flag: bool,
    /// Payload the tap had seen reach the responder from the initiator by then.
    pub delivered_then: u64,
}

/// What the driver saw.
#[derive(Resource, Default, Debug)]
pub struct DriverLog {
    /// `(connection, time)` of each `established`.
    pub established: Vec<(u32, SimTime)>,
    /// Every WQE posted, in post order.
    pub posted: Vec<Posted>,
    /// Every completion, in the order they came.
    pub completions: Vec<Completion>,
}

/// A data packet the tap saw reach a host.
#[derive(Clone, Copy, Debug)]
pub struct Seen {
    /// When it reached the host.
    pub at: SimTime,
    /// The host it reached.
    pub host: u32,
    /// The packet.
    pub pkt: Packet,
    /// The tap dropped it (the NIC never saw it).
    pub dropped: bool,
}

/// The tap on the hosts' ports: what it counted, its record, and its fault plan. Insert one
/// before adding the driver to set `trace` or `drop_once`; the driver inserts a default one
/// otherwise.
#[derive(Resource, Default, Debug)]
pub struct Tap {
    /// Data payload that reached each host (and went on to its NIC), per `(src, dst)`.
    pub payload: BTreeMap<(u32, u32), u64>,
    /// Data packets that went on to the NICs.
    pub packets: u64,
    /// Keep every data packet in `seen` (tests; a benchmark leaves it off).
    pub trace: bool,
    /// Every data packet that reached a host, dropped or not, if `trace`.
    pub seen: Vec<Seen>,
    /// `(receiving host, psn)` of data packets to drop, each the first time it arrives.
    pub drop_once: BTreeSet<(u32, u32)>,
    /// Data packets dropped.
    pub dropped: u64,
}

impl Tap {
    /// A tap that keeps every data packet.
    pub fn tracing() -> Tap {
        Tap {
            trace: true,
            ..Default::default()
        }
    }
}

/// What the tap does with a packet reaching `host` at `now`: counts and records it, and keeps
/// back the chosen ones (false).
fn tap_packet(world: &mut World, now: SimTime, host: u32, pkt: &Packet) -> bool {
    if pkt.kind != PacketKind::Data {
        return true;
    }
    let mut tap = world.resource_mut::<Tap>();
    let dropped = tap.drop_once.remove(&(host, pkt.psn));
    if dropped {
        tap.dropped += 1;
    } else {
        *tap.payload.entry((pkt.src, host)).or_default() += pkt.payload as u64;
        tap.packets += 1;
    }
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

/// The driver application. Add it after the NIC.
pub struct DriverPlugin(pub DriverConfig);

/// Each connection's event source, in connection order.
#[derive(Resource, Default)]
struct Sources(Vec<SourceId>);

impl Plugin for DriverPlugin {
    fn build(&self, app: &mut App) {
        let contract = *app.world.resource::<NicContract>();
        app.insert_resource(self.0.clone());
        app.insert_resource(DriverLog::default());
        if !app.world.contains_resource::<Tap>() {
            app.insert_resource(Tap::default());
        }
        app.insert_resource(Sources::default());
        app.set_handler(
            contract.established,
            move |w: &mut World, q: &mut EventQueue, ev: SimEvent| {
                let connection = contract.established.payload(&ev);
                w.resource_mut::<DriverLog>().established.push((connection, ev.time));
                let sizes = w.resource::<DriverConfig>().wqe_bytes.clone();
                for bytes in sizes {
                    post(w, q, contract, connection, bytes);
                }
            },
        );
        app.set_handler(
            contract.wqe_completed,
            move |w: &mut World, q: &mut EventQueue, ev: SimEvent| {
                let entity = contract.wqe_completed.payload(&ev);
                let wqe = w
                    .get::<Wqe>(entity)
                    .expect("wqe_completed names a live WQE entity")
                    .clone();
                let pair = w.resource::<DriverConfig>().connections[wqe.connection as usize];
                let delivered_then = w.resource::<Tap>().payload.get(&pair).copied().unwrap_or(0);
                w.resource_mut::<DriverLog>().completions.push(Completion {
                    entity,
                    at: ev.time,
                    connection: wqe.connection,
                    number: wqe.number,
                    bytes: wqe.bytes,
                    times: wqe.times,
                    completed_flag: wqe.completed,
                    delivered_then,
                });
                if w.resource::<DriverConfig>().closed_loop {
                    // A finished WQE is only a log line now: free the entity, keep the loop going.
                    w.despawn(entity);
                    post(w, q, contract, wqe.connection, wqe.bytes);
                }
            },
        );
        app.add_systems(Build, add_connections.in_set(BuildSet::Applications));
        app.add_systems(Start, schedule_setup);
        crate::fabric::tap_hosts(app, tap_packet);
    }
}

/// Spawns the next WQE of `connection`, of `bytes`, and posts it now.
fn post(w: &mut World, q: &mut EventQueue, contract: NicContract, connection: u32, bytes: u64) {
    let initiator = w.resource::<DriverConfig>().connections[connection as usize].0;
    let log = w.resource::<DriverLog>();
    let number = 1 + log.posted.iter().filter(|p| p.connection == connection).count() as u64;
    let now = q.now();
    let times = WqeTimes {
        posted: now,
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
    let posted = Posted {
        entity,
        connection,
        number,
        bytes,
        at: now,
    };
    w.resource_mut::<DriverLog>().posted.push(posted);
    let source = w.resource::<Sources>().0[connection as usize];
    contract.post_wqe.schedule(q, now, source, initiator, entity);
}

/// `Build`: one connection spec and one event source per connection, in order.
fn add_connections(world: &mut World) {
    let cfg = world.resource::<DriverConfig>().clone();
    let first = world.resource::<Connections>().list.len() as u32;
    for (i, &(initiator, responder)) in cfg.connections.iter().enumerate() {
        let source = world.resource_mut::<EventQueue>().add_source();
        world.resource_mut::<Sources>().0.push(source);
        let id = first + i as u32;
        let spec = ConnectionSpec {
            id,
            initiator,
            responder,
            class: cfg.class,
            doorbell_bytes: DOORBELL_PAYLOAD_BYTES + DOORBELL_HEADER_BYTES,
            udp_src_port: 49152 + id as u16,
            source,
        };
        world.resource_mut::<Connections>().list.push(spec);
    }
    assert_eq!(
        first, 0,
        "the driver numbers its connections from 0: add no other application"
    );
}

/// `Start`: every responder listens, every initiator connects, at time 0.
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

/// The completions of `connection`, in the order they were reported.
pub fn completions_of(log: &DriverLog, connection: u32) -> Vec<Completion> {
    log.completions
        .iter()
        .filter(|c| c.connection == connection)
        .copied()
        .collect()
}

/// Every WQE posted completed exactly once, and `Wqe::completed` says so where it still exists.
pub fn assert_each_completes_once(world: &World) {
    let log = world.resource::<DriverLog>();
    for p in &log.posted {
        let n = log.completions.iter().filter(|c| c.entity == p.entity).count();
        let (number, conn) = (p.number, p.connection);
        assert_eq!(n, 1, "WQE {number} of connection {conn} completed {n} times");
        if let Some(w) = world.get::<Wqe>(p.entity) {
            assert!(w.completed, "WQE {number} of connection {conn} not marked completed");
        }
    }
    assert_eq!(
        log.completions.len(),
        log.posted.len(),
        "completions of WQEs never posted"
    );
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
