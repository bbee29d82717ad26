//! The progress watchdog (`models::watchdog`): a connection that can never deliver is named with
//! its queue pairs' state, a PFC deadlock built on purpose is reported with its cycle, and a
//! healthy run (every shipped scenario, a lossless incast) reports nothing.

use engine::prelude::*;
use models::fabric::SwitchConfig;
use models::fabric::deadlock::PfcDeadlockPlugin;
use models::topology::TopologyConfig;
use models::watchdog::{WatchdogConfig, WatchdogReport};
use std::path::PathBuf;
use testkit::fabric::{Offer, TestKit, fabric_app};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Two applications on a star of 4 hosts: `good` on lossless class 1, `lossy` on class 2, which
/// the switch treats as lossy with a drop-tail limit of 1000 B per egress queue. A data frame
/// (4096 + 58 = 4154 B) never fits under it, so every data packet of `lossy` is dropped at the
/// switch and go-back-N resends it forever; its connection setup frames (322 B) fit, so the
/// connection is set up and has its 10 WQEs outstanding. It never completes one: the watchdog
/// must name it, and only it.
pub const STALL_SCENARIO: &str = r#"(
    name: "stall",
    simulation: (RunTime: 0.02, BeaconReportInterval: 0.001),
    topology: Star(hosts: 4),
    switch: (LossyQueueLimit: 1000),
    nic: RoceNic((
        EgressBufferManager: (PoolAllocationVector: [0.3, 0.3, 0.3, 0, 0, 0, 0, 0]),
        IngressBufferManager: (PoolAllocationVector: [0.3, 0.3, 0.3, 0, 0, 0, 0, 0]),
    )),
    applications: [
        ScalaRdma((name: "good", prScalaRdmaInitiator: 0.25, prScalaRdmaResponder: 0.25, RdmaDataPacketTC: 1)),
        ScalaRdma((name: "lossy", prScalaRdmaInitiator: 0.25, prScalaRdmaResponder: 0.25, RdmaDataPacketTC: 2)),
    ],
    watchdog: (StallTimeout: 0.005, Fatal: true),
)"#;

#[test]
fn a_connection_that_can_never_deliver_is_named_in_the_summary_and_the_manifest() {
    let loaded = rdmasim::scenario::load_text("stall.ron", STALL_SCENARIO, &[]).expect("loads");
    let dir = std::env::temp_dir().join(format!("rdmasim-watchdog-{}", std::process::id()));
    let setup = rdmasim::RunSetup {
        output: engine::records::Output::Folder(dir.clone()),
        name: None,
        clock: engine::clock::WallClock::fixed_at(0),
    };
    let o = rdmasim::run(&loaded, &setup, None).expect("runs");
    let w = &o.summary.watchdog;
    assert!(w.deadlocks.is_empty(), "{w:?}");
    assert_eq!(w.stalls.len(), 1, "only the lossy connection: {w:?}");
    let s = &w.stalls[0];
    // Placement: good's Initiator h0, its Responder h1; lossy's h2 -> h3 (connection 1).
    assert_eq!(
        (s.connection, s.initiator, s.responder, s.index, s.class),
        (1, 2, 3, 0, 2)
    );
    assert_eq!((s.initiator_name.as_str(), s.responder_name.as_str()), ("h2", "h3"));
    assert_eq!((s.phase.as_str(), s.posted, s.completed), ("data", 10, 0));
    assert!(s.resumed_sec.is_none());
    // Data starts at the end of the client window, 0.003 s; the first look that sees the WQEs
    // outstanding is the 0.004 s tick, and 0.005 s later the 0.009 s tick reports it.
    assert_eq!((s.since_sec, s.detected_sec), (0.004, 0.009));
    assert!(
        s.qp_state
            .starts_with("Initiator QP 0: ready true, 9 waiting, active WQE 1 (62 packets"),
        "{}",
        s.qp_state
    );
    assert!(
        s.qp_state.contains("; Responder QP 0: expected PSN 0"),
        "{}",
        s.qp_state
    );
    assert!(o.summary.watchdog_failed(&loaded), "Fatal and a finding");
    let text = o.summary.to_string();
    assert!(
        text.contains("stalled: connection 1 (Initiator 2 h2 -> Responder 3 h3, index 0, class 2)"),
        "{text}"
    );
    // The manifest carries the same report.
    let manifest = o
        .files
        .iter()
        .find(|p| p.to_string_lossy().ends_with("-manifest-0.json"))
        .expect("manifest");
    let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(manifest).expect("reads")).expect("JSON");
    let wd = &m["watchdog"];
    assert_eq!(wd["failed"], true);
    assert_eq!(wd["deadlocks"].as_array().map(Vec::len), Some(0));
    let st = &wd["stalls"][0];
    assert_eq!(
        (st["initiator_name"].as_str(), st["responder_name"].as_str()),
        (Some("h2"), Some("h3"))
    );
    assert_eq!((st["connection"].as_u64(), st["index"].as_u64()), (Some(1), Some(0)));
    assert_eq!(st["qp_state"].as_str(), Some(s.qp_state.as_str()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_connection_request_that_is_never_answered_is_named_in_setup() {
    // A drop-tail limit of 100 B drops the lossy application's 322 B connection request too:
    // the request (at the client window's start, 0.002 s) is never answered, and the Responder
    // never creates its queue pair.
    let loaded = rdmasim::scenario::load_text("stall.ron", STALL_SCENARIO, &["switch.LossyQueueLimit=100".into()])
        .expect("loads");
    let setup = rdmasim::RunSetup {
        output: engine::records::Output::Null,
        name: None,
        clock: engine::clock::WallClock::fixed_at(0),
    };
    let w = rdmasim::run(&loaded, &setup, None).expect("runs").summary.watchdog;
    assert_eq!(w.stalls.len(), 1, "{w:?}");
    let s = &w.stalls[0];
    assert_eq!((s.connection, s.phase.as_str(), s.posted), (1, "setup", 0));
    // Charged from the request itself; the first look at or past 0.002 + 0.005 s reports it.
    assert_eq!((s.since_sec, s.detected_sec), (0.002, 0.007));
    assert!(s.qp_state.starts_with("Initiator QP 0: ready false"), "{}", s.qp_state);
    assert!(s.qp_state.ends_with("Responder QP not created"), "{}", s.qp_state);
}

fn watchdog_of(file: &str, overrides: &[&str]) -> WatchdogReport {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let loaded = rdmasim::scenario::load_path(&root().join("scenarios").join(file), &overrides).expect("loads");
    let setup = rdmasim::RunSetup {
        output: engine::records::Output::Null,
        name: None,
        clock: engine::clock::WallClock::fixed_at(0),
    };
    rdmasim::run(&loaded, &setup, None).expect("runs").summary.watchdog
}

#[test]
fn no_shipped_scenario_reports_anything_at_runtime_0_01() {
    // A short StallTimeout too (10 ms, 100 RTOs of the NIC's default): still nothing.
    for f in [
        "default.ron",
        "ideal-nic.ron",
        "many-connections.ron",
        "spec-ratios-0.25-0.75.ron",
        "spec-ratios-0.9-0.1.ron",
        "star.ron",
    ] {
        let w = watchdog_of(f, &["simulation.RunTime=0.01", "watchdog=(StallTimeout: 0.01)"]);
        assert!(w.is_empty(), "{f}: {w:?}");
    }
}

/// Five switches in a ring, s0 -> s1 -> ... -> s4 -> s0, a host on each; host i sends to host
/// i + 2, two hops clockwise (three the other way, so the shortest path is unique). Every ring
/// link carries two flows at line rate (a host's own and its neighbour's transit), so its queue
/// grows, PFC pauses it, and each switch's ingress from its counter-clockwise neighbour fills
/// with transit packets waiting for the clockwise port, which the next switch has paused for the
/// same reason: a cyclic buffer dependency. Small XOFF/XON make it close fast.
fn ring() -> TopologyConfig {
    let mut nodes: Vec<String> = (0..5).map(|i| format!("Host(\"h{i}\")")).collect();
    nodes.extend((0..5).map(|i| format!("Switch(\"s{i}\")")));
    let mut links: Vec<String> = (0..5).map(|i| format!("(a: \"h{i}\", b: \"s{i}\")")).collect();
    links.extend((0..5).map(|i| format!("(a: \"s{i}\", b: \"s{}\")", (i + 1) % 5)));
    let text = format!("Explicit(nodes: [{}], links: [{}])", nodes.join(", "), links.join(", "));
    engine::scenario::ron_options().from_str(&text).expect("the ring's RON")
}

fn ring_run(offers_to: impl Fn(u32) -> u32) -> (WatchdogReport, u64, u64) {
    let cfg = SwitchConfig {
        PfcXoff: Size(20_000),
        PfcXon: Size(10_000),
        ..SwitchConfig::default()
    };
    let offers = (0..5)
        .map(|h| Offer {
            host: h,
            dst: offers_to(h),
            class: 1,
            packet_bytes: 4154,
            rate: Rate::gbps(400),
            start: SimTime::ZERO,
            count: 20_000,
        })
        .collect();
    let mut app = fabric_app(ring(), cfg, offers);
    app.add_plugins(PfcDeadlockPlugin);
    app.insert_resource(WatchdogConfig::default());
    app.run(RunOptions {
        stop: SimTime::from_us(20_000),
        beacon_interval: SimTime::from_us(1_000),
        progress: None,
    });
    let kit = app.world.resource::<TestKit>();
    (
        app.world.resource::<WatchdogReport>().clone(),
        kit.sent(),
        kit.delivered(),
    )
}

#[test]
fn a_pfc_deadlock_in_a_ring_is_reported_with_its_cycle() {
    let (w, sent, delivered) = ring_run(|h| (h + 2) % 5);
    // A real deadlock: of 5 x 20,000 frames (1.66 ms each at line rate) far from all arrive in
    // 20 ms, where a free fabric at half rate per flow would have delivered them in 3.4 ms.
    assert!(delivered < sent && delivered < 5 * 20_000, "{delivered} of {sent}");
    assert!(w.stalls.is_empty());
    assert_eq!(w.deadlocks.len(), 1, "{w:?}");
    let d = &w.deadlocks[0];
    assert_eq!(d.class, 1);
    // The cycle is the clockwise ring: s_i's port toward s_{i+1} (port 2: port 0 is the host,
    // port 1 the link to s_{i-1} for i > 0, listed before; s0's ring links are ports 1 and 2).
    let hops: Vec<(String, String)> = d.cycle.iter().map(|p| (p.switch.clone(), p.toward.clone())).collect();
    let expected: Vec<(String, String)> = (0..5).map(|i| (format!("s{i}"), format!("s{}", (i + 1) % 5))).collect();
    assert_eq!(hops, expected, "{d}");
    // Reported once held for PfcDeadlockTimeout (5 ms), at a 1 ms tick.
    assert!(d.detected_sec - d.since_sec >= 0.005 - 1e-12, "{d}");
    assert!(d.to_string().starts_with("PFC deadlock in class 1 since "), "{d}");
    assert!(d.to_string().contains(" s0 port "), "{d}");
}

#[test]
fn one_hop_traffic_in_the_same_ring_pauses_but_never_deadlocks() {
    // Host i to host i + 1: each ring link carries one flow, which the next switch sends to its
    // host at once: no transit, so no packet waits on a second ring link and no cycle forms.
    let (w, sent, delivered) = ring_run(|h| (h + 1) % 5);
    assert_eq!((sent, delivered), (100_000, 100_000));
    assert!(w.is_empty(), "{w:?}");
}
