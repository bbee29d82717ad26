//! The fabric test kit: it stands in for the NICs. Each host can offer
//! packets at a chosen rate, class and destination (`Offer`), obeying the PFC PAUSE and RESUME
//! frames its switch sends; each host sinks what arrives and counts it (`SinkStats`); a host can
//! also pause a class of its own link for a while (`HostPause`), like a slow receiver. After a
//! run, the `TestKit` resource holds what was sent and received.
//!
//! ```
//! use engine::prelude::*;
//! use models::fabric::SwitchConfig;
//! use testkit::fabric::{Offer, TestKit, fabric_app, run_for};
//! use models::topology::{StarTopology, TopologyConfig};
//!
//! let star = TopologyConfig::Star(StarTopology {
//!     hosts: 2, link_rate: Rate::gbps(400), link_delay: Duration::from_us(1) });
//! let offer = Offer { host: 0, dst: 1, class: 1, packet_bytes: 1000, rate: Rate::gbps(400),
//!     start: SimTime::ZERO, count: 10 };
//! let mut app = fabric_app(star, SwitchConfig::default(), vec![offer]);
//! run_for(&mut app, SimTime::from_us(10));
//! let kit = app.world.resource::<TestKit>();
//! assert_eq!(kit.sinks[1].packets, 10);
//! // 1000 B take 20 ns at 400 Gbps on each of the two links, plus 2 x 1 us and the switch's 500 ns.
//! assert_eq!(kit.sinks[1].min_latency, SimTime::from_ns(2 * 20 + 2_000 + 500));
//! ```
//!
//! A source keeps at most one packet ahead on its link: it launches a packet and schedules its
//! next when that one leaves the serializer (or later, at its rate), so a PAUSE stops it after
//! the packet on the wire, as a NIC would. Offers from one host share its link in turn. Every
//! packet is ECN-capable (ECT(0)) and carries its sequence number in the offer as its `psn`.

use bevy_ecs::prelude::*;
use bevy_ecs::schedule::IntoScheduleConfigs;
use engine::prelude::*;
use engine::store::Held;
use models::fabric::{Fabric, FabricIndex};
use models::nic::{HostIngress, HostPort};
use models::packet::{Packet, PacketKind, ecn};
use models::sets::BuildSet;
use models::topology::flow_hash;
use models::wire::PFC_FRAME_BYTES;
use std::sync::Arc;

mod apps;
pub use apps::*;

/// Packets `host` sends to `dst`: `count` packets of `packet_bytes` bytes in `class`, from
/// `start`, at `rate` (at most the link's rate is reached).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offer {
    /// The sending host.
    pub host: u32,
    /// The receiving host.
    pub dst: u32,
    /// The traffic class, 0 to 7.
    pub class: u8,
    /// Each packet's bytes on the wire.
    pub packet_bytes: u32,
    /// The sending rate.
    pub rate: Rate,
    /// When the first packet may leave.
    pub start: SimTime,
    /// How many packets.
    pub count: u64,
}

/// `host` pauses `class` of its link from `from` until `until` (real PFC frames to its switch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostPause {
    /// The pausing host.
    pub host: u32,
    /// The paused class, 0 to 7.
    pub class: u8,
    /// When the PAUSE frame is sent.
    pub from: SimTime,
    /// When the RESUME frame is sent.
    pub until: SimTime,
}

/// What one offer did.
#[derive(Clone, Debug)]
pub struct OfferState {
    /// The offer.
    pub offer: Offer,
    /// Packets put on the wire.
    pub sent: u64,
    /// When its last packet left the host's serializer.
    pub last_sent: SimTime,
    /// Waiting for RESUME of its class.
    pub blocked: bool,
    source: SourceId,
    flow: u64,
    gap: SimTime,
}

/// What arrived at one host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SinkStats {
    /// Packets received.
    pub packets: u64,
    /// Bytes received, on the wire.
    pub bytes: u64,
    /// Packets received per class.
    pub class_packets: [u64; 8],
    /// Bytes received per class.
    pub class_bytes: [u64; 8],
    /// Sum of the latencies (arrival of the last bit minus `sent_at`) per class, for means.
    pub class_latency_sum: [u64; 8],
    /// When the first packet arrived, if any did.
    pub first_arrival: Option<SimTime>,
    /// When the last packet arrived.
    pub last_arrival: SimTime,
    /// The least latency of a packet.
    pub min_latency: SimTime,
    /// The greatest latency of a packet.
    pub max_latency: SimTime,
    /// Packets that arrived marked CE.
    pub ce_marked: u64,
    /// PAUSE frames received from the switch.
    pub pause_received: u64,
    /// RESUME frames received from the switch.
    pub resume_received: u64,
}

impl SinkStats {
    /// Mean latency of `class`, if any of it arrived.
    pub fn mean_latency(&self, class: u8) -> Option<SimTime> {
        let n = self.class_packets[class as usize];
        (n > 0).then(|| SimTime(self.class_latency_sum[class as usize] / n))
    }
}

/// One arrival, kept when `TestKitPlugin::trace` is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// When its last bit arrived.
    pub time: SimTime,
    /// The receiving host.
    pub host: u32,
    /// The sending host.
    pub src: u32,
    /// Its traffic class.
    pub class: u8,
    /// Sequence number within its offer.
    pub psn: u32,
    /// Arrival minus `sent_at`.
    pub latency: SimTime,
    /// It arrived marked CE.
    pub ce: bool,
}

/// The test kit's state: offers, sinks and PFC state per host. Indexed by offer and host id.
#[derive(Resource, Debug, Default)]
pub struct TestKit {
    /// What each offer did, in offer order.
    pub offers: Vec<OfferState>,
    /// What arrived at each host, by host id.
    pub sinks: Vec<SinkStats>,
    /// Per host, bit c: the switch paused class c of the host's link.
    pub paused: Vec<u8>,
    /// Every arrival in order, if tracing.
    pub trace: Vec<Arrival>,
    tracing: bool,
    pauses: Vec<(HostPause, SourceId)>,
    kinds: Option<KitKinds>,
}

impl TestKit {
    /// Packets the offers put on the wire.
    pub fn sent(&self) -> u64 {
        self.offers.iter().map(|o| o.sent).sum()
    }
    /// Packets the sinks received.
    pub fn delivered(&self) -> u64 {
        self.sinks.iter().map(|s| s.packets).sum()
    }
}

#[derive(Clone, Copy, Debug)]
struct KitKinds {
    send: EventKind,
    pfc: EventKind,
}

/// Adds the test kit: the hosts' receiver, the offers and the host pauses. Add it after
/// `FabricPlugin`: it stands in for the NIC, so it handles `FabricKinds::to_host` and holds the
/// hosts' ports.
#[derive(Clone, Debug, Default)]
pub struct TestKitPlugin {
    /// The traffic the hosts send.
    pub offers: Vec<Offer>,
    /// The pauses the hosts send.
    pub pauses: Vec<HostPause>,
    /// Keep every arrival in `TestKit::trace` (memory grows with the packets; tests only).
    pub trace: bool,
}

impl Plugin for TestKitPlugin {
    fn build(&self, app: &mut App) {
        models::sets::configure(app);
        let fabric = *app
            .world
            .get_resource::<models::fabric::FabricKinds>()
            .expect("TestKitPlugin needs FabricPlugin added before it");
        let kinds = KitKinds {
            send: app.add_event_kind("testkit.send"),
            pfc: app.add_event_kind("testkit.pfc"),
        };
        app.set_handler_for(&[kinds.send, kinds.pfc, fabric.to_host], KitHandler::default());
        let plugin = self.clone();
        app.add_systems(
            Build,
            (move |world: &mut World| plugin.build_kit(world, kinds)).in_set(BuildSet::Nics),
        );
    }
}

impl TestKitPlugin {
    /// Build phase, after the fabric: state per host and offer, the receiver, the first events.
    fn build_kit(&self, world: &mut World, kinds: KitKinds) {
        let fabric = world.resource::<Fabric>().0.clone();
        let hosts = fabric.num_hosts();
        let link_rate = |h: u32| fabric.topology.links[fabric.topology.nodes[h as usize].ports[0].link as usize].rate;
        let mut kit = TestKit {
            sinks: vec![SinkStats::default(); hosts],
            paused: vec![0; hosts],
            tracing: self.trace,
            ..Default::default()
        };
        let mut q = world.resource_mut::<EventQueue>();
        for (i, o) in self.offers.iter().enumerate() {
            assert!(
                (o.host as usize) < hosts && (o.dst as usize) < hosts && o.host != o.dst,
                "offer {i}: bad hosts {o:?}"
            );
            assert!(
                o.class < 8 && o.packet_bytes > 0 && o.rate.bps() > 0,
                "offer {i}: bad class, size or rate {o:?}"
            );
            let source = q.add_source();
            // A rate above the link's is the link's: the serializer paces the source then.
            let rate = o.rate.min(link_rate(o.host));
            let flow = flow_hash(o.host, o.dst, 49152u16.wrapping_add(i as u16), 4791);
            kit.offers.push(OfferState {
                offer: *o,
                sent: 0,
                last_sent: SimTime::ZERO,
                blocked: false,
                source,
                flow,
                gap: rate.serialization_time(o.packet_bytes as u64),
            });
            if o.count > 0 {
                q.schedule(o.start, source, kinds.send, i as u32, 0);
            }
        }
        for (i, p) in self.pauses.iter().enumerate() {
            assert!(
                (p.host as usize) < hosts && p.class < 8 && p.from <= p.until,
                "pause {i}: {p:?}"
            );
            let source = q.add_source();
            q.schedule(p.from, source, kinds.pfc, i as u32, 1);
            q.schedule(p.until, source, kinds.pfc, i as u32, 0);
            kit.pauses.push((*p, source));
        }
        kit.kinds = Some(kinds);
        world.insert_resource(kit);
    }
}

/// The kit's events: `testkit.send`, `testkit.pfc` and the packets reaching hosts.
#[derive(Default)]
struct KitHandler {
    state: Option<KitState>,
}

struct KitState {
    fabric: Arc<FabricIndex>,
    kinds: KitKinds,
    ports: Held<HostPort>,
    ingress: HostIngress,
}

impl Handler for KitHandler {
    fn handle(&mut self, world: &mut World, q: &mut EventQueue, ev: &SimEvent) {
        let st = self.state.get_or_insert_with(|| KitState {
            fabric: world.resource::<Fabric>().0.clone(),
            kinds: world.resource::<TestKit>().kinds.expect("test kit built"),
            ports: Held::new("the test kit"),
            ingress: HostIngress::new(world),
        });
        let ports = st.ports.rows(world);
        if ev.kind == st.kinds.send {
            send(world, q, ev, ports);
        } else if ev.kind == st.kinds.pfc {
            send_pfc(world, q, ev, &st.fabric, ports);
        } else if let Some((host, pkt)) = st.ingress.accept(q, ev) {
            sink(world, q, host, pkt);
        }
    }

    fn pause(&mut self, world: &mut World) {
        if let Some(st) = &mut self.state {
            st.ingress.publish(world);
            st.ports.put_back(world);
        }
    }
}

/// `testkit.send`: offer `target` puts its next packet on its host's link.
fn send(world: &mut World, q: &mut EventQueue, ev: &SimEvent, ports: &mut [HostPort]) {
    {
        let now = q.now();
        let mut kit = world.resource_mut::<TestKit>();
        let kinds = kit.kinds.expect("test kit built");
        let paused = kit.paused[kit.offers[ev.target as usize].offer.host as usize];
        let st = &mut kit.offers[ev.target as usize];
        let o = st.offer;
        if paused & (1 << o.class) != 0 {
            st.blocked = true;
            return;
        }
        let mut pkt = Packet {
            kind: PacketKind::Probe,
            flow: st.flow,
            src: o.host,
            dst: o.dst,
            psn: st.sent as u32,
            bytes: o.packet_bytes,
            payload: o.packet_bytes,
            class: o.class,
            ecn: ecn::ECT0,
            ..Default::default()
        };
        st.sent += 1;
        let (more, source, gap) = (st.sent < o.count, st.source, st.gap);
        let d = &mut ports[o.host as usize].wire;
        pkt.sent_at = now.max(d.busy_until);
        let end = d.launch_from_host(q, now, pkt);
        world.resource_mut::<TestKit>().offers[ev.target as usize].last_sent = end;
        if more {
            q.schedule(end.max(now + gap), source, kinds.send, ev.target, 0);
        }
    }
}

/// `testkit.pfc`: a host pause starts (data 1) or ends (data 0): a PFC frame to the switch.
fn send_pfc(world: &mut World, q: &mut EventQueue, ev: &SimEvent, fabric: &FabricIndex, ports: &mut [HostPort]) {
    {
        let (p, _) = world.resource::<TestKit>().pauses[ev.target as usize];
        let frame = Packet {
            kind: PacketKind::Pfc,
            bytes: PFC_FRAME_BYTES as u32,
            class: p.class,
            aux: ev.data as u32,
            src: p.host,
            dst: fabric.topology.nodes[p.host as usize].ports[0].peer_node,
            sent_at: q.now(),
            ..Default::default()
        };
        ports[p.host as usize].wire.launch_from_host(q, q.now(), frame);
    }
}

/// A packet reached `host`: count data, obey PFC.
fn sink(world: &mut World, q: &mut EventQueue, host: u32, pkt: Packet) {
    {
        let now = q.now();
        let mut kit = world.resource_mut::<TestKit>();
        let kit = &mut *kit;
        if pkt.kind == PacketKind::Pfc {
            let bit = 1u8 << (pkt.class & 7);
            let s = &mut kit.sinks[host as usize];
            if pkt.aux != 0 {
                kit.paused[host as usize] |= bit;
                s.pause_received += 1;
                return;
            }
            kit.paused[host as usize] &= !bit;
            s.resume_received += 1;
            let send = kit.kinds.expect("test kit built").send;
            for (i, o) in kit.offers.iter_mut().enumerate() {
                if o.blocked && o.offer.host == host && o.offer.class == pkt.class {
                    o.blocked = false;
                    q.schedule(now, o.source, send, i as u32, 0);
                }
            }
            return;
        }
        let latency = now - pkt.sent_at;
        let c = (pkt.class & 7) as usize;
        let s = &mut kit.sinks[host as usize];
        if s.first_arrival.is_none() {
            s.first_arrival = Some(now);
            s.min_latency = latency;
        }
        s.packets += 1;
        s.bytes += pkt.bytes as u64;
        s.class_packets[c] += 1;
        s.class_bytes[c] += pkt.bytes as u64;
        s.class_latency_sum[c] += latency.0;
        s.last_arrival = now;
        s.min_latency = s.min_latency.min(latency);
        s.max_latency = s.max_latency.max(latency);
        s.ce_marked += pkt.is_ce() as u64;
        if kit.tracing {
            let a = Arrival {
                time: now,
                host,
                src: pkt.src,
                class: pkt.class,
                psn: pkt.psn,
                latency,
                ce: pkt.is_ce(),
            };
            kit.trace.push(a);
        }
    }
}
