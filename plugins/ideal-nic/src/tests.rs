//! The ideal NIC on a star, against figures computed from first principles: link rate, link
//! delay, the switch's forwarding latency and the packet sizes of `models::wire`. A tiny
//! application here speaks the contract (listen, connect, post at fixed times).
//!
//! Notation: `s(b)` is the serialization time of `b` bytes at the host link rate, `d` the link
//! delay, `f` the switch's forwarding latency. A frame from host to host across the star takes
//! `s(b) + d + f + s(b) + d` when nothing is queued.

use crate::state::{Active, IdealNic, Qp};
use crate::{IdealNicConfig, IdealNicPlugin};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::IntoScheduleConfigs;
use engine::prelude::*;
use engine::store::Store;
use models::fabric::{Fabric, FabricConfig, FabricPlugin, SwitchConfig};
use models::nic::BuildSet;
use models::nic::HostPort;
use models::nic::*;
use models::packet::{Packet, PacketKind};
use models::switch::send_pfc_data;
use models::topology::{StarTopology, TopologyConfig};
use models::wire::{CM_MESSAGE_BYTES, Opcode, PFC_FRAME_BYTES, ROCE_ACK_BYTES};

const RATE: Rate = Rate::gbps(400);
const D: SimTime = SimTime::from_us(1);

/// What the tiny application does and saw.
#[derive(Resource, Default)]
struct Script {
    /// `(initiator, responder)` per connection.
    conns: Vec<(u32, u32)>,
    listen: bool,
    /// `(connection, bytes, time)`: WQEs posted at fixed times.
    posts: Vec<(u32, u64, SimTime)>,
    /// `(time, host, pause)`: PFC frames sent down the switch's port to `host`.
    pfc: Vec<(SimTime, u32, bool)>,
    established: Vec<(u32, SimTime)>,
    posted: Vec<Entity>,
    completed: Vec<(Entity, SimTime)>,
    kinds: Option<(EventKind, EventKind)>,
    sources: Vec<SourceId>,
}

struct TinyApp;

impl Plugin for TinyApp {
    fn build(&self, app: &mut App) {
        let contract = *app.world.resource::<NicContract>();
        let post = app.add_event_kind("test.post");
        let pfc = app.add_event_kind("test.pfc");
        app.world.resource_mut::<Script>().kinds = Some((post, pfc));
        app.set_handler(
            contract.established,
            move |w: &mut World, _: &mut EventQueue, ev: SimEvent| {
                w.resource_mut::<Script>()
                    .established
                    .push((contract.established.payload(&ev), ev.time));
            },
        );
        app.set_handler(
            contract.wqe_completed,
            move |w: &mut World, _: &mut EventQueue, ev: SimEvent| {
                w.resource_mut::<Script>()
                    .completed
                    .push((contract.wqe_completed.payload(&ev), ev.time));
            },
        );
        app.set_handler(post, move |w: &mut World, q: &mut EventQueue, ev: SimEvent| {
            let (conn, bytes, _) = w.resource::<Script>().posts[ev.data as usize];
            let (initiator, source) = {
                let s = w.resource::<Script>();
                (s.conns[conn as usize].0, s.sources[conn as usize])
            };
            let times = WqeTimes {
                posted: ev.time,
                ..Default::default()
            };
            let e = w
                .spawn(Wqe {
                    connection: conn,
                    number: ev.data + 1,
                    bytes,
                    times,
                    completed: false,
                })
                .id();
            w.resource_mut::<Script>().posted.push(e);
            contract.post_wqe.schedule(q, ev.time, source, initiator, e);
        });
        app.set_handler(pfc, |w: &mut World, q: &mut EventQueue, ev: SimEvent| {
            // The switch sends the frame down its port towards the host, as its PFC logic would;
            // the fabric holds the switch while events run, so ask it by event.
            let fabric = w.resource::<Fabric>().0.clone();
            let port = fabric.topology.port(ev.target, 0);
            let data = send_pfc_data(port.peer_port, 0, ev.data != 0);
            q.schedule(ev.time, SourceId::ENGINE, fabric.kinds.send_pfc, port.peer_node, data);
        });
        app.add_systems(Build, build_connections.in_set(BuildSet::Applications));
        app.add_systems(Start, start);
    }
}

fn build_connections(world: &mut World) {
    let conns = world.resource::<Script>().conns.clone();
    for (id, &(initiator, responder)) in conns.iter().enumerate() {
        let source = world.resource_mut::<EventQueue>().add_source();
        world.resource_mut::<Script>().sources.push(source);
        let spec = ConnectionSpec {
            id: id as u32,
            initiator,
            responder,
            class: 0,
            doorbell_bytes: 92,
            udp_src_port: 49152 + id as u16,
            source,
        };
        world.resource_mut::<Connections>().list.push(spec);
    }
}

fn start(world: &mut World) {
    let contract = *world.resource::<NicContract>();
    let s = world.remove_resource::<Script>().unwrap();
    let (post, pfc) = s.kinds.unwrap();
    let mut q = world.resource_mut::<EventQueue>();
    for (id, &(initiator, responder)) in s.conns.iter().enumerate() {
        if s.listen {
            contract
                .listen
                .schedule(&mut q, SimTime::ZERO, s.sources[id], responder, ());
        }
        contract
            .connect
            .schedule(&mut q, SimTime::ZERO, s.sources[id], initiator, id as u32);
    }
    for (i, &(conn, _, at)) in s.posts.iter().enumerate() {
        q.schedule(at, s.sources[conn as usize], post, 0, i as u64);
    }
    for &(at, host, pause) in &s.pfc {
        q.schedule(at, SourceId::ENGINE, pfc, host, pause as u64);
    }
    world.insert_resource(s);
}

/// Runs `script` on a star of `hosts` hosts (400 Gbps, 1 us links, default switch) for 100 us.
fn run(hosts: u32, script: Script) -> App {
    let mut app = App::new();
    app.insert_resource(FabricConfig {
        topology: TopologyConfig::Star(StarTopology {
            hosts,
            link_rate: RATE,
            link_delay: Duration(D),
        }),
        switch: SwitchConfig::default(),
        seed: 7,
    });
    app.insert_resource(script);
    app.add_plugins(NicContractPlugin);
    app.add_plugins(FabricPlugin);
    app.add_plugins(IdealNicPlugin::default());
    app.add_plugins(TinyApp);
    app.run(RunOptions {
        stop: SimTime::from_us(100),
        beacon_interval: SimTime::from_us(100),
        progress: None,
    });
    app
}

fn s(bytes: u64) -> SimTime {
    RATE.serialization_time(bytes)
}

fn f() -> SimTime {
    SwitchConfig::default().ForwardingLatency.0
}

/// One frame across the star, nothing queued.
fn across(bytes: u64) -> SimTime {
    s(bytes) + D + f() + s(bytes) + D
}

fn times(app: &mut App, e: Entity) -> WqeTimes {
    let w = app.world.get::<Wqe>(e).unwrap();
    assert!(w.completed);
    w.times
}

const T: SimTime = SimTime::from_us(20);

#[test]
fn connection_setup_takes_three_messages_across_the_fabric() {
    let mut app = run(
        2,
        Script {
            conns: vec![(0, 1)],
            listen: true,
            ..Default::default()
        },
    );
    let cm = CM_MESSAGE_BYTES as u64;
    let established = across(cm) + across(cm);
    assert_eq!(app.world.resource::<Script>().established, vec![(0, established)]);
    let mut qps: Vec<QueuePair> = app.world.query::<&QueuePair>().iter(&app.world).cloned().collect();
    qps.sort_by_key(|q| q.created_at);
    assert_eq!(qps.len(), 2);
    assert_eq!(
        (qps[0].role, qps[0].host, qps[0].created_at),
        (QpRole::Responder, 1, across(cm))
    );
    assert_eq!(
        (qps[1].role, qps[1].host, qps[1].created_at),
        (QpRole::Initiator, 0, established)
    );
    // Request and acknowledgment left host 0; the response left host 1.
    let nics: Vec<(u32, u64)> = app
        .world
        .resource::<Store<IdealNic>>()
        .rows()
        .iter()
        .map(|n| (n.host, n.counters.cm_sent))
        .collect();
    assert!(nics.contains(&(0, 2)) && nics.contains(&(1, 1)), "{nics:?}");
}

#[test]
fn without_listen_the_request_is_refused_and_nothing_is_created() {
    let mut app = run(
        2,
        Script {
            conns: vec![(0, 1)],
            listen: false,
            ..Default::default()
        },
    );
    assert!(app.world.resource::<Script>().established.is_empty());
    assert_eq!(app.world.query::<&QueuePair>().iter(&app.world).count(), 0);
    let rejected: u64 = app
        .world
        .resource::<Store<IdealNic>>()
        .rows()
        .iter()
        .map(|n| n.counters.rejected_requests)
        .sum();
    assert_eq!(rejected, 1);
}

#[test]
fn a_single_wqe_completes_when_first_principles_say() {
    // The spec's WQE: 62 packets, 61 of 4,154 B on the wire and one of 144 + 58 = 202 B.
    let script = Script {
        conns: vec![(0, 1)],
        listen: true,
        posts: vec![(0, 250_000, T)],
        ..Default::default()
    };
    let mut app = run(2, script);
    let e = app.world.resource::<Script>().posted[0];
    let t = times(&mut app, e);
    let all = s(253_596);
    assert_eq!(all, SimTime(5_071_920), "the spec's 5.07192 us");
    // No PCIe: at the NIC, started and first on the wire at once.
    assert_eq!((t.posted, t.at_nic, t.started, t.first_tx), (T, T, T, T));
    // The switch's port to host 1 is the bottleneck from the first packet's arrival on: the
    // last bit reaches host 1 after the first packet's first hop plus all 62 packets again.
    let last_rx = T + s(4154) + D + f() + all + D;
    assert_eq!(t.last_rx, last_rx);
    let completed = last_rx + across(ROCE_ACK_BYTES as u64);
    assert_eq!(t.completed, completed);
    assert_eq!(app.world.resource::<Script>().completed, vec![(e, completed)]);
    // Host 0 sent the request, the acknowledgment and the 62 data packets.
    let ports = app.world.resource::<Store<HostPort>>();
    let dir = &ports.get(0).unwrap().wire;
    assert_eq!((dir.packets, dir.bytes), (64, 2 * CM_MESSAGE_BYTES as u64 + 253_596));
    let nic = app
        .world
        .resource::<Store<IdealNic>>()
        .rows()
        .iter()
        .find(|n| n.host == 1)
        .unwrap()
        .counters;
    assert_eq!(
        (nic.data_packets_received, nic.payload_bytes_received, nic.acks_sent),
        (62, 250_000, 1)
    );
}

#[test]
fn wqes_of_one_connection_go_one_at_a_time_in_post_order() {
    let posts = (0..10).map(|_| (0, 8192, T)).collect();
    let mut app = run(
        2,
        Script {
            conns: vec![(0, 1)],
            listen: true,
            posts,
            ..Default::default()
        },
    );
    let posted = app.world.resource::<Script>().posted.clone();
    let completed: Vec<Entity> = app.world.resource::<Script>().completed.iter().map(|c| c.0).collect();
    assert_eq!(completed, posted, "completions in post order");
    // Two 4,154-byte packets each; each WQE starts when the one ahead completes.
    let one = s(4154) + D + f() + s(4154) + s(4154) + D + across(ROCE_ACK_BYTES as u64);
    let mut prev = T;
    for (k, &e) in posted.iter().enumerate() {
        let t = times(&mut app, e);
        assert_eq!((t.posted, t.at_nic), (T, T));
        assert_eq!(t.started, prev, "WQE {k} starts when WQE {} completes", k.max(1) - 1);
        assert_eq!(t.first_tx, t.started);
        assert_eq!(t.completed, t.started + one);
        prev = t.completed;
    }
}

#[test]
fn queue_pairs_share_the_port_round_robin_per_packet() {
    // Host 0 to hosts 1 and 2, four full packets each, posted together: the port takes turns.
    let posts = vec![(0, 4 * 4096, T), (1, 4 * 4096, T)];
    let mut app = run(
        3,
        Script {
            conns: vec![(0, 1), (0, 2)],
            listen: true,
            posts,
            ..Default::default()
        },
    );
    let posted = app.world.resource::<Script>().posted.clone();
    let (a, b) = (times(&mut app, posted[0]), times(&mut app, posted[1]));
    let p = s(4154);
    // B's WQE reaches the NIC while A's first packet is on the wire, behind A in the turn: the
    // port sends A0 A1 B0 A2 B1 A3 B2 B3.
    assert_eq!((a.first_tx, b.first_tx), (T, T + p + p));
    // A3 and B3 leave at T + 6p and T + 8p; each switch port down to a host carries at most
    // every other packet, so neither waits there.
    assert_eq!(a.last_rx, T + SimTime(6 * p.0) + D + f() + p + D);
    assert_eq!(b.last_rx, T + SimTime(8 * p.0) + D + f() + p + D);
}

#[test]
fn pfc_pause_holds_data_until_resume() {
    let pause_at = T + SimTime::from_us(1);
    let resume_at = T + SimTime::from_us(3);
    let script = Script {
        conns: vec![(0, 1)],
        listen: true,
        posts: vec![(0, 250_000, T)],
        pfc: vec![(pause_at, 0, true), (resume_at, 0, false)],
        ..Default::default()
    };
    let mut app = run(2, script);
    let e = app.world.resource::<Script>().posted[0];
    let t = times(&mut app, e);
    // The PAUSE lands mid-packet; that packet finishes, then the port is silent until RESUME.
    let p = s(4154);
    let paused = pause_at + s(PFC_FRAME_BYTES as u64) + D;
    let resumed = resume_at + s(PFC_FRAME_BYTES as u64) + D;
    let k = (paused - T).0.div_ceil(p.0);
    let silent = resumed - (T + SimTime(k * p.0));
    let unpaused_last_rx = T + p + D + f() + s(253_596) + D;
    assert_eq!(t.last_rx, unpaused_last_rx + silent);
    let nic = app
        .world
        .resource::<Store<IdealNic>>()
        .rows()
        .iter()
        .find(|n| n.host == 0)
        .unwrap()
        .counters;
    assert_eq!((nic.pfc_pause_received, nic.pfc_resume_received), (1, 1));
}

#[test]
fn next_frame_sends_control_first_obeys_pause_and_cuts_opcodes() {
    let cfg = IdealNicConfig::default();
    let mut nic = IdealNic::new(0, SourceId(1));
    for (qpn, class) in [(0u32, 0u8), (1, 1)] {
        let mut qp = Qp::new(qpn, QpRole::Initiator, 1, class, 0);
        qp.ready = true;
        qp.remote_qpn = 10 + qpn;
        let times = WqeTimes::default();
        qp.active = Some(Active {
            wqe: Entity::PLACEHOLDER,
            bytes: 9000,
            packets: cfg.packets(9000),
            sent: 0,
            last_psn: 0,
            times,
        });
        nic.qps.push(qp);
        nic.schedule_qp(qpn);
    }
    nic.push_ctrl(Packet {
        kind: PacketKind::Ack,
        class: 1,
        ..Default::default()
    });
    nic.paused[1] = true;
    let now = SimTime(5);
    let mut sent = Vec::new();
    while let Some(p) = nic.next_frame(now, &cfg) {
        sent.push((p.qp, p.opcode, p.payload, p.ack_req));
    }
    // Class 1 is paused: its ACK and its queue pair wait; class 0's WQE goes out whole.
    use Opcode as O;
    let expected = vec![
        (10, O::RC_RDMA_WRITE_FIRST, 4096, false),
        (10, O::RC_RDMA_WRITE_MIDDLE, 4096, false),
        (10, O::RC_RDMA_WRITE_LAST, 808, true),
    ];
    assert_eq!(sent, expected);
    nic.paused[1] = false;
    let first = nic.next_frame(now, &cfg).unwrap();
    assert_eq!(first.kind, PacketKind::Ack, "control frames go ahead of data");
    assert_eq!(nic.next_frame(now, &cfg).unwrap().qp, 11);
    assert_eq!(nic.qps[0].active.unwrap().times.first_tx, now);
}
