//! The congestion-control contract suite (`models::cc`): checks that run unchanged on every
//! controller, on a NIC that hosts controllers. Both come in as descriptors ([`Controller`],
//! [`CcNic`]) that say how to register them and write their RON, so the suite names neither. A
//! controller passes if:
//!
//! - a lone queue pair on a 2-host star runs at the rate the controller holds it to: goodput is
//!   that rate x 4,096 / 4,154 (a full frame carries 4,096 B of payload in 4,154 B on the wire;
//!   the links count no preamble or inter-frame gap, `LinkDirection::launch`), within 1%;
//! - in a 2-to-1 incast with ECN marking on, the receivers send CNPs only if the controller asks
//!   for them (`Feedback::cnp`), at most one per queue pair per CNP interval, each reaching the
//!   sender's NIC and its queue pair's controller; without the ask, none, however many packets
//!   are marked;
//! - what the controller was told matches the wire: every queue pair that sent data has a
//!   controller, with one `on_send` per data packet it sent, ACKs, ECN echoes and INT echoes
//!   exactly when it asked for them, and no NAK, timeout or retransmission on a lossless fabric;
//! - the hooks come in a valid order for each queue pair: nothing before its first `on_send`,
//!   new PSNs sent in sequence, an ACK, ECN or INT echo only for a PSN already sent, ACKs moving
//!   forward, an INT echo with one hop record per switch on the path (one, on a star), its
//!   times before the hook's, `on_timer` not before the time the controller asked for, time
//!   never going back.
//!
//! What a controller is told is read from a recording wrapper ([`recorder`]), not from the
//! controller, so a controller need not count anything. Instantiate the suite with
//! `cc_contract_suite!(module, controller, nic)` (one test per check).
//!
//! The scenarios: stars of 400 Gbps, 1 us links and the default switch, the test kit's driver
//! application (`crate::nic_contract::driver`) posting one 1 GB WQE per connection on class 0,
//! run to 1.2 ms; goodput is measured from 0.2 ms on.

pub mod recorder;

use crate::fabric::switch_totals;
use crate::nic_contract::driver::{DriverConfig, DriverPlugin};
use engine::prelude::*;
use engine::registry::Selection;
use models::PacketKind;
use models::cc::{CcChoice, Feedback};
use models::fabric::{FabricConfig, FabricPlugin, SwitchConfig};
use models::nic::{NicContractPlugin, NicModel};
use models::topology::{StarTopology, TopologyConfig};
use models::trace::{MemoryTracer, TraceEvent, TracePoint, Tracers};
use recorder::Log;
pub use recorder::{Hook, QpRecord};
use std::collections::BTreeMap;

/// A controller under test.
#[derive(Clone, Copy, Debug)]
pub struct Controller {
    /// Its RON name, for messages.
    pub name: &'static str,
    /// Registers it in `models::cc::CONTROLLERS` (may run more than once).
    pub register: fn(),
    /// Its RON (`CongestionControl`'s value), at `gbps` for a controller that takes a rate.
    pub ron: fn(gbps: u64) -> String,
    /// The rate (Gbps) it holds a lone queue pair to, asked `gbps` on a `port` Gbps port. A
    /// controller whose rate is not set (a window's follows the round trip) is written by `ron`
    /// so that it does not limit a lone queue pair, and says `port`.
    pub paces_at: fn(gbps: u64, port: u64) -> u64,
}

/// No congestion control, the contract's default.
pub const NONE: Controller = Controller {
    name: "None",
    register: || {},
    ron: |_| "None".into(),
    paces_at: |_, port| port,
};

/// The NIC that hosts the controllers.
#[derive(Clone, Copy, Debug)]
pub struct CcNic {
    /// Registers it in `models::registry::NICS` (may run more than once).
    pub register: fn(),
    /// Its RON (`nic`'s value) with `cc` as every sending queue pair's controller, a 400 Gbps
    /// port, and Responders that acknowledge often enough that ACKs (and their ECN echoes) flow
    /// while a long WRITE is on the wire.
    pub ron: fn(cc: &str) -> String,
    /// The least time between two CNPs for one queue pair (the notification point's interval).
    pub cnp_interval: SimTime,
}

const PORT_GBPS: u64 = 400;
const DELAY: SimTime = SimTime::from_us(1);
const WARM_UP: SimTime = SimTime::from_us(200);
const STOP: SimTime = SimTime::from_us(1200);
const CLASS: u8 = 0;

/// What a run left behind, for the checks.
#[derive(Debug)]
pub struct Outcome {
    /// What the controller asks of receivers.
    pub feedback: Feedback,
    /// Every controller the NIC made, with the hooks it called.
    pub qps: Vec<QpRecord>,
    /// The NICs' trace (`models::trace`).
    pub trace: Vec<TraceEvent>,
    /// Packets the switch marked CE.
    pub ecn_marked: u64,
}

/// Runs `connections` (initiator, responder) on a star of `hosts`, each posting one 1 GB
/// WQE, with the controller asked for `gbps`, the switch marking class 0 if `ecn`.
pub fn run(c: &Controller, nic: &CcNic, gbps: u64, hosts: u32, connections: Vec<(u32, u32)>, ecn: bool) -> Outcome {
    (nic.register)();
    (c.register)();
    recorder::register();
    let cc = (c.ron)(gbps);
    let feedback = ron::from_str::<CcChoice>(&cc)
        .unwrap_or_else(|e| panic!("{}: {cc} rejected: {e}", c.name))
        .feedback();
    let log = Log::new();
    let text = (nic.ron)(&format!("{}((Log: {}, Inner: {cc}))", recorder::RECORDED, log.id()));
    let model = ron::from_str::<Selection<dyn NicModel>>(&text)
        .unwrap_or_else(|e| panic!("{}: {text} rejected: {e}", c.name))
        .value;
    model
        .validate()
        .unwrap_or_else(|e| panic!("{}: {text} rejected: {e}", c.name));
    let mut switch = SwitchConfig::default();
    switch.Ecn.Enabled[CLASS as usize] = ecn;
    let mut app = App::new();
    app.insert_resource(FabricConfig {
        topology: TopologyConfig::Star(StarTopology {
            hosts,
            link_rate: Rate::gbps(PORT_GBPS),
            link_delay: Duration(DELAY),
        }),
        switch,
        seed: 11,
    });
    app.add_plugins(NicContractPlugin);
    app.add_plugins(FabricPlugin);
    model.add_to(&mut app);
    app.add_plugins(DriverPlugin(DriverConfig {
        connections,
        wqe_bytes: vec![1 << 30],
        class: CLASS,
        closed_loop: false,
    }));
    let tracer = MemoryTracer::default();
    app.world.resource_mut::<Tracers>().subscribe(tracer.clone());
    app.run(RunOptions {
        stop: STOP,
        beacon_interval: STOP,
        progress: None,
    });
    Outcome {
        feedback,
        qps: log.take(),
        trace: tracer.events(),
        ecn_marked: switch_totals(&app.world).ecn_marked,
    }
}

/// A lone queue pair, host 0 to host 1, with the controller asked for 100 Gbps.
pub fn run_lone_qp(c: &Controller, nic: &CcNic) -> Outcome {
    run(c, nic, 100, 2, vec![(0, 1)], false)
}

/// A 2-to-1 incast (hosts 0 and 1 into 2, the controller asked for the port rate) with ECN
/// marking on.
pub fn run_incast(c: &Controller, nic: &CcNic) -> Outcome {
    run(c, nic, PORT_GBPS, 3, vec![(0, 2), (1, 2)], true)
}

/// Data payload the NICs received after the warm-up, in Gbps over the rest of the run.
pub fn goodput_gbps(o: &Outcome) -> f64 {
    let payload: u64 = o
        .trace
        .iter()
        .filter(|e| e.point == TracePoint::PacketReceived && e.time > WARM_UP)
        .filter_map(|e| e.packet.filter(|p| p.kind == PacketKind::Data))
        .map(|p| p.payload as u64)
        .sum();
    payload as f64 * 8.0 / (STOP - WARM_UP).as_secs_f64() / 1e9
}

/// The lone queue pair's goodput is the controller's rate (`run_lone_qp`'s outcome).
pub fn check_rate_is_obeyed(c: &Controller, o: &Outcome) {
    let got = goodput_gbps(o);
    let want = (c.paces_at)(100, PORT_GBPS) as f64 * 4096.0 / 4154.0;
    assert!((got - want).abs() <= 0.01 * want, "{}: {got} Gbps, want {want}", c.name);
}

/// What the wire saw: data packets each host sent, and the CNP frames sent and received.
#[derive(Default)]
struct Wire {
    data: BTreeMap<u32, u64>,
    cnp_sent: Vec<(SimTime, u32, u32)>,
    cnp_received: u64,
}

fn wire(o: &Outcome) -> Wire {
    let mut wire = Wire::default();
    for e in &o.trace {
        let Some(p) = e.packet else { continue };
        match (e.point, p.kind) {
            (TracePoint::PacketSent, PacketKind::Data) => *wire.data.entry(e.node).or_default() += 1,
            (TracePoint::PacketSent, PacketKind::Cnp) => wire.cnp_sent.push((e.time, p.dst, p.qp)),
            (TracePoint::PacketReceived, PacketKind::Cnp) => wire.cnp_received += 1,
            _ => {}
        }
    }
    wire
}

/// CNPs exactly when asked for, rate-limited, each delivered (`run_incast`'s outcome).
pub fn check_cnps_follow_the_marks(c: &Controller, nic: &CcNic, o: &Outcome) {
    let marked = o.ecn_marked;
    assert!(marked > 0, "{}: the incast marks nothing", c.name);
    let wire = wire(o);
    if !o.feedback.cnp {
        assert!(wire.cnp_sent.is_empty(), "{}: CNPs without a controller asking", c.name);
        return;
    }
    assert!(!wire.cnp_sent.is_empty(), "{}: {marked} marks and no CNP", c.name);
    // At most one per queue pair per interval.
    let mut last: BTreeMap<(u32, u32), SimTime> = BTreeMap::new();
    for &(t, dst, qp) in &wire.cnp_sent {
        if let Some(&prev) = last.get(&(dst, qp)) {
            assert!(
                t - prev >= nic.cnp_interval,
                "{}: CNPs to {dst}/{qp} {prev} and {t}",
                c.name
            );
        }
        last.insert((dst, qp), t);
    }
    let bound = 2 * (STOP.0 / nic.cnp_interval.0 + 1);
    assert!(
        wire.cnp_sent.len() as u64 <= bound,
        "{}: {} CNPs from two queue pairs in {STOP}",
        c.name,
        wire.cnp_sent.len()
    );
    assert_eq!(wire.cnp_received, wire.cnp_sent.len() as u64, "{}: CNPs lost", c.name);
    let told: u64 = o.qps.iter().map(|r| r.count(|h| *h == Hook::Cnp)).sum();
    assert_eq!(told, wire.cnp_received, "{}: CNPs not delivered to controllers", c.name);
}

/// What the controllers were told matches the wire (`run_incast`'s outcome).
pub fn check_hooks_match_the_wire(c: &Controller, o: &Outcome) {
    let wire = wire(o);
    assert!(!wire.data.is_empty(), "{}: no data sent", c.name);
    for (&host, &on_wire) in &wire.data {
        let qps: Vec<&QpRecord> = o.qps.iter().filter(|r| r.qp.host == host).collect();
        assert!(!qps.is_empty(), "{}: host {host} sent data with no controller", c.name);
        let count = |f: fn(&Hook) -> bool| qps.iter().map(|r| r.count(f)).sum::<u64>();
        let what = format!("{}: host {host}", c.name);
        assert_eq!(
            count(|h| matches!(h, Hook::Send(_))),
            on_wire,
            "{what}: on_send per packet"
        );
        assert!(count(|h| matches!(h, Hook::Ack(_))) > 0, "{what}: no on_ack");
        let echoes = count(|h| matches!(h, Hook::EcnEcho(_)));
        assert_eq!(echoes > 0, o.feedback.ecn_echo, "{what}: {echoes} ECN echoes");
        let ints = count(|h| matches!(h, Hook::Int(..)));
        assert_eq!(ints > 0, o.feedback.int, "{what}: {ints} INT echoes");
        let lossy = count(|h| match h {
            Hook::Nak(_) | Hook::Timeout => true,
            Hook::Send(s) => s.retransmit,
            _ => false,
        });
        assert_eq!(
            lossy, 0,
            "{what}: NAKs, timeouts or retransmissions on a lossless fabric"
        );
    }
}

/// The hooks come in a valid order for each queue pair (any outcome of a lossless run).
pub fn check_hook_order(c: &Controller, o: &Outcome) {
    assert!(!o.qps.is_empty(), "{}: the NIC made no controller", c.name);
    for r in &o.qps {
        let what = format!("{}: queue pair {} of host {}", c.name, r.qp.qpn, r.qp.host);
        let mut last_now = SimTime::ZERO;
        // The PSN after the last one sent, once something was.
        let mut next_psn: Option<u32> = None;
        let mut last_ack: Option<u32> = None;
        for (i, call) in r.calls.iter().enumerate() {
            let at = format!("{what}, call {i} ({:?} at {})", call.hook, call.now);
            assert!(call.now >= last_now, "{at}: time went back from {last_now}");
            last_now = call.now;
            if !matches!(call.hook, Hook::Send(_)) {
                assert!(next_psn.is_some(), "{at}: before the queue pair's first on_send");
            }
            let sent = |psn: u32| next_psn.is_some_and(|n| psn < n);
            match call.hook {
                Hook::Send(s) => {
                    assert!(s.at >= call.now, "{at}: its first bit leaves before the hook");
                    assert!(s.in_flight >= s.bytes as u64, "{at}: in flight without the packet");
                    if let Some(n) = next_psn {
                        assert_eq!(s.psn, n, "{at}: new PSNs out of sequence on a lossless run");
                    }
                    next_psn = Some(s.psn + 1);
                }
                Hook::Ack(a) => {
                    assert!(sent(a.psn), "{at}: acknowledges a PSN not sent");
                    assert!(last_ack.is_none_or(|p| a.psn > p), "{at}: after PSN {last_ack:?}");
                    assert!(a.newly_acked > 0, "{at}: acknowledges nothing new");
                    assert!(a.data_arrived <= call.now, "{at}: data arrived after the ACK");
                    last_ack = Some(a.psn);
                }
                Hook::EcnEcho(e) => {
                    assert!(o.feedback.ecn_echo, "{at}: ECN echo not asked for");
                    assert!(sent(e.psn) && e.marked > 0, "{at}: echoes nothing sent");
                }
                Hook::Int(psn, hops) => {
                    assert!(o.feedback.int, "{at}: INT echo not asked for");
                    assert!(sent(psn), "{at}: echoes a PSN not sent");
                    // Every run of the suite is on a star: one switch, one record.
                    assert_eq!(hops.as_slice().len(), 1, "{at}: hop records");
                    assert!(
                        hops.as_slice().iter().all(|h| h.time < call.now),
                        "{at}: a record from the future"
                    );
                }
                Hook::Cnp => assert!(o.feedback.cnp, "{at}: CNP not asked for"),
                Hook::Timer => assert!(call.gate.wake_at <= call.now, "{at}: before {}", call.gate.wake_at),
                Hook::Nak(_) | Hook::Timeout => panic!("{at}: on a lossless run"),
            }
        }
    }
}

/// The suite as one test module per controller: `cc_contract_suite!(name, controller, nic)`,
/// with a [`Controller`] and a [`CcNic`], runs each scenario once and checks each property in
/// its own test.
#[macro_export]
macro_rules! cc_contract_suite {
    ($module:ident, $controller:expr, $nic:expr) => {
        mod $module {
            #[allow(unused_imports)]
            use super::*;
            use std::sync::OnceLock;
            use $crate::cc_contract::*;

            fn lone_qp() -> &'static Outcome {
                static OUTCOME: OnceLock<Outcome> = OnceLock::new();
                OUTCOME.get_or_init(|| run_lone_qp(&$controller, &$nic))
            }
            fn incast() -> &'static Outcome {
                static OUTCOME: OnceLock<Outcome> = OnceLock::new();
                OUTCOME.get_or_init(|| run_incast(&$controller, &$nic))
            }

            #[test]
            fn rate_is_obeyed() {
                check_rate_is_obeyed(&$controller, lone_qp());
            }
            #[test]
            fn cnps_follow_the_marks() {
                check_cnps_follow_the_marks(&$controller, &$nic, incast());
            }
            #[test]
            fn hooks_match_the_wire() {
                check_hooks_match_the_wire(&$controller, incast());
            }
            #[test]
            fn hooks_come_in_order() {
                check_hook_order(&$controller, lone_qp());
                check_hook_order(&$controller, incast());
            }
        }
    };
}
