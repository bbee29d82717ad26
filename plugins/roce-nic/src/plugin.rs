//! `RoceNicPlugin`: builds a `RoceNic` on every host and registers the handlers of the NIC
//! contract (`listen`, `connect`, `post_wqe`), of its own events (`roce.doorbell`, `roce.tx`,
//! `roce.rto`, `roce.resume`), and the fabric's `PortReceiver` for packets reaching a host.

use crate::config::RoceNicConfig;
use crate::rx::Effect;
use crate::state::{Qp, RoceNic, Waiting};
use crate::tx::{Ctx, Parts};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::IntoScheduleConfigs;
use engine::prelude::*;
use models::fabric::link::LinkDirection;
use models::fabric::{Fabric, HostReceiver, PortReceiver};
use models::nic::{Connections, NicContract, NicPools, QpRole, Wqe};
use models::packet::{Packet, PacketKind};
use models::pcie::PcieLink;
use models::sets::BuildSet;
use models::trace::{TraceEvent, TracePoint, Tracers};
use std::sync::Arc;

/// The Scala RoCE NIC, selected in RON as `nic: RoceNic((...))`.
#[derive(Clone, Debug, Default)]
pub struct RoceNicPlugin {
    pub config: RoceNicConfig,
}

/// The built NICs: entity of each host's NIC, and the shared settings.
#[derive(Resource, Clone)]
pub struct RoceNics {
    pub nics: Vec<Entity>,
    pub ctx: Ctx,
}

#[derive(Resource)]
struct PendingCtx(Ctx);

impl Plugin for RoceNicPlugin {
    fn build(&self, app: &mut App) {
        let contract = *app.world.resource::<NicContract>();
        let ctx = Ctx {
            cfg: Arc::new(self.config.clone()),
            tx: app.add_event_kind("roce.tx"),
            rto: app.add_event_kind("roce.rto"),
            resume: app.add_event_kind("roce.resume"),
            doorbell: app.add_event_kind("roce.doorbell"),
            wqe_completed: contract.wqe_completed,
            established: contract.established,
        };
        app.insert_resource(NicPools {
            egress: self.config.EgressBufferManager.has_pool(),
            ingress: self.config.IngressBufferManager.as_buffer().has_pool(),
        });
        app.insert_resource(PendingCtx(ctx.clone()));
        app.add_systems(Build, build_nics.in_set(BuildSet::Nics));
        app.set_handler(contract.listen, NicHandler::new(Op::Listen));
        app.set_handler(contract.connect, NicHandler::new(Op::Connect));
        app.set_handler(contract.post_wqe, NicHandler::new(Op::Post));
        app.set_handler(ctx.doorbell, NicHandler::new(Op::Doorbell));
        app.set_handler(ctx.tx, NicHandler::new(Op::Tx));
        app.set_handler(ctx.rto, NicHandler::new(Op::Rto));
        app.set_handler(ctx.resume, NicHandler::new(Op::Resume));
        crate::counters::register_beacon_columns(app);
    }
}

fn build_nics(world: &mut World) {
    let fabric = world.resource::<Fabric>().0.clone();
    let ctx = world.resource::<PendingCtx>().0.clone();
    let mut nics = Vec::with_capacity(fabric.num_hosts());
    for host in 0..fabric.num_hosts() as u32 {
        let source = world.resource_mut::<EventQueue>().add_source();
        // On the host's port entity, beside its PCIe link and egress direction: a NIC event
        // fetches all three with one query lookup.
        let port = fabric.pcie[host as usize];
        world.entity_mut(port).insert(RoceNic::new(host, source, &ctx.cfg));
        nics.push(port);
    }
    world.insert_resource(RoceNics { nics, ctx: ctx.clone() });
    world.resource_mut::<HostReceiver>().0 = Some(Box::new(NicAccess::default()));
}

type PartsQuery = QueryState<(&'static mut RoceNic, &'static mut PcieLink, &'static mut LinkDirection)>;

/// Cached access to a host's NIC, PCIe link and egress link direction.
#[derive(Default)]
struct NicAccess {
    st: Option<AccessState>,
    parts: Option<PartsQuery>,
    effects: Vec<Effect>,
    trace: Vec<TraceEvent>,
}

struct AccessState {
    nics: RoceNics,
    contract: NicContract,
    tracing: bool,
}

impl NicAccess {
    #[cold]
    fn init(&mut self, world: &mut World) {
        self.st = Some(AccessState {
            nics: world.resource::<RoceNics>().clone(),
            contract: *world.resource::<NicContract>(),
            tracing: world.get_resource::<Tracers>().is_some_and(Tracers::is_enabled),
        });
        self.parts = Some(world.query());
    }

    /// Runs `f` on host `host`'s parts, then applies what it asked of the world.
    #[inline]
    fn with<R>(
        &mut self,
        world: &mut World,
        host: u32,
        f: impl FnOnce(&mut Parts<'_>, &Ctx, &mut Vec<Effect>) -> R,
    ) -> R {
        if self.st.is_none() {
            self.init(world);
        }
        let NicAccess {
            st: Some(st),
            parts: Some(parts),
            effects,
            trace,
        } = self
        else {
            unreachable!("initialized above")
        };
        let port = st.nics.nics[host as usize];
        let r = {
            // One entity holds the three: a tuple query fetches them for about half the
            // instructions of `World::get_entity_mut` on three entities (callgrind).
            let (mut nic, mut pcie, mut wire) = parts.get_mut(world, port).expect("NIC parts on the host's port");
            let tr = st.tracing.then_some(&mut *trace);
            let mut parts = Parts {
                nic: &mut nic,
                pcie: &mut pcie,
                wire: &mut wire,
                trace: tr,
            };
            f(&mut parts, &st.nics.ctx, effects)
        };
        if !effects.is_empty() {
            apply_effects(world, effects);
        }
        if !trace.is_empty() {
            world.resource_mut::<Tracers>().emit_all(trace);
        }
        r
    }
}

/// What a NIC handler asked of the world once its borrow of the NIC ended.
#[cold]
fn apply_effects(world: &mut World, effects: &mut Vec<Effect>) {
    for e in effects.drain(..) {
        match e {
            Effect::SpawnQp(qp) => {
                world.spawn(qp);
            }
            Effect::Complete { wqe, times } => {
                if let Some(mut w) = world.get_mut::<Wqe>(wqe) {
                    w.times = times;
                    w.completed = true;
                }
            }
        }
    }
}

impl PortReceiver for NicAccess {
    #[inline]
    fn receive(&mut self, world: &mut World, q: &mut EventQueue, host: u32, pkt: Packet) {
        self.with(world, host, |p, ctx, out| p.receive(q, ctx, pkt, out));
    }
}

#[derive(Clone, Copy)]
enum Op {
    Listen,
    Connect,
    Post,
    Doorbell,
    Tx,
    Rto,
    Resume,
}

struct NicHandler {
    op: Op,
    access: NicAccess,
}

impl NicHandler {
    fn new(op: Op) -> Self {
        NicHandler {
            op,
            access: NicAccess::default(),
        }
    }
}

impl Handler for NicHandler {
    fn handle(&mut self, world: &mut World, q: &mut EventQueue, ev: &SimEvent) {
        let host = ev.target;
        match self.op {
            Op::Listen => self.access.with(world, host, |p, _, _| p.nic.listening = true),
            Op::Connect => {
                let spec = world.resource::<Connections>().list[ev.data as usize].clone();
                self.access.with(world, host, |p, ctx, _| {
                    let qpn = p.nic.qps.len() as u32;
                    let flow = models::topology::routing::flow_hash(host, spec.responder, spec.udp_src_port, 4791);
                    p.nic
                        .qps
                        .push(Qp::new(spec.id, QpRole::Initiator, spec.responder, spec.class, flow));
                    p.nic.initiator_qpn.insert(spec.id, qpn);
                    // The request's `aux` is our QPN; `psn` the connection id; the high bits
                    // of `flow` carry the UDP source port for the Responder's reverse hash.
                    let req = Packet {
                        flow: flow & 0x0000_FFFF_FFFF_FFFF | (spec.udp_src_port as u64) << 48,
                        src: host,
                        dst: spec.responder,
                        qp: u32::MAX,
                        psn: spec.id,
                        bytes: models::wire::CM_MESSAGE_BYTES as u32,
                        aux: qpn,
                        kind: PacketKind::ConnectRequest,
                        opcode: models::wire::Opcode::UD_SEND_ONLY,
                        class: spec.class,
                        ..Default::default()
                    };
                    p.send_ctrl(q, ctx, req, false);
                });
            }
            Op::Post => {
                let wqe = Entity::from_bits(ev.data);
                let conn = world.get::<Wqe>(wqe).expect("posted WQE entity").connection;
                let doorbell = world.resource::<Connections>().list[conn as usize].doorbell_bytes;
                let number = world.get::<Wqe>(wqe).map_or(0, |w| w.number);
                let source = self.access.with(world, host, |p, ctx, _| {
                    p.trace(TracePoint::WqePosted, q.now(), None, Some((conn, number)));
                    let at = p.pcie.host_write(&ctx.cfg.Pcie, q.now(), doorbell);
                    (at, p.nic.source, ctx.doorbell)
                });
                q.schedule(source.0, source.1, source.2, host, ev.data);
            }
            Op::Doorbell => {
                let wqe = Entity::from_bits(ev.data);
                let (conn, number, bytes, mut times) = {
                    let w = world.get::<Wqe>(wqe).expect("posted WQE entity");
                    (w.connection, w.number, w.bytes, w.times)
                };
                times.at_nic = q.now();
                self.access.with(world, host, |p, ctx, _| {
                    // Posted before `connect` reached this NIC: a contract violation by the
                    // application, which never completes (the WQE entity stays unfinished).
                    let Some(&qpn) = p.nic.initiator_qpn.get(&conn) else {
                        return;
                    };
                    let qpn = qpn as usize;
                    p.nic.qps[qpn].waiting.push_back(Waiting {
                        wqe,
                        number,
                        bytes,
                        times,
                    });
                    p.activate_next(q, ctx, qpn as u32);
                });
            }
            Op::Tx => self.access.with(world, host, |p, ctx, _| {
                if p.nic.tx_timer == q.now() {
                    p.nic.tx_timer = SimTime::MAX;
                    p.pump(q, ctx);
                }
            }),
            Op::Rto => self.access.with(world, host, |p, ctx, _| {
                let qpn = ev.data as u32;
                let now = q.now();
                let Some(qp) = p.nic.qps.get_mut(qpn as usize) else {
                    return;
                };
                qp.rto_armed = SimTime::MAX;
                let Some(a) = qp.active.as_ref() else {
                    return;
                };
                if a.rto_deadline == now && a.sent == a.packets {
                    let from = a.acked_upto;
                    p.nic.counters.timeouts += 1;
                    p.rewind(q, ctx, qpn, from);
                } else if a.rto_deadline != SimTime::MAX && a.rto_deadline > now {
                    // The deadline moved on (a later WQE, or more packets sent): wait for it.
                    let at = a.rto_deadline;
                    qp.rto_armed = at;
                    q.schedule(at, p.nic.source, ctx.rto, host, qpn as u64);
                }
            }),
            Op::Resume => self
                .access
                .with(world, host, |p, ctx, _| p.on_resume_check(q, ctx, ev.data as usize)),
        }
        let _ = self.access.st.as_ref().map(|s| s.contract);
    }
}
