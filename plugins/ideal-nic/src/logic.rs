//! What the NIC does when an event reaches it: the contract's requests from the application
//! (`listen`, `connect`, `post_wqe`), its own transmit wake-ups, and the packets reaching the
//! host (`FabricKinds::to_host`). One handler serves them all: it holds the NICs
//! (`Store<IdealNic>`) and the hosts' ports (`Store<HostPort>`) while events run
//! (`engine::store`), and reaches WQE entities with a cached query.
//!
//! The port sends one frame at a time: when its serializer frees and it has more to send, it
//! schedules a wake-up (`ideal_nic.tx`) at that instant, so a NIC with work costs one event per
//! frame besides the link's arrival.

use crate::config::IdealNicConfig;
use crate::state::{IdealNic, Qp, Waiting};
use bevy_ecs::prelude::*;
use engine::prelude::*;
use engine::store::{Held, Store};
use models::fabric::{Fabric, FabricKinds};
use models::nic::{Connections, HostIngress, HostPort, NicContract, QpRole, QueuePair, Wqe, WqeTimes};
use models::packet::{Packet, PacketKind, ecn};
use models::topology::flow_hash;
use models::wire::{CM_MESSAGE_BYTES, Opcode, ROCE_ACK_BYTES, Udp};

/// The NIC's own event kind.
#[derive(Resource, Clone, Copy, Debug)]
pub struct IdealNicKinds {
    /// The port's serializer is free: send the next frame. Target: host.
    pub tx: EventKind,
}

/// The Initiator's QPN of each connection (so `post_wqe`, which names a connection, finds its
/// queue pair without a map). Host `h`'s NIC is row `h` of `Store<IdealNic>`.
#[derive(Resource, Debug, Default)]
pub struct IdealNicIndex {
    /// `initiator_qpn[connection]`, `u32::MAX` before `connect`.
    pub initiator_qpn: Vec<u32>,
}

/// `Build`, in `BuildSet::Nics`: a NIC per host, in host order (so its event source ids are
/// stable), each tied to its host's node entity.
pub fn spawn_nics(world: &mut World) {
    let fabric = world.resource::<Fabric>().0.clone();
    let mut nics = Store::default();
    let window = models::nic::recording_window(world);
    for host in 0..fabric.num_hosts() as u32 {
        let source = world.resource_mut::<EventQueue>().add_source();
        let mut nic = IdealNic::new(host, source);
        nic.window = window;
        nics.push(fabric.nodes[host as usize], nic);
    }
    world.insert_resource(nics);
    world.insert_resource(IdealNicIndex::default());
}

/// What each Responder end accepted in the recording window, for the summary's goodput.
pub fn publish_delivered(nics: Res<Store<IdealNic>>, mut delivered: ResMut<models::nic::DeliveredInWindow>) {
    for nic in nics.rows() {
        for qp in nic.qps.iter().filter(|qp| qp.role == QpRole::Responder) {
            delivered.add(qp.connection, qp.window_bytes);
        }
    }
}

/// What a handler needs, cached from its first event on.
pub(crate) struct NicLogic {
    cfg: IdealNicConfig,
    contract: NicContract,
    tx: EventKind,
    to_host: EventKind,
    nics: Held<IdealNic>,
    ports: Held<HostPort>,
    ingress: HostIngress,
    wqe_q: QueryState<&'static mut Wqe>,
}

/// Host `host`'s NIC, once held.
#[inline]
fn nic_of(nics: &mut Held<IdealNic>, host: u32) -> &mut IdealNic {
    &mut nics.held_rows()[host as usize]
}

impl NicLogic {
    fn new(world: &mut World) -> Self {
        NicLogic {
            cfg: world.resource::<IdealNicConfig>().clone(),
            contract: *world.resource::<NicContract>(),
            tx: world.resource::<IdealNicKinds>().tx,
            to_host: world.resource::<FabricKinds>().to_host,
            nics: Held::new("the ideal NIC's handler"),
            ports: Held::new("the ideal NIC's handler"),
            ingress: HostIngress::new(world),
            wqe_q: world.query(),
        }
    }

    /// `listen`: the host accepts connection requests from now on.
    fn listen(&mut self, host: u32) {
        nic_of(&mut self.nics, host).listening = true;
    }

    /// `connect`: reserve the Initiator's QPN and send the connection request. The Initiator's
    /// end is created (its `QueuePair` spawned) only when the response arrives, as the spec says.
    fn connect(&mut self, world: &mut World, q: &mut EventQueue, host: u32, connection: u32) {
        let spec = world.resource::<Connections>().list.get(connection as usize).cloned();
        let spec = spec.unwrap_or_else(|| panic!("connect names connection {connection}, which is not in Connections"));
        debug_assert_eq!(spec.initiator, host, "connect targets the Initiator's host");
        let flow = flow_hash(host, spec.responder, spec.udp_src_port, Udp::ROCEV2_PORT);
        let nic = nic_of(&mut self.nics, host);
        let qpn = nic.qps.len() as u32;
        nic.qps
            .push(Qp::new(connection, QpRole::Initiator, spec.responder, spec.class, flow));
        // The connection id rides in the PSN field: the CM message's communication id.
        let req = cm_packet(
            PacketKind::ConnectRequest,
            q.now(),
            host,
            spec.responder,
            0,
            connection,
            qpn,
            spec.class,
            flow,
        );
        nic.push_ctrl(req);
        let mut index = world.resource_mut::<IdealNicIndex>();
        let slot = connection as usize;
        if index.initiator_qpn.len() <= slot {
            index.initiator_qpn.resize(slot + 1, u32::MAX);
        }
        index.initiator_qpn[slot] = qpn;
        self.pump(q, host);
    }

    /// `post_wqe`: no PCIe, so the WQE is at the NIC at once; it starts now if its connection
    /// is set up and has nothing on the wire, else waits in post order.
    fn post_wqe(&mut self, world: &mut World, q: &mut EventQueue, host: u32, entity: Entity) {
        let now = q.now();
        let (connection, bytes, posted) = {
            let w = self
                .wqe_q
                .get(world, entity)
                .expect("post_wqe names an entity with a Wqe");
            (w.connection, w.bytes, w.times.posted)
        };
        let qpn = world
            .resource::<IdealNicIndex>()
            .initiator_qpn
            .get(connection as usize)
            .copied();
        let qpn = qpn.filter(|&n| n != u32::MAX);
        let qpn = qpn.unwrap_or_else(|| panic!("post_wqe on connection {connection} before its connect"));
        let times = WqeTimes {
            posted,
            at_nic: now,
            ..Default::default()
        };
        let cfg = self.cfg.clone();
        let nic = nic_of(&mut self.nics, host);
        let qp = &mut nic.qps[qpn as usize];
        qp.waiting.push_back(Waiting {
            wqe: entity,
            bytes,
            times,
        });
        if qp.start_next(now, &cfg) {
            nic.schedule_qp(qpn);
        }
        self.pump(q, host);
    }

    /// A packet reached `host`'s port.
    fn receive(&mut self, world: &mut World, q: &mut EventQueue, host: u32, pkt: Packet) {
        match pkt.kind {
            PacketKind::Data => self.on_data(q, host, pkt),
            PacketKind::Ack => self.on_ack(world, q, host, pkt),
            PacketKind::ConnectRequest => self.on_request(world, q, host, pkt),
            PacketKind::ConnectResponse => self.on_response(world, q, host, pkt),
            PacketKind::ConnectAck => {
                let nic = nic_of(&mut self.nics, host);
                nic.counters.cm_received += 1;
            }
            PacketKind::Pfc => {
                let nic = nic_of(&mut self.nics, host);
                let pause = pkt.aux == 1;
                nic.paused[pkt.class as usize & 7] = pause;
                if pause {
                    nic.counters.pfc_pause_received += 1;
                } else {
                    nic.counters.pfc_resume_received += 1;
                    self.pump(q, host);
                }
            }
            PacketKind::Nak | PacketKind::Probe | PacketKind::Cnp => {
                nic_of(&mut self.nics, host).counters.stray_packets += 1
            }
        }
    }

    /// Data at the Responder: count it; on the last packet of a WQE (AckReq), acknowledge it.
    /// The ACK's `sent_at` is the instant the NIC generated it, which is the arrival of that last
    /// packet: the Initiator's NIC reads it as the WQE's `last_rx`.
    fn on_data(&mut self, q: &mut EventQueue, host: u32, pkt: Packet) {
        let now = q.now();
        let nic = nic_of(&mut self.nics, host);
        let in_window = models::nic::in_recording_window(nic.window, now);
        let Some(qp) = nic
            .qps
            .get_mut(pkt.qp as usize)
            .filter(|qp| qp.role == QpRole::Responder)
        else {
            nic.counters.stray_packets += 1;
            return;
        };
        qp.payload_received += pkt.payload as u64;
        qp.expected_psn = (pkt.psn + 1) & 0x00FF_FFFF;
        if in_window {
            qp.window_bytes += pkt.payload as u64;
        }
        let (flow, remote_qpn, class) = (qp.flow, qp.remote_qpn, qp.class);
        nic.counters.data_packets_received += 1;
        nic.counters.payload_bytes_received += pkt.payload as u64;
        nic.counters.ce_received += pkt.is_ce() as u64;
        if !pkt.ack_req {
            return;
        }
        nic.push_ctrl(Packet {
            flow,
            sent_at: now,
            src: host,
            dst: pkt.src,
            qp: remote_qpn,
            psn: pkt.psn,
            bytes: ROCE_ACK_BYTES as u32,
            payload: 0,
            aux: 0,
            kind: PacketKind::Ack,
            opcode: Opcode::RC_ACKNOWLEDGE,
            class,
            ecn: ecn::ECT0,
            ack_req: false,
            int: 0,
        });
        self.pump(q, host);
    }

    /// An ACK at the Initiator: the WQE on the wire is complete. Its stamps go into its `Wqe`,
    /// the application hears `wqe_completed` now, and the next waiting WQE starts.
    fn on_ack(&mut self, world: &mut World, q: &mut EventQueue, host: u32, pkt: Packet) {
        let now = q.now();
        let cfg = self.cfg.clone();
        let nic = nic_of(&mut self.nics, host);
        nic.counters.acks_received += 1;
        let source = nic.source;
        let Some(qp) = nic
            .qps
            .get_mut(pkt.qp as usize)
            .filter(|qp| qp.role == QpRole::Initiator)
        else {
            nic.counters.stray_packets += 1;
            return;
        };
        let done = match qp.active {
            Some(a) if a.sent == a.packets && a.last_psn == pkt.psn => a,
            _ => {
                nic.counters.stray_packets += 1;
                return;
            }
        };
        qp.active = None;
        let restart = qp.start_next(now, &cfg);
        let qpn = pkt.qp;
        if restart {
            nic.schedule_qp(qpn);
        }
        nic.counters.wqes_completed += 1;
        nic.qps[qpn as usize].wqes_completed += 1;
        let mut times = done.times;
        times.last_rx = pkt.sent_at;
        times.completed = now;
        if let Ok(mut w) = self.wqe_q.get_mut(world, done.wqe) {
            w.times = times;
            w.completed = true;
        }
        self.contract.wqe_completed.schedule(q, now, source, host, done.wqe);
        self.pump(q, host);
    }

    /// A connection request at the Responder: if the host listens, create the Responder's end
    /// and answer with its QPN.
    fn on_request(&mut self, world: &mut World, q: &mut EventQueue, host: u32, pkt: Packet) {
        let now = q.now();
        let connection = pkt.psn;
        let spec = world.resource::<Connections>().list.get(connection as usize).cloned();
        let nic = nic_of(&mut self.nics, host);
        nic.counters.cm_received += 1;
        let Some(spec) = spec.filter(|_| nic.listening) else {
            nic.counters.rejected_requests += 1;
            return;
        };
        let flow = flow_hash(host, pkt.src, spec.udp_src_port, Udp::ROCEV2_PORT);
        let qpn = nic.qps.len() as u32;
        let mut qp = Qp::new(connection, QpRole::Responder, pkt.src, spec.class, flow);
        qp.remote_qpn = pkt.aux;
        nic.qps.push(qp);
        let resp = cm_packet(
            PacketKind::ConnectResponse,
            now,
            host,
            pkt.src,
            pkt.aux,
            connection,
            qpn,
            spec.class,
            flow,
        );
        nic.push_ctrl(resp);
        world.spawn(QueuePair {
            connection,
            host,
            role: QpRole::Responder,
            qpn,
            created_at: now,
            progress: Default::default(),
        });
        self.pump(q, host);
    }

    /// The response at the Initiator: create its end, acknowledge, report `established`, and
    /// start any WQE posted meanwhile.
    fn on_response(&mut self, world: &mut World, q: &mut EventQueue, host: u32, pkt: Packet) {
        let now = q.now();
        let cfg = self.cfg.clone();
        let nic = nic_of(&mut self.nics, host);
        nic.counters.cm_received += 1;
        let source = nic.source;
        let Some(qp) = nic
            .qps
            .get_mut(pkt.qp as usize)
            .filter(|qp| qp.role == QpRole::Initiator && !qp.ready)
        else {
            nic.counters.stray_packets += 1;
            return;
        };
        qp.remote_qpn = pkt.aux;
        qp.ready = true;
        let (connection, class, flow, remote) = (qp.connection, qp.class, qp.flow, qp.remote_host);
        let restart = qp.start_next(now, &cfg);
        if restart {
            nic.schedule_qp(pkt.qp);
        }
        nic.push_ctrl(cm_packet(
            PacketKind::ConnectAck,
            now,
            host,
            remote,
            pkt.aux,
            connection,
            pkt.qp,
            class,
            flow,
        ));
        world.spawn(QueuePair {
            connection,
            host,
            role: QpRole::Initiator,
            qpn: pkt.qp,
            created_at: now,
            progress: Default::default(),
        });
        self.contract.established.schedule(q, now, source, host, connection);
        self.pump(q, host);
    }

    /// Sends the next frame if the port is free, and arranges a wake-up for when it frees if
    /// more is queued. At most one wake-up per NIC is pending.
    fn pump(&mut self, q: &mut EventQueue, host: u32) {
        let now = q.now();
        let pkt = {
            let cfg = &self.cfg;
            let nic = nic_of(&mut self.nics, host);
            if nic.tx_scheduled {
                return;
            }
            if nic.busy_until > now {
                if nic.has_tx_work() {
                    nic.tx_scheduled = true;
                    q.schedule(nic.busy_until, nic.source, self.tx, host, 0);
                }
                return;
            }
            let Some(pkt) = nic.next_frame(now, cfg) else { return };
            pkt
        };
        let end = self.ports.held_rows()[host as usize].wire.launch_from_host(q, now, pkt);
        let nic = nic_of(&mut self.nics, host);
        nic.busy_until = end;
        if nic.has_tx_work() {
            nic.tx_scheduled = true;
            q.schedule(end, nic.source, self.tx, host, 0);
        }
    }

    /// `ideal_nic.tx`: the wake-up fired.
    fn on_tx(&mut self, q: &mut EventQueue, host: u32) {
        nic_of(&mut self.nics, host).tx_scheduled = false;
        self.pump(q, host);
    }
}

/// A connection manager message: `qp` the destination QPN (0 for a request), `aux` the sender's
/// QPN, the connection id in `psn`.
#[allow(clippy::too_many_arguments)]
fn cm_packet(
    kind: PacketKind,
    now: SimTime,
    src: u32,
    dst: u32,
    qp: u32,
    connection: u32,
    own_qpn: u32,
    class: u8,
    flow: u64,
) -> Packet {
    Packet {
        flow,
        sent_at: now,
        src,
        dst,
        qp,
        psn: connection,
        bytes: CM_MESSAGE_BYTES as u32,
        payload: 0,
        aux: own_qpn,
        kind,
        opcode: Opcode::UD_SEND_ONLY,
        class,
        ecn: ecn::ECT0,
        ack_req: false,
        int: 0,
    }
}

/// The NIC's one handler: the contract's requests, its own wake-ups, and arrivals.
#[derive(Default)]
pub(crate) struct NicHandler {
    logic: Option<NicLogic>,
}

impl Handler for NicHandler {
    fn handle(&mut self, world: &mut World, q: &mut EventQueue, ev: &SimEvent) {
        let logic = self.logic.get_or_insert_with(|| NicLogic::new(world));
        logic.nics.ensure(world);
        logic.ports.ensure(world);
        let c = logic.contract;
        if ev.kind == logic.to_host {
            if let Some((host, pkt)) = logic.ingress.accept(q, ev) {
                logic.receive(world, q, host, pkt);
            }
        } else if ev.kind == logic.tx {
            logic.on_tx(q, ev.target);
        } else if ev.kind == c.post_wqe {
            logic.post_wqe(world, q, ev.target, c.post_wqe.payload(ev));
        } else if ev.kind == c.connect {
            logic.connect(world, q, ev.target, c.connect.payload(ev));
        } else if ev.kind == c.listen {
            logic.listen(ev.target);
        } else {
            panic!(
                "event kind {} reached the ideal NIC, which does not handle it",
                ev.kind.0
            );
        }
    }

    fn pause(&mut self, world: &mut World) {
        if let Some(logic) = &mut self.logic {
            logic.ingress.publish(world);
            if logic.nics.is_held() {
                let nics = logic.nics.held_rows();
                models::nic::write_back(
                    world,
                    |host, qpn, _| nics.get(host as usize)?.progress(qpn),
                    nics.iter().flat_map(IdealNic::held_wqes),
                );
            }
            logic.nics.put_back(world);
            logic.ports.put_back(world);
        }
    }
}
