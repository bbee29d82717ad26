//! The congestion-control contract suite (`models::cc`): checks that run unchanged on every
//! controller, here `None` and `FixedRate`. A controller passes if, on the RoCE NIC:
//!
//! - a lone queue pair on a 2-host star runs at the rate the controller holds it to: goodput is
//!   that rate x 4,096 / 4,154 (a full frame carries 4,096 B of payload in 4,154 B on the wire;
//!   the links count no preamble or inter-frame gap, `LinkDirection::launch`), within 1%;
//! - in a 2-to-1 incast with ECN marking on, the receivers send CNPs only if the controller asks
//!   for them, at most one per queue pair per `CnpInterval`, each reaching the sender's NIC and
//!   its queue pair's controller; without the ask, none, however many packets are marked;
//! - every sending queue pair has a controller (none with `None`), and what a controller counts
//!   matches the wire: one `on_send` per data packet its queue pair sent, no NAK or timeout on
//!   a lossless fabric.

use engine::prelude::*;
use engine::store::Store;
use models::PacketKind;
use models::cc::CongestionControl;
use models::trace::{MemoryTracer, TracePoint, Tracers};
use rdmasim_tests::{load_str, run_loaded};
use roce_nic::RoceNic;
use std::collections::BTreeMap;

/// A controller under test.
pub struct Controller {
    pub name: &'static str,
    /// `CongestionControl`'s RON, at `gbps` for a controller that takes a rate.
    pub ron: fn(gbps: u64) -> String,
    /// The rate (Gbps) it holds a lone queue pair to, asked `gbps` on a `port` Gbps port.
    pub paces_at: fn(gbps: u64, port: u64) -> u64,
    /// It asks the receivers for CNPs.
    pub cnp: bool,
    /// What one queue pair's controller counted (`None`: it does not say).
    pub seen: fn(&dyn CongestionControl) -> Option<fixed_rate_cc::HookCounts>,
}

pub const NONE: Controller = Controller {
    name: "None",
    ron: |_| "None".into(),
    paces_at: |_, port| port,
    cnp: false,
    seen: |_| None,
};

pub const FIXED_RATE: Controller = Controller {
    name: "FixedRate",
    ron: |gbps| format!("FixedRate((Rate: \"{gbps}Gbps\"))"),
    paces_at: |gbps, port| gbps.min(port),
    cnp: true,
    seen: |c| c.as_any().downcast_ref::<fixed_rate_cc::FixedRate>().map(|f| f.counts),
};

const PORT_GBPS: u64 = 400;

/// With `ecn`, the switch marks class 0 and the Responders acknowledge every 16th packet (so
/// ACKs, and their ECN echoes, flow while a long WRITE is on the wire).
fn scenario(c: &Controller, gbps: u64, hosts: u32, flows: &str, ecn: bool) -> String {
    let (switch, acks) = if ecn {
        (
            "switch: (Ecn: (Enabled: [true, false, false, false, false, false, false, false])),",
            "AckEveryPackets: 16, ",
        )
    } else {
        ("", "")
    };
    format!(
        "(name: \"cc\", simulation: (StartTime: 0, ClientStartOffset: 0, ClientStartInterval: 0, \
         WarmUp: 0.0002, RunTime: 0.001, CoolDown: 0), topology: Star(hosts: {hosts}), \
         nic: RoceNic(({acks}CongestionControl: {})), {switch} applications: [Flows((flows: [{flows}]))])",
        (c.ron)(gbps)
    )
}

/// A lone queue pair asked to run at 100 Gbps.
pub fn rate_is_obeyed(c: &Controller) {
    let text = scenario(c, 100, 2, "(src: 0, dst: 1, bytes: \"1GB\", start: 0)", false);
    let loaded = load_str(c.name, &text, &[]);
    let (o, _dir) = run_loaded(&loaded, "cc-rate");
    let want = (c.paces_at)(100, PORT_GBPS) as f64 * 4096.0 / 4154.0;
    let got = o.summary.pairs[0].gbps;
    assert!((got - want).abs() <= 0.01 * want, "{}: {got} Gbps, want {want}", c.name);
}

/// Data packets each sending queue pair (host, flow hash) put on the wire, and the CNP frames
/// sent and received, from the trace.
#[derive(Default)]
struct Wire {
    data: BTreeMap<(u32, u64), u64>,
    cnp_sent: Vec<(SimTime, u32, u32)>,
    cnp_received: u64,
}

/// A 2-to-1 incast (hosts 0 and 1 into 2 at the port rate) with ECN marking on class 0.
pub fn cnps_follow_the_marks(c: &Controller) {
    let flows = "(src: 0, dst: 2, bytes: \"1GB\", start: 0), (src: 1, dst: 2, bytes: \"1GB\", start: 0)";
    let text = scenario(c, PORT_GBPS, 3, flows, true);
    let loaded = load_str(c.name, &text, &[]);
    let setup = rdmasim::RunSetup {
        output: engine::records::Output::Null,
        name: None,
        clock: engine::clock::WallClock::fixed_at(0),
    };
    let mut app = rdmasim::build_app(&loaded, &setup).unwrap();
    let tracer = MemoryTracer::default();
    app.world.resource_mut::<Tracers>().subscribe(tracer.clone());
    app.run(RunOptions {
        stop: loaded.timeline.stop,
        beacon_interval: loaded.timeline.beacon_interval,
        progress: None,
    });
    let mut wire = Wire::default();
    for e in tracer.events() {
        let Some(p) = e.packet else { continue };
        match (e.point, p.kind) {
            (TracePoint::PacketSent, PacketKind::Data) => *wire.data.entry((e.node, p.flow)).or_default() += 1,
            (TracePoint::PacketSent, PacketKind::Cnp) => wire.cnp_sent.push((e.time, p.dst, p.qp)),
            (TracePoint::PacketReceived, PacketKind::Cnp) => wire.cnp_received += 1,
            _ => {}
        }
    }
    let marked = testkit::fabric::switch_totals(&app.world).ecn_marked;
    assert!(marked > 0, "{}: the incast marks nothing", c.name);
    let nics = app.world.resource::<Store<RoceNic>>();
    let interval = roce_nic::RoceNicConfig::default().CnpInterval.0;
    if !c.cnp {
        assert!(wire.cnp_sent.is_empty(), "{}: CNPs without a controller asking", c.name);
    } else {
        assert!(!wire.cnp_sent.is_empty(), "{}: {marked} marks and no CNP", c.name);
        // At most one per queue pair per interval.
        let mut last: BTreeMap<(u32, u32), SimTime> = BTreeMap::new();
        for &(t, dst, qp) in &wire.cnp_sent {
            if let Some(&prev) = last.get(&(dst, qp)) {
                assert!(t - prev >= interval, "{}: CNPs to {dst}/{qp} {prev} and {t}", c.name);
            }
            last.insert((dst, qp), t);
        }
        // Two queue pairs, 1.2 ms of marks at most: 2 x (1.2 ms / 50 us + 1) CNPs.
        assert!(
            wire.cnp_sent.len() <= 2 * 25,
            "{}: {} CNPs",
            c.name,
            wire.cnp_sent.len()
        );
        assert_eq!(wire.cnp_received, wire.cnp_sent.len() as u64, "{}: CNPs lost", c.name);
    }
    let sent: u64 = nics.rows().iter().map(|n| n.counters.cnps_sent).sum();
    let received: u64 = nics.rows().iter().map(|n| n.counters.cnps_received).sum();
    assert_eq!((sent, received), (wire.cnp_sent.len() as u64, wire.cnp_received));
    // Every sender's queue pair has a controller exactly when one is configured, and what it
    // counted is what its queue pair did on the wire.
    let mut cnps_seen = None;
    for nic in nics.rows() {
        for qp in nic.qps.iter().filter(|qp| qp.role == models::nic::QpRole::Initiator) {
            assert_eq!(qp.cc.is_some(), c.name != "None", "{}: host {}", c.name, nic.host);
            let Some(counts) = qp.cc.as_ref().and_then(|cc| (c.seen)(&*cc.cc.controller)) else {
                continue;
            };
            let on_wire = wire.data.get(&(nic.host, qp.flow)).copied().unwrap_or(0);
            assert!(on_wire > 0);
            assert_eq!(counts.sends, on_wire, "{}: host {}", c.name, nic.host);
            assert_eq!((counts.naks, counts.timeouts, counts.retransmits), (0, 0, 0));
            assert!(
                counts.acks > 0 && counts.ecn_marked > 0,
                "{}: {counts:?} at host {}",
                c.name,
                nic.host
            );
            *cnps_seen.get_or_insert(0) += counts.cnps;
        }
    }
    if let Some(seen) = cnps_seen {
        assert_eq!(seen, wire.cnp_received, "{}: CNPs not delivered to controllers", c.name);
    }
}

macro_rules! cc_suite {
    ($module:ident, $controller:expr) => {
        mod $module {
            #[test]
            fn rate_is_obeyed() {
                super::rate_is_obeyed(&$controller);
            }
            #[test]
            fn cnps_follow_the_marks() {
                super::cnps_follow_the_marks(&$controller);
            }
        }
    };
}

cc_suite!(none, super::NONE);
cc_suite!(fixed_rate, super::FIXED_RATE);

#[test]
fn bad_settings_are_reported_at_their_field() {
    let text =
        "(name: \"cc\", topology: Star(hosts: 2),\n nic: RoceNic((CnpClass: 9)),\n applications: [ScalaRdma(())])";
    let e = rdmasim::scenario::load_text("cc.ron", text, &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("nic.CnpClass") && e.contains("cc.ron:2:"), "{e}");
    let text = "(name: \"cc\", topology: Star(hosts: 2),\n nic: RoceNic((CongestionControl: Dcqcn(()))),\n applications: [ScalaRdma(())])";
    let e = rdmasim::scenario::load_text("cc.ron", text, &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("Dcqcn") && e.contains("FixedRate") && e.contains("cc.ron:2:"),
        "{e}"
    );
    let text = "(name: \"cc\", topology: Star(hosts: 2),\n nic: RoceNic((CongestionControl: FixedRate((Rate: \"fast\")))),\n applications: [ScalaRdma(())])";
    let e = rdmasim::scenario::load_text("cc.ron", text, &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("cc.ron:2:"), "{e}");
}
