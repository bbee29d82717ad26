//! The contract suite's application: it speaks to the NIC only through `models::nic` (it never
//! names a NIC), and it watches the wire only through a tap on the hosts' ports, so what it sees
//! is the same whatever NIC is under it.
//!
//! At build it adds its connections to `Connections` (a source each); at start it schedules
//! `listen` and `connect`; on `established` it posts its WQEs for that connection at once; on
//! `wqe_completed` it records the completion with what the tap had seen delivered by then. The
//! tap (`crate::fabric::tap_hosts`, middleware the NIC does not know about) counts the
//! payload of every data packet that reaches a host, per (sender, receiver) pair.

use bevy_ecs::prelude::*;
use bevy_ecs::schedule::IntoScheduleConfigs;
use engine::prelude::*;
use models::nic::{ConnectionSpec, Connections, NicContract, Wqe, WqeTimes};
use models::packet::PacketKind;
use models::sets::BuildSet;
use std::collections::BTreeMap;

/// What the driver does: its connections and the WQEs it posts on each.
#[derive(Resource, Clone, Debug)]
pub struct DriverConfig {
    /// `(initiator, responder)` host of each connection.
    pub connections: Vec<(u32, u32)>,
    /// The sizes of the WQEs posted on each connection when it is established, in post order.
    pub wqe_bytes: Vec<u64>,
    /// Traffic class of every connection.
    pub class: u8,
}

/// A WQE the driver posted.
#[derive(Clone, Copy, Debug)]
pub struct Posted {
    pub entity: Entity,
    pub connection: u32,
    pub number: u64,
    pub bytes: u64,
    pub at: SimTime,
}

/// A `wqe_completed` the driver received.
#[derive(Clone, Copy, Debug)]
pub struct Completion {
    pub entity: Entity,
    pub at: SimTime,
    /// The `Wqe` component as it was then.
    pub connection: u32,
    pub number: u64,
    pub bytes: u64,
    pub times: WqeTimes,
    pub completed_flag: bool,
    /// Payload the tap had seen reach the responder from the initiator by then.
    pub delivered_then: u64,
}

/// What the driver saw.
#[derive(Resource, Default, Debug)]
pub struct DriverLog {
    pub established: Vec<(u32, SimTime)>,
    pub posted: Vec<Posted>,
    pub completions: Vec<Completion>,
}

/// What the tap counted: data payload reaching each host, per `(src, dst)`.
#[derive(Resource, Default, Debug)]
pub struct Delivered {
    pub payload: BTreeMap<(u32, u32), u64>,
    pub packets: u64,
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
        app.insert_resource(Delivered::default());
        app.insert_resource(Sources::default());
        app.set_handler(
            contract.established,
            move |w: &mut World, q: &mut EventQueue, ev: SimEvent| {
                let connection = contract.established.payload(&ev);
                w.resource_mut::<DriverLog>().established.push((connection, ev.time));
                let initiator = w.resource::<DriverConfig>().connections[connection as usize].0;
                let source = w.resource::<Sources>().0[connection as usize];
                let sizes = w.resource::<DriverConfig>().wqe_bytes.clone();
                for (i, bytes) in sizes.into_iter().enumerate() {
                    let number = i as u64 + 1;
                    let times = WqeTimes {
                        posted: ev.time,
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
                        at: ev.time,
                    };
                    w.resource_mut::<DriverLog>().posted.push(posted);
                    contract.post_wqe.schedule(q, ev.time, source, initiator, entity);
                }
            },
        );
        app.set_handler(
            contract.wqe_completed,
            move |w: &mut World, _: &mut EventQueue, ev: SimEvent| {
                let entity = contract.wqe_completed.payload(&ev);
                let wqe = w
                    .get::<Wqe>(entity)
                    .expect("wqe_completed names a live WQE entity")
                    .clone();
                let pair = w.resource::<DriverConfig>().connections[wqe.connection as usize];
                let delivered_then = w.resource::<Delivered>().payload.get(&pair).copied().unwrap_or(0);
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
            },
        );
        app.add_systems(Build, add_connections.in_set(BuildSet::Applications));
        app.add_systems(Start, schedule_setup);
        // Counts data payload reaching each host, then the packet goes on to the NIC untouched.
        crate::fabric::tap_hosts(app, |world, _, host, pkt| {
            if pkt.kind == PacketKind::Data {
                let mut d = world.resource_mut::<Delivered>();
                *d.payload.entry((pkt.src, host)).or_default() += pkt.payload as u64;
                d.packets += 1;
            }
            true
        });
    }
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
            doorbell_bytes: 64 + 28,
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
