//! `RoceNicPlugin`: builds a `RoceNic` on every host, and one handler for the NIC contract's
//! events (`listen`, `connect`, `post_wqe`, the packets reaching a host) and the NIC's own
//! (`roce.doorbell`, `roce.tx`, `roce.rto`, `roce.resume`).

use crate::config::RoceNicConfig;
use crate::rx::Effect;
use crate::state::{CcQp, Qp, RoceNic, Waiting};
use crate::tx::{Ctx, Parts};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::IntoScheduleConfigs;
use engine::prelude::*;
use engine::store::{HeldPair, Store};
use models::cc::{QpCc, QpInfo};
use models::fabric::{Fabric, FabricKinds};
use models::nic::{
    Connections, DeliveredInWindow, HostIngress, HostPort, NicContract, NicLosses, NicPools, QpRole, Wqe,
};
use models::packet::{Packet, PacketKind};
use models::sets::BuildSet;
use models::trace::{TraceEvent, TracePoint, Tracers};
use std::sync::Arc;

/// The Scala RoCE NIC, selected in RON as `nic: RoceNic((...))`.
#[derive(Clone, Debug, Default)]
pub struct RoceNicPlugin {
    /// The configuration every host's NIC is built with.
    pub config: RoceNicConfig,
}

/// The shared settings of the built NICs; each host's `RoceNic` is row `host` of
/// `Store<RoceNic>`, tied to the host's node entity.
#[derive(Resource, Clone)]
pub struct RoceNics {
    /// The event kinds and configuration every NIC's handler shares.
    pub ctx: Ctx,
}

#[derive(Resource)]
struct PendingCtx(Ctx);

impl Plugin for RoceNicPlugin {
    fn build(&self, app: &mut App) {
        let contract = *app.world.resource::<NicContract>();
        let feedback = self.config.CongestionControl.feedback();
        let ctx = Ctx {
            cfg: Arc::new(self.config.clone()),
            tx: app.add_event_kind("roce.tx"),
            rto: app.add_event_kind("roce.rto"),
            resume: app.add_event_kind("roce.resume"),
            doorbell: app.add_typed_kind("roce.doorbell"),
            contract,
            cc_timer: app.add_event_kind("roce.cc"),
            cnp_interval: feedback.cnp.then_some(self.config.CnpInterval.0),
            ecn_echo: feedback.ecn_echo,
            // The fabric's table, once built (`build_nics`).
            int: None,
            header_bytes: self.config.HeaderBytes.0 + feedback.int as u64 * models::int::HEADER_BYTES as u64,
        };
        if feedback.int {
            models::int::request(app);
        }
        app.insert_resource(NicPools {
            egress: self.config.EgressBufferManager.has_pool(),
            ingress: self.config.IngressBufferManager.as_buffer().has_pool(),
        });
        app.insert_resource(PendingCtx(ctx.clone()));
        app.add_systems(Build, build_nics.in_set(BuildSet::Nics));
        app.add_systems(Finish, publish_delivered.in_set(BuildSet::Nics));
        if self.config.CongestionControl.model().is_some() {
            app.add_systems(Sample, sample_cc_rate.in_set(BuildSet::Nics));
        }
        let fabric = *app
            .world
            .get_resource::<FabricKinds>()
            .expect("the RoCE NIC plugin needs the fabric plugin added before it");
        let kinds = &[
            fabric.to_host,
            contract.listen.kind(),
            contract.connect.kind(),
            contract.post_wqe.kind(),
            ctx.doorbell.kind(),
            ctx.tx,
            ctx.rto,
            ctx.resume,
            ctx.cc_timer,
        ];
        app.set_handler_for(kinds, RoceHandler::default());
        crate::counters::register_beacon_columns(app, feedback);
        app.insert_resource(models::nic::QpDiagnostics(crate::diagnostics::describe));
    }
}

fn build_nics(world: &mut World) {
    let fabric = world.resource::<Fabric>().0.clone();
    let mut ctx = world.resource::<PendingCtx>().0.clone();
    ctx.int = fabric.int.clone();
    let mut nics = Store::default();
    let window = models::nic::recording_window(world);
    let faults = world
        .get_resource::<models::fabric::faults::FaultConfig>()
        .map_or(Vec::new(), |f| f.0.clone());
    for host in 0..fabric.num_hosts() as u32 {
        let source = world.resource_mut::<EventQueue>().add_source();
        let mut nic = RoceNic::new(host, source, &ctx.cfg);
        nic.window = window;
        nic.slow_drain =
            models::fabric::faults::Fault::slow_receiver(&faults, host).map(|rate| crate::state::SlowDrain {
                rate,
                free_at: SimTime::ZERO,
            });
        nics.push(fabric.nodes[host as usize], nic);
    }
    world.insert_resource(nics);
    world.insert_resource(RoceNics { ctx: ctx.clone() });
}

/// What each Responder end accepted in the recording window, for the summary's goodput, and
/// what the NICs lost or resent, for the run's conservation figures.
fn publish_delivered(
    nics: Res<Store<RoceNic>>,
    mut delivered: ResMut<DeliveredInWindow>,
    mut losses: ResMut<NicLosses>,
) {
    for nic in nics.rows() {
        let c = &nic.counters;
        losses.receive_drops += c.ingress_drops;
        losses.out_of_sequence += c.out_of_sequence;
        losses.timeouts += c.timeouts;
        losses.retransmitted += c.retransmitted_packets;
        losses.pfc_pause_sent += c.pfc_pause_sent;
        losses.pfc_resume_sent += c.pfc_resume_sent;
        for qp in nic.qps.iter().filter(|qp| qp.role == QpRole::Responder) {
            delivered.add(qp.connection, qp.window_bytes);
        }
    }
}

/// The `cc-rate` rows of every queue pair with a controller, at a telemetry sample.
fn sample_cc_rate(
    nics: Res<Store<RoceNic>>,
    roce: Res<RoceNics>,
    rec: Option<Res<models::telemetry::CcRateRecord>>,
    q: Res<EventQueue>,
    mut records: ResMut<Records>,
) {
    let Some(rec) = rec.map(|r| *r) else {
        return;
    };
    for nic in nics.rows() {
        for (qpn, qp) in nic.qps.iter().enumerate() {
            if let Some(cc) = qp.cc.as_deref() {
                let in_flight = qp.active.as_ref().map_or(0, |a| roce.ctx.in_flight(a));
                let id = (nic.host, qpn as u32, qp.connection);
                models::telemetry::write_cc_rate(&mut records, rec, q.now(), id, &cc.cc, in_flight);
            }
        }
    }
}

/// Every NIC event, and every packet reaching a host. It holds the NICs (`Store<RoceNic>`) and
/// the hosts' ports (`Store<HostPort>`, lent by the fabric) while events run, so a NIC is an
/// index, not a lookup in the world.
#[derive(Default)]
struct RoceHandler {
    st: Option<HandlerState>,
    effects: Vec<Effect>,
    trace: Vec<TraceEvent>,
}

struct HandlerState {
    ctx: Ctx,
    tracing: bool,
    to_host: EventKind,
    /// What each of the NIC's other kinds asks for, by kind id.
    ops: Vec<Option<Op>>,
    /// Each host's NIC beside its port: one index, one place in memory, per event.
    hosts: HeldPair<RoceNic, HostPort>,
    ingress: HostIngress,
}

impl HandlerState {
    #[cold]
    fn new(world: &mut World) -> Self {
        let ctx = world.resource::<RoceNics>().ctx.clone();
        let contract = *world.resource::<NicContract>();
        let routed = [
            (contract.listen.kind(), Op::Listen),
            (contract.connect.kind(), Op::Connect),
            (contract.post_wqe.kind(), Op::Post),
            (ctx.doorbell.kind(), Op::Doorbell),
            (ctx.tx, Op::Tx),
            (ctx.rto, Op::Rto),
            (ctx.resume, Op::Resume),
            (ctx.cc_timer, Op::CcTimer),
        ];
        let mut ops = vec![None; routed.iter().map(|(k, _)| k.0 as usize + 1).max().unwrap_or(0)];
        for (kind, op) in routed {
            ops[kind.0 as usize] = Some(op);
        }
        HandlerState {
            tracing: world.get_resource::<Tracers>().is_some_and(Tracers::is_enabled),
            to_host: world.resource::<FabricKinds>().to_host,
            ops,
            hosts: HeldPair::new("the RoCE NIC's handler"),
            ingress: HostIngress::new(world),
            ctx,
        }
    }
}

impl RoceHandler {
    /// Runs `f` on host `host`'s parts, then applies what it asked of the world.
    #[inline]
    fn with<R>(
        &mut self,
        world: &mut World,
        host: u32,
        f: impl FnOnce(&mut Parts<'_>, &Ctx, &mut Vec<Effect>) -> R,
    ) -> R {
        let RoceHandler { st, effects, trace } = self;
        let st = st.as_mut().expect("initialized at the first event");
        let r = {
            let (nic, HostPort { pcie, wire }) = &mut st.hosts.rows(world)[host as usize];
            let tr = st.tracing.then_some(&mut *trace);
            let mut parts = Parts {
                nic,
                pcie,
                wire,
                trace: tr,
            };
            f(&mut parts, &st.ctx, effects)
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

#[derive(Clone, Copy)]
enum Op {
    Listen,
    Connect,
    Post,
    Doorbell,
    Tx,
    Rto,
    Resume,
    CcTimer,
}

impl Handler for RoceHandler {
    #[inline]
    fn handle(&mut self, world: &mut World, q: &mut EventQueue, ev: &SimEvent) {
        let st = match &mut self.st {
            Some(st) => st,
            None => self.st.insert(HandlerState::new(world)),
        };
        if ev.kind == st.to_host {
            if let Some((host, pkt)) = st.ingress.accept(q, ev) {
                self.with(world, host, |p, ctx, out| p.receive(q, ctx, pkt, out));
            }
            return;
        }
        self.handle_op(world, q, ev);
    }

    /// Warming (on large fabrics): an arrival's channel and packet (`HostIngress::warm`), the
    /// NIC's head and the host's port four steps ahead, the packet's class and queue pair three
    /// steps ahead, a data packet's class's writes to host memory two steps ahead; the NIC's own
    /// events a step earlier, then the queue pair its scheduler serves first. Not the whole
    /// row: a class's lines only for a class the event touches.
    #[inline]
    fn prefetch(&self, q: &EventQueue, ev: &SimEvent, ahead: usize) {
        let Some(st) = &self.st else { return };
        let (host, pkt) = if ev.kind == st.to_host {
            match st.ingress.warm(q, ev, ahead) {
                Some(found) => found,
                None => return,
            }
        } else {
            (ev.target, None)
        };
        let Some((nic, port)) = st.hosts.held_ref().get(host as usize) else {
            return;
        };
        let own = ev.kind != st.to_host;
        match (ahead, pkt) {
            (5, _) => {
                nic.warm_head();
                engine::prefetch::prefetch_lines(port);
            }
            (4, _) if own => {
                let mut classes = nic.rr_mask;
                while classes != 0 {
                    nic.warm_class(classes.trailing_zeros() as u8);
                    classes &= classes - 1;
                }
            }
            (4, _) => {
                nic.warm_head();
                engine::prefetch::prefetch_lines(port);
            }
            (3, Some(p)) => {
                nic.warm_class(p.class);
                if let Some(qp) = nic.qps.get(p.qp as usize) {
                    engine::prefetch::prefetch_lines(qp);
                }
            }
            (2, Some(p)) if p.kind == PacketKind::Data => nic.warm_writes(p.class),
            // The NIC's own event: then the queue pair its scheduler serves first, a step at a
            // time (the first class's round robin, the queue pair, its next packet's payload).
            (3, None) => nic.warm_next_qp(0),
            (2, None) => nic.warm_next_qp(1),
            (1, None) => nic.warm_next_qp(2),
            _ => {}
        }
    }

    /// An arrival is warmed at 5 and 4 (`HostIngress::warm`, the NIC's head and port), 3 (the
    /// packet's class and queue pair) and 2 (a data packet's class's writes to host memory);
    /// the NIC's own events at 5 (its head and port), 4 (the classes it serves), then 3 to 1
    /// (the queue pair it serves first: `RoceNic::warm_next_qp`).
    fn warm_steps(&mut self, world: &mut World, kind: EventKind) -> u8 {
        let st = self.st.get_or_insert_with(|| HandlerState::new(world));
        if kind == st.to_host {
            engine::dispatch::warm_at(&[5, 4, 3, 2])
        } else {
            engine::dispatch::warm_at(&[5, 4, 3, 2, 1])
        }
    }

    fn pause(&mut self, world: &mut World) {
        if let Some(st) = &mut self.st {
            st.ingress.publish(world);
            if st.hosts.is_held() {
                let hosts = st.hosts.held_rows();
                models::nic::write_back(
                    world,
                    |host, qpn, _| hosts.get(host as usize)?.0.progress(qpn),
                    hosts.iter().flat_map(|(nic, _)| nic.held_wqes()),
                );
            }
            st.hosts.put_back(world);
        }
    }
}

impl RoceHandler {
    /// A contract request or one of the NIC's own events.
    fn handle_op(&mut self, world: &mut World, q: &mut EventQueue, ev: &SimEvent) {
        let host = ev.target;
        let st = self.st.as_ref().expect("initialized at the first event");
        let (contract, doorbell) = (st.ctx.contract, st.ctx.doorbell);
        let op = st.ops.get(ev.kind.0 as usize).copied().flatten();
        let Some(op) = op else {
            panic!(
                "event kind {} was routed to the RoCE NIC, which does not handle it",
                ev.kind.0
            )
        };
        match op {
            Op::Listen => self.with(world, host, |p, _, _| p.nic.listening = true),
            Op::Connect => {
                let spec = world.resource::<Connections>().list[contract.connect.payload(ev) as usize].clone();
                self.with(world, host, |p, ctx, _| {
                    let qpn = p.nic.qps.len() as u32;
                    let flow = models::topology::routing::flow_hash(host, spec.responder, spec.udp_src_port, 4791);
                    let mut qp = Qp::new(spec.id, QpRole::Initiator, spec.responder, spec.class, flow);
                    if let Some(model) = ctx.cfg.CongestionControl.model() {
                        let info = QpInfo {
                            host,
                            qpn,
                            connection: spec.id,
                            remote_host: spec.responder,
                            class: spec.class,
                            port_rate: ctx.cfg.PortRate,
                        };
                        qp.cc = Some(Box::new(CcQp {
                            cc: QpCc::new(model, &info),
                            timer: SimTime::MAX,
                            next_new_psn: 0,
                        }));
                    }
                    p.nic.qps.push(qp);
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
                let wqe = contract.post_wqe.payload(ev);
                let conn = world.get::<Wqe>(wqe).expect("posted WQE entity").connection;
                let doorbell = world.resource::<Connections>().list[conn as usize].doorbell_bytes;
                let number = world.get::<Wqe>(wqe).map_or(0, |w| w.number);
                let source = self.with(world, host, |p, ctx, _| {
                    p.trace(TracePoint::WqePosted, q.now(), None, Some((conn, number)));
                    let at = p.pcie.host_write(&ctx.cfg.Pcie, q.now(), doorbell);
                    (at, p.nic.source, ctx.doorbell)
                });
                source.2.schedule(q, source.0, source.1, host, wqe);
            }
            Op::Doorbell => {
                let wqe = doorbell.payload(ev);
                let (conn, number, bytes, mut times) = {
                    let w = world.get::<Wqe>(wqe).expect("posted WQE entity");
                    (w.connection, w.number, w.bytes, w.times)
                };
                times.at_nic = q.now();
                self.with(world, host, |p, ctx, _| {
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
            Op::Tx => self.with(world, host, |p, ctx, _| {
                if p.nic.tx_timer == q.now() {
                    p.nic.tx_timer = SimTime::MAX;
                    p.pump(q, ctx);
                }
            }),
            Op::Rto => self.with(world, host, |p, ctx, _| {
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
                    if let Some(cc) = qp.cc.as_deref_mut() {
                        cc.cc.on_timeout(now);
                        p.arm_cc_timer(q, ctx, qpn);
                    }
                    p.rewind(q, ctx, qpn, from);
                } else if a.rto_deadline != SimTime::MAX && a.rto_deadline > now {
                    // The deadline moved on (a later WQE, or more packets sent): wait for it.
                    let at = a.rto_deadline;
                    qp.rto_armed = at;
                    q.schedule(at, p.nic.source, ctx.rto, host, qpn as u64);
                }
            }),
            Op::Resume => self.with(world, host, |p, ctx, _| p.on_resume_check(q, ctx, ev.data as usize)),
            Op::CcTimer => self.with(world, host, |p, ctx, _| p.on_cc_timer(q, ctx, ev.data as u32)),
        }
    }
}
