//! `RoceNicPlugin`: builds a `RoceNic` on every host and leaves the fabric its `PortReceiver`,
//! which receives the packets reaching a host and handles the NIC contract's events (`listen`,
//! `connect`, `post_wqe`) and the NIC's own (`roce.doorbell`, `roce.tx`, `roce.rto`,
//! `roce.resume`), routed to the fabric's handler.

use crate::config::RoceNicConfig;
use crate::rx::Effect;
use crate::state::{Qp, RoceNic, Waiting};
use crate::tx::{Ctx, Parts};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::IntoScheduleConfigs;
use engine::prelude::*;
use models::fabric::link::LinkDirection;
use models::fabric::{Fabric, FabricKinds, HostReceiver, PortReceiver};
use models::nic::{Connections, DeliveredInWindow, NicContract, NicLosses, NicPools, QpRole, Wqe};
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
        app.add_systems(Finish, publish_delivered.in_set(BuildSet::Nics));
        // Every NIC kind goes to the fabric's handler, which holds the NICs behind their port
        // receiver (`NicAccess`): one owner for everything that touches a NIC.
        let fabric = *app
            .world
            .get_resource::<FabricKinds>()
            .expect("the RoCE NIC plugin needs the fabric plugin added before it");
        app.share_handler(
            &[
                contract.listen,
                contract.connect,
                contract.post_wqe,
                ctx.doorbell,
                ctx.tx,
                ctx.rto,
                ctx.resume,
            ],
            fabric.arrive,
        );
        crate::counters::register_beacon_columns(app);
        app.insert_resource(models::nic::QpDiagnostics(crate::diagnostics::describe));
    }
}

fn build_nics(world: &mut World) {
    let fabric = world.resource::<Fabric>().0.clone();
    let ctx = world.resource::<PendingCtx>().0.clone();
    let mut nics = Vec::with_capacity(fabric.num_hosts());
    let window = models::nic::recording_window(world);
    let faults = world
        .get_resource::<models::fabric::faults::FaultConfig>()
        .map_or(Vec::new(), |f| f.0.clone());
    for host in 0..fabric.num_hosts() as u32 {
        let source = world.resource_mut::<EventQueue>().add_source();
        // On the host's port entity, beside its PCIe link and egress direction: a NIC event
        // fetches all three with one query lookup.
        let port = fabric.pcie[host as usize];
        let mut nic = RoceNic::new(host, source, &ctx.cfg);
        nic.window = window;
        nic.slow_drain =
            models::fabric::faults::Fault::slow_receiver(&faults, host).map(|rate| crate::state::SlowDrain {
                rate,
                free_at: SimTime::ZERO,
            });
        world.entity_mut(port).insert(nic);
        nics.push(port);
    }
    world.insert_resource(RoceNics { nics, ctx: ctx.clone() });
    world.resource_mut::<HostReceiver>().0 = Some(Box::new(NicAccess::default()));
}

/// What each Responder end accepted in the recording window, for the summary's goodput, and
/// what the NICs lost or resent, for the run's conservation figures.
fn publish_delivered(nics: Query<&RoceNic>, mut delivered: ResMut<DeliveredInWindow>, mut losses: ResMut<NicLosses>) {
    for nic in &nics {
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

/// One host's NIC and what it drives, held by `NicAccess` while events run.
struct NicParts {
    nic: RoceNic,
    pcie: PcieLink,
    wire: LinkDirection,
}

/// Every NIC event, and every packet reaching a host: the fabric's port receiver, to which the
/// NIC's own kinds are routed too (`PortReceiver`), so that it alone touches the NICs while
/// events run. It takes each host's `RoceNic`, `PcieLink` and egress `LinkDirection` off the
/// host's port entity at its first event after a pause and puts them back in `pause`; in
/// between, a NIC is an index into `held`. The query this replaced (a `QueryState` of the three,
/// which checks the world's archetypes and sets change ticks on every access) cost about 80
/// instructions per NIC event or packet (callgrind).
#[derive(Default)]
struct NicAccess {
    st: Option<AccessState>,
    /// Host `h`'s parts while events run; empty between runs of the loop.
    held: Vec<NicParts>,
    effects: Vec<Effect>,
    trace: Vec<TraceEvent>,
}

struct AccessState {
    nics: RoceNics,
    tracing: bool,
    /// What each event kind routed here asks for, by kind id.
    ops: Vec<Option<Op>>,
}

impl NicAccess {
    #[cold]
    fn init(&mut self, world: &mut World) {
        let nics = world.resource::<RoceNics>().clone();
        let contract = *world.resource::<NicContract>();
        let ctx = &nics.ctx;
        let routed = [
            (contract.listen, Op::Listen),
            (contract.connect, Op::Connect),
            (contract.post_wqe, Op::Post),
            (ctx.doorbell, Op::Doorbell),
            (ctx.tx, Op::Tx),
            (ctx.rto, Op::Rto),
            (ctx.resume, Op::Resume),
        ];
        let mut ops = vec![None; routed.iter().map(|(k, _)| k.0 as usize + 1).max().unwrap_or(0)];
        for (kind, op) in routed {
            ops[kind.0 as usize] = Some(op);
        }
        self.st = Some(AccessState {
            nics,
            tracing: world.get_resource::<Tracers>().is_some_and(Tracers::is_enabled),
            ops,
        });
    }

    /// Takes every host's parts out of the world (the first event after a pause).
    #[cold]
    fn take(&mut self, world: &mut World) {
        let st = self.st.as_ref().expect("initialized first");
        for &port in &st.nics.nics {
            let (nic, pcie, wire) = world
                .entity_mut(port)
                .take::<(RoceNic, PcieLink, LinkDirection)>()
                .expect("NIC parts on the host's port");
            self.held.push(NicParts { nic, pcie, wire });
        }
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
        if self.held.is_empty() {
            self.take(world);
        }
        let NicAccess {
            st: Some(st),
            held,
            effects,
            trace,
        } = self
        else {
            unreachable!("initialized above")
        };
        let r = {
            let NicParts { nic, pcie, wire } = &mut held[host as usize];
            let tr = st.tracing.then_some(&mut *trace);
            let mut parts = Parts {
                nic,
                pcie,
                wire,
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

impl PortReceiver for NicAccess {
    #[inline]
    fn receive(&mut self, world: &mut World, q: &mut EventQueue, host: u32, pkt: Packet) {
        self.with(world, host, |p, ctx, out| p.receive(q, ctx, pkt, out));
    }

    fn handle(&mut self, world: &mut World, q: &mut EventQueue, ev: &SimEvent) {
        if self.st.is_none() {
            self.init(world);
        }
        let host = ev.target;
        let op = self
            .st
            .as_ref()
            .and_then(|st| st.ops.get(ev.kind.0 as usize).copied().flatten());
        let Some(op) = op else {
            panic!(
                "event kind {} was routed to the RoCE NIC, which does not handle it",
                ev.kind.0
            )
        };
        match op {
            Op::Listen => self.with(world, host, |p, _, _| p.nic.listening = true),
            Op::Connect => {
                let spec = world.resource::<Connections>().list[ev.data as usize].clone();
                self.with(world, host, |p, ctx, _| {
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
                let source = self.with(world, host, |p, ctx, _| {
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
                    p.rewind(q, ctx, qpn, from);
                } else if a.rto_deadline != SimTime::MAX && a.rto_deadline > now {
                    // The deadline moved on (a later WQE, or more packets sent): wait for it.
                    let at = a.rto_deadline;
                    qp.rto_armed = at;
                    q.schedule(at, p.nic.source, ctx.rto, host, qpn as u64);
                }
            }),
            Op::Resume => self.with(world, host, |p, ctx, _| p.on_resume_check(q, ctx, ev.data as usize)),
        }
    }

    fn pause(&mut self, world: &mut World) {
        let Some(st) = self.st.as_ref() else {
            return;
        };
        for (parts, &port) in self.held.drain(..).zip(&st.nics.nics) {
            world.entity_mut(port).insert((parts.nic, parts.pcie, parts.wire));
        }
    }
}
