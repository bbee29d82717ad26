//! The switch contract: what the fabric's handler asks of a switch model, and what the rest of
//! the program reads of its switches.
//!
//! The fabric (`models::fabric`) builds one row of the model per switch of the topology (in node
//! order, in a `Store<S>` its handler holds while events run), gives each the link directions
//! leaving its ports, and calls the model for every decision: a packet arrived on a port
//! (`arrive`: route, admit, queue or send, PFC frames it reacts to), a port's serializer is free
//! (`tx_ready`, the `fabric.switch_tx` the model scheduled itself with [`wake_at`]), a test or a
//! fault asks it to send a PFC frame (`send_pfc`). The model launches packets on its own link
//! directions (`LinkDirection::launch`); the fabric moves them to the next node.
//!
//! The handler is generic over the model (`FabricWith<S>`), so a hop costs a direct call the
//! compiler inlines, not a dynamic dispatch. A model is chosen once, when the plugin is built:
//! its config implements `models::registry::SwitchModelConfig`, whose `add_to` adds
//! `FabricWith::<MySwitch>::default()`, and is registered by name so a scenario selects it with
//! `switch: MySwitch((...))`. The contract suite (`testkit::switch_contract`, instantiated in
//! `tests/integration/switch_contract.rs`) runs on every model.
//!
//! **In-band telemetry.** A model pushes a hop record into every packet it sends on that
//! carries INT (`Packet::int` is not 0, only when a controller asks for it, `models::int`):
//! just before launching it, `if INT && pkt.int != 0 { record_hop(fabric, pkt.int, pkt.kind,
//! wire, now, queued) }` with the port's link direction and the bytes still waiting at the port.
//! `INT` is the const parameter of `arrive` and `tx_ready`: the fabric passes `true` only to a
//! run that may carry INT (`models::int::request`), so every other run has no test at all; the
//! record is made out of line.
//!
//! ```
//! use engine::prelude::*;
//! use models::fabric::FabricIndex;
//! use models::fabric::link::LinkDirection;
//! use models::packet::Packet;
//! use models::switch::{SwitchCounters, SwitchModel, SwitchSite, route};
//!
//! /// Sends every packet on at once, whether or not its port is free (a sketch, not a model).
//! struct Hub { node: u32, wires: Vec<LinkDirection>, counters: SwitchCounters }
//!
//! impl SwitchModel for Hub {
//!     type Settings = ();
//!     fn settings(_: &bevy_ecs::world::World) {}
//!     fn forwarding_latency(_: &()) -> SimTime { SimTime::from_ns(100) }
//!     fn new(_: &(), site: SwitchSite, wires: Vec<LinkDirection>) -> Self {
//!         Hub { node: site.node, wires, counters: SwitchCounters::default() }
//!     }
//!     fn arrive<const INT: bool>(&mut self, fabric: &FabricIndex, q: &mut EventQueue, _in_port: u16, pkt: Packet) {
//!         let Some(out) = route(fabric, self.node, &pkt) else {
//!             self.counters.drops += 1;
//!             return;
//!         };
//!         self.counters.packets += 1;
//!         self.counters.bytes += pkt.bytes as u64;
//!         self.wires[out as usize].launch(q, q.now(), pkt);
//!     }
//!     fn tx_ready<const INT: bool>(&mut self, _: &FabricIndex, _: &mut EventQueue, _port: u16) {}
//!     fn node(&self) -> u32 { self.node }
//!     fn counters(&self) -> &SwitchCounters { &self.counters }
//!     fn wire(&self, port: u16) -> &LinkDirection { &self.wires[port as usize] }
//!     fn for_each_queued(&self, _: &mut dyn FnMut(&Packet)) {}
//!     fn for_each_queue(&self, _: &mut dyn FnMut(u16, u8, u64)) {}
//! }
//! ```

use crate::fabric::FabricIndex;
use crate::fabric::conservation::DropCause;
use crate::fabric::link::{LinkDirection, Tally};
use crate::packet::Packet;
use crate::topology::ecmp_choice;
use bevy_ecs::prelude::*;
use engine::prelude::*;
use engine::store::Store;

/// A switch as the fabric builds it: its node id, name, number of ports, and the run's seed
/// (for the model's own random streams).
#[derive(Clone, Copy, Debug)]
pub struct SwitchSite<'a> {
    /// The switch's node id.
    pub node: u32,
    /// Its name in the topology.
    pub name: &'a str,
    /// Its number of ports.
    pub ports: usize,
    /// The run's seed.
    pub seed: u64,
}

/// One switch of a model: a row of the `Store<Self>` the fabric builds. Every call gets the
/// fabric (routes, ECMP salts, event kinds, topology) and the event queue, whose `now` is the
/// event's time.
pub trait SwitchModel: Send + Sync + Sized + 'static {
    /// The model's settings, read once at build.
    type Settings: Clone + Send + Sync + 'static;
    /// Reads the settings from the world (a resource the model's plugin inserted).
    fn settings(world: &World) -> Self::Settings;
    /// From a packet's last bit arriving to the switch being able to send it on: the fabric
    /// folds it into the delay of every link into a switch, so `arrive` fires then.
    fn forwarding_latency(settings: &Self::Settings) -> SimTime;
    /// Which classes the model never drops (the run's conservation check holds it to that).
    /// Default: every class.
    fn lossless(_settings: &Self::Settings) -> [bool; 8] {
        [true; 8]
    }
    /// One switch, owning `wires`, the link directions leaving its ports in port order.
    fn new(settings: &Self::Settings, site: SwitchSite, wires: Vec<LinkDirection>) -> Self;

    /// `pkt` reached the switch on `in_port` (a data packet, an ACK, a PFC frame from the peer).
    /// `INT`: the run may carry in-band telemetry, so the model pushes a hop record into each
    /// packet it sends that carries INT ([`record_hop`]); a run without INT calls
    /// `arrive::<false>`, and the model's test compiles out.
    fn arrive<const INT: bool>(&mut self, fabric: &FabricIndex, q: &mut EventQueue, in_port: u16, pkt: Packet);
    /// The `fabric.switch_tx` the model scheduled with [`wake_at`] for `port` fired (`INT` as
    /// for `arrive`).
    fn tx_ready<const INT: bool>(&mut self, fabric: &FabricIndex, q: &mut EventQueue, port: u16);
    /// A test or a fault asks the switch to send a PFC PAUSE (or RESUME) for `class` out of
    /// `port`. Default: a switch without PFC sends nothing.
    fn send_pfc(&mut self, _fabric: &FabricIndex, _q: &mut EventQueue, _port: u16, _class: u8, _pause: bool) {}

    /// Warming, on large fabrics (`engine::dispatch::Handler::prefetch`): the far step, the
    /// switch's own state an event will read. Hints only; default: nothing.
    fn warm_state(&self) {}
    /// Warming `pkt`'s arrival on `in_port`, `ahead` (3 down to 1) events before it is handled:
    /// each step may read what the step before started loading. Default: nothing.
    fn warm_arrival(&self, _fabric: &FabricIndex, _q: &EventQueue, _in_port: u16, _pkt: &Packet, _ahead: usize) {}
    /// Warming a `tx_ready` on `port`, `ahead` (4 down to 1) events before it: each step may
    /// read what the step before started loading. Default: nothing.
    fn warm_tx(&self, _fabric: &FabricIndex, _q: &EventQueue, _port: u16, _ahead: usize) {}

    /// The switch's node id.
    fn node(&self) -> u32;
    /// What it has done, for beacons, the conservation check and tests.
    fn counters(&self) -> &SwitchCounters;
    /// The link direction leaving `port`.
    fn wire(&self, port: u16) -> &LinkDirection;
    /// Calls `f` on every packet waiting in the switch (the conservation check counts the data
    /// packets among them as in flight).
    fn for_each_queued(&self, f: &mut dyn FnMut(&Packet));
    /// Calls `f(port, class, bytes)` for every egress queue holding bytes, the bytes being the
    /// wire bytes of the packets in it (the `queue-depth` record; the sample phase, not hot).
    fn for_each_queue(&self, f: &mut dyn FnMut(u16, u8, u64));
}

/// What a switch has done, for beacons and tests; a model without PFC, ECN or drops leaves
/// those counters at zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SwitchCounters {
    /// Packets and bytes sent on (PFC frames excluded).
    pub packets: u64,
    /// Bytes sent on (PFC frames excluded).
    pub bytes: u64,
    /// Packets of lossy classes dropped (queue limit or lossy buffer full), and packets with no
    /// route to their destination.
    pub drops: u64,
    /// Packets of lossless classes dropped because their ingress counter passed XOFF + headroom
    /// or the buffer was full. Zero with sane settings: a non-zero value means the headroom is
    /// too small for the links' delay.
    pub headroom_drops: u64,
    /// PFC PAUSE frames sent.
    pub pfc_pause_sent: u64,
    /// PFC RESUME frames sent.
    pub pfc_resume_sent: u64,
    /// PFC PAUSE frames received.
    pub pfc_pause_received: u64,
    /// PFC RESUME frames received.
    pub pfc_resume_received: u64,
    /// Packets marked CE.
    pub ecn_marked: u64,
    /// Most bytes the switch's buffer ever held.
    pub peak_buffer_bytes: u64,
    /// Most bytes one egress queue of each class ever held.
    pub peak_class_queue_bytes: [u64; 8],
    /// Most bytes one ingress port ever had in the buffer in each lossless class (the PFC
    /// counter): at most `PfcXoff` + `PfcHeadroom`, and how much of the headroom was used.
    pub peak_ingress_class_bytes: [u64; 8],
    /// RDMA data packets dropped, by cause (`DropCause` as index) and class.
    pub data_drops: [[Tally; 8]; DropCause::SWITCH],
}

/// The egress port toward `pkt.dst` at switch `node`: the shortest paths' next hops, one chosen
/// by ECMP on the packet's flow hash and the switch's salt; `None` without a route.
#[inline(always)]
pub fn route(fabric: &FabricIndex, node: u32, pkt: &Packet) -> Option<u16> {
    let hops = fabric.routes.next_hops(node, pkt.dst);
    match hops.len() {
        0 => None,
        1 => Some(hops[0]),
        n => Some(hops[ecmp_choice(fabric.salts[node as usize], pkt.flow, n)]),
    }
}

/// Pushes the hop record of the egress port whose link direction is `wire` into the INT stack
/// `int` (`Packet::int`) of a packet of `kind` the switch sends at `now` with `queued` bytes
/// left waiting at the port: the time, the bytes the direction sent before it, `queued` and the
/// line rate. Data packets only (an ACK carries its data packet's records back untouched). Call
/// it only when `int` is not 0 (see the module's doc), just before `LinkDirection::launch`. It
/// takes the packet's fields by value: a reference would make the hot path keep the packet in
/// memory for a call that never happens without INT.
#[cold]
#[inline(never)]
pub fn record_hop(
    fabric: &FabricIndex,
    int: u32,
    kind: crate::packet::PacketKind,
    wire: &LinkDirection,
    now: SimTime,
    queued: u64,
) {
    if kind != crate::packet::PacketKind::Data {
        return;
    }
    if let Some(t) = fabric.int.as_deref() {
        let hop = crate::int::IntHop {
            time: now.max(wire.busy_until),
            tx_bytes: wire.bytes,
            qlen: queued,
            rate: wire.rate,
        };
        t.push(int, hop);
    }
}

/// `fabric.switch_tx` data: the switch's node id and the egress port.
#[inline]
pub fn tx_data(node: u32, port: u16) -> u64 {
    (node as u64) << 16 | port as u64
}

/// Schedules `fabric.switch_tx` for `port` of switch `node` at `at` (when `wire`, the port's
/// link direction, frees), from the direction's own event source: `tx_ready` runs then.
#[inline]
pub fn wake_at(fabric: &FabricIndex, q: &mut EventQueue, wire: &LinkDirection, node: u32, port: u16, at: SimTime) {
    wire.schedule_send(q, at, fabric.kinds.switch_tx, tx_data(node, port));
}

/// `fabric.send_pfc` data: the egress port, the class and whether to pause (else resume).
pub fn send_pfc_data(port: u16, class: u8, pause: bool) -> u64 {
    (port as u64) << 16 | (class as u64 & 7) << 8 | pause as u64
}

/// `send_pfc_data` read back.
#[inline]
pub fn read_send_pfc_data(data: u64) -> (u16, u8, bool) {
    ((data >> 16) as u16, ((data >> 8) & 7) as u8, data & 1 != 0)
}

/// Visits every packet the switches hold, whatever the model.
type QueuedVisitor = fn(&World, &mut dyn FnMut(&Packet));
/// Visits every switch's non-empty egress queues: node, port, class, bytes.
type QueueVisitor = fn(&World, &mut dyn FnMut(u32, u16, u8, u64));

/// What code that does not know the model reads of the switches between segments (beacon
/// columns, the conservation check, tests), whatever the model: the fabric inserts it.
#[derive(Resource, Clone, Copy, Debug)]
pub struct Switches {
    counters: fn(&World) -> Vec<(u32, SwitchCounters)>,
    queued: QueuedVisitor,
    queues: QueueVisitor,
    /// Which classes the model never drops.
    pub lossless: [bool; 8],
}

impl Switches {
    /// The view of model `S`'s store.
    pub fn of<S: SwitchModel>(settings: &S::Settings) -> Switches {
        Switches {
            counters: |w| {
                w.get_resource::<Store<S>>().map_or(Vec::new(), |s| {
                    s.rows().iter().map(|s| (s.node(), *s.counters())).collect()
                })
            },
            queued: |w, f| {
                if let Some(s) = w.get_resource::<Store<S>>() {
                    s.rows().iter().for_each(|s| s.for_each_queued(f));
                }
            },
            queues: |w, f| {
                if let Some(s) = w.get_resource::<Store<S>>() {
                    for sw in s.rows() {
                        let node = sw.node();
                        sw.for_each_queue(&mut |port, class, bytes| f(node, port, class, bytes));
                    }
                }
            },
            lossless: S::lossless(settings),
        }
    }
    /// Every switch's counters, in node order (none without a fabric).
    pub fn counters(world: &World) -> Vec<(u32, SwitchCounters)> {
        world
            .get_resource::<Switches>()
            .map_or(Vec::new(), |s| (s.counters)(world))
    }
    /// Calls `f(node, port, class, bytes)` on every non-empty egress queue of every switch.
    pub fn for_each_queue(world: &World, f: &mut dyn FnMut(u32, u16, u8, u64)) {
        if let Some(s) = world.get_resource::<Switches>() {
            (s.queues)(world, f);
        }
    }
    /// Calls `f` on every packet waiting in any switch.
    pub fn for_each_queued(world: &World, f: &mut dyn FnMut(&Packet)) {
        if let Some(s) = world.get_resource::<Switches>() {
            (s.queued)(world, f);
        }
    }
}

/// Beacon columns summed over every switch, the same for every model.
pub fn register_beacon_columns(app: &mut App) {
    fn sum(world: &World, f: impl Fn(&SwitchCounters) -> u64) -> u64 {
        Switches::counters(world).iter().map(|(_, c)| f(c)).sum()
    }
    app.add_beacon_column("switch_packets", |w| sum(w, |c| c.packets));
    app.add_beacon_column("switch_bytes", |w| sum(w, |c| c.bytes));
    app.add_beacon_column("switch_drops", |w| sum(w, |c| c.drops + c.headroom_drops));
    app.add_beacon_column("pfc_pause_sent", |w| sum(w, |c| c.pfc_pause_sent));
    app.add_beacon_column("pfc_pause_received", |w| sum(w, |c| c.pfc_pause_received));
    app.add_beacon_column("pfc_resume_sent", |w| sum(w, |c| c.pfc_resume_sent));
    app.add_beacon_column("ecn_marked", |w| sum(w, |c| c.ecn_marked));
}
