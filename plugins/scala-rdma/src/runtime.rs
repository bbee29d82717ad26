//! The application at run time: Initiator and Responder instances as entities, one of each per
//! connection; the timeline (listen at `StartTime`, connection requests in the client start
//! window as `StartType` says, data from the end of the window or of setup if later); and the
//! closed loop (post `MaxPendingWQEs`, then one more per completion, until the stop time).

use crate::config::{ScalaRdmaConfig, StartType, TRANSFER_SIZE_BYTES};
use crate::record::PerfRecord;
use bevy_ecs::prelude::*;
use engine::prelude::*;
use models::application::{AppPlacement, ConnectionPlan, ContractClaim, Plan, own_connection};
use models::nic::{ConnectionSpec, Connections, NicContract, Wqe, WqeTimes};

/// An Initiator instance: one per connection, on the Initiator's host.
#[derive(Component, Debug, Clone)]
pub struct InitiatorInstance {
    /// The connection's id.
    pub connection: u32,
    /// The instance's name (`application_name` in rdma-perf).
    pub name: String,
    /// The Initiator's host id.
    pub node: u32,
    /// The Responder's host id.
    pub responder: u32,
    /// The connection's index within its pair, from 0.
    pub index: u32,
    /// The traffic class of its data packets (`RdmaDataPacketTC`).
    pub class: u8,
    /// Its application's position in the scenario's `applications`.
    pub app: usize,
    /// WQEs it keeps outstanding (`MaxPendingWQEs`).
    pub max_pending: u32,
    /// The event source its events are numbered under.
    pub source: SourceId,
    /// When the connection request went out.
    pub requested_at: SimTime,
    /// When setup completed.
    pub established_at: Option<SimTime>,
    /// WQEs posted so far.
    pub posted: u64,
    /// WQEs completed so far.
    pub completed: u64,
    /// WQEs completed in the recording window.
    pub recorded: u64,
    /// The sum of those WQEs' latencies.
    pub recorded_latency: SimTime,
}

/// A Responder instance: one per connection, on the Responder's host.
#[derive(Component, Debug, Clone)]
pub struct ResponderInstance {
    /// The connection's id.
    pub connection: u32,
    /// The Responder's host id.
    pub node: u32,
    /// The Initiator's host id.
    pub initiator: u32,
}

/// One `ScalaRdma((...))` entry of the scenario.
#[derive(Clone, Debug)]
pub struct ScalaEntry {
    /// Its position in `applications`.
    pub index: usize,
    /// Its settings.
    pub config: ScalaRdmaConfig,
}

/// The run's Scala RDMA applications, their part of the plan (with the run's connection ids),
/// and the instance entity of each connection.
#[derive(Resource, Debug)]
pub struct ScalaRdma {
    /// The `ScalaRdma` entries, in scenario order.
    pub entries: Vec<ScalaEntry>,
    /// Their part of the plan, with the run's connection ids.
    pub plan: Plan,
    /// By connection id; `Entity::PLACEHOLDER` for another application's connections.
    pub initiators: Vec<Entity>,
    /// The event kinds the application uses.
    pub kinds: AppKinds,
    /// The NIC contract's handlers this application claimed for its connections.
    pub claim: ContractClaim,
    /// WQEs posted since the start (the beacon's `tx_client`).
    pub tx_client: u64,
    /// WQEs completed since the start (the beacon's `rx_client`).
    pub rx_client: u64,
    /// Entities of completed WQEs, reused for the next posts. bevy 0.20's entity allocator
    /// grows by ~16 bytes for every spawn/despawn cycle (measured: 17.9 MB after 1M cycles with
    /// 256 live entities, 80.4 MB after 5M), so a fresh entity per WQE would make memory grow
    /// with simulated time; recycling keeps it at the number outstanding.
    pub spare_wqes: Vec<Entity>,
}

/// The event kinds of the Scala RDMA application.
#[derive(Clone, Copy, Debug)]
pub struct AppKinds {
    /// An Initiator's data phase begins: post its first `MaxPendingWQEs` WQEs.
    pub data_start: EventKind,
    /// The NIC contract's kinds (`post_wqe`, `connect`, ...).
    pub contract: NicContract,
}

impl ScalaRdma {
    /// Empty, with the application's event kinds and contract claim.
    pub fn new(kinds: AppKinds, claim: ContractClaim) -> Self {
        ScalaRdma {
            entries: Vec::new(),
            plan: Plan::default(),
            initiators: Vec::new(),
            kinds,
            claim,
            tx_client: 0,
            rx_client: 0,
            spare_wqes: Vec::new(),
        }
    }
}

/// Builds one entry's connections and instances from its placement (in `BuildSet::Applications`
/// and the entry's `ApplicationSlot`), numbering them after the run's connections so far.
pub fn build_entry(world: &mut World, config: &ScalaRdmaConfig, placed: &AppPlacement) {
    let seed = world.resource::<SimulationParameters>().RandomSeed;
    let claim = world.resource::<ScalaRdma>().claim;
    let part = crate::plan::plan_of(config, placed, seed);
    let mut connections = Vec::with_capacity(part.connections.len());
    for mut c in part.connections {
        let source = world.resource_mut::<EventQueue>().add_source();
        let next = world.resource::<Connections>().list.len() as u32;
        c.id = next;
        let spec = ConnectionSpec {
            id: c.id,
            initiator: c.initiator,
            responder: c.responder,
            class: c.traffic_class,
            doorbell_bytes: config.doorbell_bytes(),
            udp_src_port: udp_source_port(seed, &c),
            source,
        };
        own_connection(world, claim, spec);
        let initiator = world.spawn(initiator_of(&c, config, source)).id();
        world.spawn(ResponderInstance {
            connection: c.id,
            node: c.responder,
            initiator: c.initiator,
        });
        let mut app = world.resource_mut::<ScalaRdma>();
        app.initiators.resize(c.id as usize, Entity::PLACEHOLDER);
        app.initiators.push(initiator);
        connections.push(c);
    }
    let mut app = world.resource_mut::<ScalaRdma>();
    app.entries.push(crate::runtime::ScalaEntry {
        index: placed.index,
        config: config.clone(),
    });
    app.plan.hosts.extend(part.hosts);
    app.plan.pairs.extend(part.pairs);
    app.plan.connections.extend(connections);
}

fn initiator_of(c: &ConnectionPlan, cfg: &ScalaRdmaConfig, source: SourceId) -> InitiatorInstance {
    InitiatorInstance {
        connection: c.id,
        name: c.application_name.clone(),
        node: c.initiator,
        responder: c.responder,
        index: c.index,
        class: c.traffic_class,
        app: c.app,
        max_pending: cfg.max_pending_wqes.get(),
        source,
        requested_at: SimTime::ZERO,
        established_at: None,
        posted: 0,
        completed: 0,
        recorded: 0,
        recorded_latency: SimTime::ZERO,
    }
}

/// RoCEv2 senders vary the UDP source port per queue pair for ECMP entropy; ours is a stable
/// hash of the seed and the connection id in the dynamic range 49152-65535.
fn udp_source_port(seed: u64, c: &ConnectionPlan) -> u16 {
    0xC000 | (engine::rng::splitmix64(seed ^ ((c.id as u64) << 20)) & 0x3FFF) as u16
}

/// The connection request times of `n` connections (the spec's start types). `uniform` draws
/// from each connection's own stream `("uniform-start", id)`; `sequential` spaces them evenly
/// across the window, the first at its start.
pub fn start_times(kind: StartType, window_start: SimTime, interval: SimTime, ids: &[u32], seed: u64) -> Vec<SimTime> {
    let n = ids.len() as u64;
    ids.iter()
        .enumerate()
        .map(|(k, &id)| match kind {
            StartType::Simultaneous => window_start,
            StartType::Uniform => {
                let mut rng = engine::rng::stream(seed, "uniform-start", id as u64);
                window_start + SimTime((engine::rng::unit_f64(&mut rng) * interval.0 as f64) as u64)
            }
            StartType::Sequential => window_start + SimTime((interval.0 as u128 * k as u128 / n.max(1) as u128) as u64),
        })
        .collect()
}

/// Schedules listening and the connection requests (the `Start` phase).
pub fn schedule_starts(world: &mut World) {
    let timeline = *world.resource::<Timeline>();
    let seed = world.resource::<SimulationParameters>().RandomSeed;
    let app = world.resource::<ScalaRdma>();
    let contract = app.kinds.contract;
    // In a shard, only the hosts it runs listen and connect; `sequential` spaces this shard's
    // own connections over the window (the spec: per simulator process).
    let owns = |h: u32| models::shard::owns(world, h);
    let mut listen: Vec<u32> = app
        .plan
        .connections
        .iter()
        .map(|c| c.responder)
        .filter(|&h| owns(h))
        .collect();
    listen.sort_unstable();
    listen.dedup();
    let mut requests = Vec::new();
    for e in &app.entries {
        let conns: Vec<&ConnectionPlan> = app
            .plan
            .connections
            .iter()
            .filter(|c| c.app == e.index && owns(c.initiator))
            .collect();
        let ids: Vec<u32> = conns.iter().map(|c| c.id).collect();
        let times = start_times(
            e.config.start_type,
            timeline.client_window_start,
            timeline.client_window_end - timeline.client_window_start,
            &ids,
            seed,
        );
        requests.extend(conns.iter().zip(times).map(|(c, t)| (c.id, c.initiator, t)));
    }
    let initiators = app.initiators.clone();
    let specs: Vec<SourceId> = world.resource::<Connections>().list.iter().map(|c| c.source).collect();
    let mut q = world.resource_mut::<EventQueue>();
    for host in listen {
        contract
            .listen
            .schedule(&mut q, timeline.responders_start, SourceId::ENGINE, host, ());
    }
    let mut stamps = Vec::new();
    for (id, host, t) in requests {
        contract.connect.schedule(&mut q, t, specs[id as usize], host, id);
        stamps.push((initiators[id as usize], t));
    }
    for (e, t) in stamps {
        world.get_mut::<InitiatorInstance>(e).expect("instance").requested_at = t;
    }
}

/// `nic.established`: setup done; data starts at the end of the window, or now if later.
pub fn on_established(world: &mut World, q: &mut EventQueue, ev: SimEvent) {
    let conn = world.resource::<ScalaRdma>().kinds.contract.established.payload(&ev);
    let window_end = world.resource::<Timeline>().client_window_end;
    let (entity, data_start) = {
        let app = world.resource::<ScalaRdma>();
        (app.initiators[conn as usize], app.kinds.data_start)
    };
    let mut inst = world.get_mut::<InitiatorInstance>(entity).expect("instance");
    inst.established_at = Some(ev.time);
    q.schedule(window_end.max(ev.time), inst.source, data_start, ev.target, conn as u64);
}

/// `scala.data_start`: post `MaxPendingWQEs` WQEs at once.
pub fn on_data_start(world: &mut World, q: &mut EventQueue, ev: SimEvent) {
    let conn = ev.data as u32;
    let entity = world.resource::<ScalaRdma>().initiators[conn as usize];
    let n = world.get::<InitiatorInstance>(entity).expect("instance").max_pending;
    for _ in 0..n {
        post(world, q, entity);
    }
}

/// Rings the doorbell of a new WQE on `entity`'s connection.
fn post(world: &mut World, q: &mut EventQueue, entity: Entity) {
    let now = q.now();
    let (conn, number, node, source) = {
        let mut inst = world.get_mut::<InitiatorInstance>(entity).expect("instance");
        inst.posted += 1;
        (inst.connection, inst.posted, inst.node, inst.source)
    };
    let times = WqeTimes {
        posted: now,
        ..Default::default()
    };
    let fresh = Wqe {
        connection: conn,
        number,
        bytes: TRANSFER_SIZE_BYTES,
        times,
        completed: false,
    };
    let wqe = match world.resource_mut::<ScalaRdma>().spare_wqes.pop() {
        Some(e) => {
            *world.get_mut::<Wqe>(e).expect("spare WQE entity") = fresh;
            e
        }
        None => world.spawn(fresh).id(),
    };
    let mut app = world.resource_mut::<ScalaRdma>();
    app.tx_client += 1;
    app.kinds.contract.post_wqe.schedule(q, now, source, node, wqe);
}

/// `nic.wqe_completed`: record the row, keep the WQE's entity for reuse, post the next.
pub fn on_completed(world: &mut World, q: &mut EventQueue, ev: SimEvent) {
    let wqe_entity = world.resource::<ScalaRdma>().kinds.contract.wqe_completed.payload(&ev);
    let wqe = world.get::<Wqe>(wqe_entity).expect("completed WQE entity").clone();
    let entity = world.resource::<ScalaRdma>().initiators[wqe.connection as usize];
    let timeline = *world.resource::<Timeline>();
    let inst = {
        let mut inst = world.get_mut::<InitiatorInstance>(entity).expect("instance");
        inst.completed += 1;
        if (timeline.recording_start..timeline.recording_end).contains(&ev.time) {
            inst.recorded += 1;
            inst.recorded_latency += wqe.times.latency();
        }
        inst.clone()
    };
    {
        let mut app = world.resource_mut::<ScalaRdma>();
        app.rx_client += 1;
        app.spare_wqes.push(wqe_entity);
    }
    // Not `resource_scope`: removing a resource makes bevy 0.20 queue a removal message, which
    // piles up for the whole run (found with massif).
    let perf = world.get_resource::<PerfRecord>().map(|p| (p.id, p.job_id.clone()));
    if let Some((id, job_id)) = perf {
        let mut records = world.resource_mut::<Records>();
        crate::record::write_row(&mut records, id, &job_id, ev.time, &wqe, &inst);
    }
    post(world, q, entity);
}
