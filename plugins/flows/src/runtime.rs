//! The flows at run time. At `StartTime` every receiving host listens; at the start of the
//! client start window every flow's sender connects its own queue pair (the spec's timeline, so
//! setup is over before flows that start at the data start); once set up, a flow posts its
//! WRITEs at its start time (at once if setup ends later: that wait counts in its FCT). A finite
//! flow posts `ceil(bytes / MAX_WRITE_BYTES)` WRITEs at once (the NIC sends them one after the
//! other) and writes its flow-fct row when the last completes; a never-ending flow keeps
//! `STREAM_PENDING` WRITEs of `STREAM_WRITE_BYTES` posted until the run stops, and writes none.

use crate::config::{Flow, FlowsConfig};
use bevy_ecs::prelude::*;
use engine::prelude::*;
use models::application::{AppPlacement, ContractClaim, own_connection};
use models::nic::{ConnectionSpec, Connections, NicContract, Wqe, WqeTimes};

/// One flow's state.
#[derive(Clone, Debug)]
pub struct FlowState {
    /// The flow as given.
    pub flow: Flow,
    /// Its connection's id.
    pub connection: u32,
    /// The event source its events are numbered under.
    pub source: SourceId,
    /// WRITEs in all (`None`: never ends).
    pub writes: Option<u64>,
    /// WRITEs posted so far.
    pub posted: u64,
    /// WRITEs completed so far.
    pub completed: u64,
    /// WRITEs completed in the recording window.
    pub recorded: u64,
    /// When the connection was established.
    pub established_at: Option<SimTime>,
    /// When the last WRITE completed (a finite flow only).
    pub finished_at: Option<SimTime>,
}

/// The run's flows, of every `Flows((...))` entry.
#[derive(Resource, Debug)]
pub struct FlowsRun {
    /// Every flow, in scenario order.
    pub flows: Vec<FlowState>,
    /// By connection id: the flow's index in `flows`, `u32::MAX` for another application's.
    pub by_connection: Vec<u32>,
    /// The event kinds the flows use.
    pub kinds: FlowKinds,
    /// The NIC contract's handlers this application claimed for its connections.
    pub claim: ContractClaim,
    /// WRITEs posted since the start.
    pub posted: u64,
    /// WRITEs completed since the start.
    pub completed: u64,
    /// The receiving hosts, which listen at `StartTime`.
    pub listeners: Vec<u32>,
}

/// The event kinds of the flows application.
#[derive(Clone, Copy, Debug)]
pub struct FlowKinds {
    /// A flow's start time came: post its first WRITEs.
    pub start: EventKind,
    /// The NIC contract's kinds (`post_wqe`, `connect`, ...).
    pub contract: NicContract,
}

impl FlowsRun {
    fn index(&self, connection: u32) -> usize {
        self.by_connection[connection as usize] as usize
    }
}

/// Makes one entry's connections (in its `ApplicationSlot` of `BuildSet::Applications`).
pub fn build_entry(world: &mut World, config: &FlowsConfig, _placed: &AppPlacement) {
    let seed = world.resource::<SimulationParameters>().RandomSeed;
    let claim = world.resource::<FlowsRun>().claim;
    for flow in &config.resolved {
        let source = world.resource_mut::<EventQueue>().add_source();
        let id = world.resource::<Connections>().list.len() as u32;
        let spec = ConnectionSpec {
            id,
            initiator: flow.src,
            responder: flow.dst,
            class: config.rdma_data_packet_tc,
            doorbell_bytes: config.doorbell_bytes(),
            udp_src_port: udp_source_port(seed, id),
            source,
        };
        own_connection(world, claim, spec);
        let mut run = world.resource_mut::<FlowsRun>();
        let index = run.flows.len() as u32;
        run.by_connection.resize(id as usize, u32::MAX);
        run.by_connection.push(index);
        run.listeners.push(flow.dst);
        run.flows.push(FlowState {
            flow: *flow,
            connection: id,
            source,
            writes: FlowsConfig::writes_of(flow.bytes),
            posted: 0,
            completed: 0,
            recorded: 0,
            established_at: None,
            finished_at: None,
        });
    }
}

/// As the Scala RDMA application: a stable hash of the seed and the connection id in the
/// dynamic range 49152-65535, for ECMP entropy.
fn udp_source_port(seed: u64, id: u32) -> u16 {
    0xC000 | (engine::rng::splitmix64(seed ^ ((id as u64) << 20)) & 0x3FFF) as u16
}

/// Schedules listening and the connection requests (the `Start` phase).
pub fn schedule_starts(world: &mut World) {
    let timeline = *world.resource::<Timeline>();
    let run = world.resource::<FlowsRun>();
    let contract = run.kinds.contract;
    // In a shard, only the hosts it runs listen and connect.
    let owns = |h: u32| models::shard::owns(world, h);
    let mut listen: Vec<u32> = run.listeners.iter().copied().filter(|&h| owns(h)).collect();
    listen.sort_unstable();
    listen.dedup();
    let connects: Vec<(u32, u32, SourceId)> = run
        .flows
        .iter()
        .filter(|f| owns(f.flow.src))
        .map(|f| (f.connection, f.flow.src, f.source))
        .collect();
    let mut q = world.resource_mut::<EventQueue>();
    for host in listen {
        contract
            .listen
            .schedule(&mut q, timeline.responders_start, SourceId::ENGINE, host, ());
    }
    for (conn, host, source) in connects {
        contract
            .connect
            .schedule(&mut q, timeline.client_window_start, source, host, conn);
    }
}

/// `nic.established`: the flow starts at its start time, or now if that has passed.
pub fn on_established(world: &mut World, q: &mut EventQueue, ev: SimEvent) {
    let mut run = world.resource_mut::<FlowsRun>();
    let start_kind = run.kinds.start;
    let i = run.index(run.kinds.contract.established.payload(&ev));
    let f = &mut run.flows[i];
    f.established_at = Some(ev.time);
    q.schedule(f.flow.start.max(ev.time), f.source, start_kind, ev.target, ev.data);
}

/// `flows.start`: post the flow's WRITEs (all of a finite flow, `STREAM_PENDING` of a stream).
pub fn on_start(world: &mut World, q: &mut EventQueue, ev: SimEvent) {
    let i = world.resource::<FlowsRun>().index(ev.data as u32);
    let (writes, bytes) = {
        let f = &world.resource::<FlowsRun>().flows[i];
        (f.writes, f.flow.bytes)
    };
    let sizes: Vec<u64> = match writes {
        Some(n) => (0..n)
            .map(|k| (bytes - k * FlowsConfig::MAX_WRITE_BYTES).min(FlowsConfig::MAX_WRITE_BYTES))
            .collect(),
        None => vec![FlowsConfig::STREAM_WRITE_BYTES; FlowsConfig::STREAM_PENDING as usize],
    };
    for size in sizes {
        let e = world
            .spawn(Wqe {
                connection: 0,
                number: 0,
                bytes: 0,
                times: WqeTimes::default(),
                completed: false,
            })
            .id();
        post(world, q, i, e, size);
    }
}

/// Rings the doorbell of a WRITE of `bytes` on flow `i`, in the WQE entity `wqe`.
fn post(world: &mut World, q: &mut EventQueue, i: usize, wqe: Entity, bytes: u64) {
    let now = q.now();
    let (conn, number, node, source, post_kind) = {
        let mut run = world.resource_mut::<FlowsRun>();
        run.posted += 1;
        let post_kind = run.kinds.contract.post_wqe;
        let f = &mut run.flows[i];
        f.posted += 1;
        (f.connection, f.posted, f.flow.src, f.source, post_kind)
    };
    *world.get_mut::<Wqe>(wqe).expect("the flow's WQE entity") = Wqe {
        connection: conn,
        number,
        bytes,
        times: WqeTimes {
            posted: now,
            ..Default::default()
        },
        completed: false,
    };
    post_kind.schedule(q, now, source, node, wqe);
}

/// `nic.wqe_completed`: count it; a stream posts the next WRITE in the same entity; a finite
/// flow's last WRITE finishes it and writes its flow-fct row.
pub fn on_completed(world: &mut World, q: &mut EventQueue, ev: SimEvent) {
    let wqe = world.resource::<FlowsRun>().kinds.contract.wqe_completed.payload(&ev);
    let conn = world.get::<Wqe>(wqe).expect("completed WQE entity").connection;
    let window = models::nic::recording_window(world);
    let (i, finished) = {
        let mut run = world.resource_mut::<FlowsRun>();
        run.completed += 1;
        let i = run.index(conn);
        let f = &mut run.flows[i];
        f.completed += 1;
        if models::nic::in_recording_window(window, ev.time) {
            f.recorded += 1;
        }
        let finished = f.writes == Some(f.completed);
        if finished {
            f.finished_at = Some(ev.time);
        }
        (i, finished.then_some(f.flow))
    };
    match (world.resource::<FlowsRun>().flows[i].writes, finished) {
        (None, _) => post(world, q, i, wqe, FlowsConfig::STREAM_WRITE_BYTES),
        (Some(_), Some(flow)) => {
            world.despawn(wqe);
            crate::record::write_row(world, &flow, ev.time);
        }
        (Some(_), None) => {
            world.despawn(wqe);
        }
    }
}
