//! Injected faults (`faults: [...]`, `models::fabric::faults`): packets lost on a link are
//! counted and the balance still holds; go-back-N recovers, so every connection keeps completing
//! WQEs and Little's law holds per connection; the same seed loses the same packets.

use rdmasim::Outcome;
use rdmasim_tests::*;

const MAX_PENDING: f64 = 10.0;

/// The default scenario (8 disjoint pairs on the leaf-spine) for `run_time` seconds, with
/// `faults` and a 100 us RetransmitTimeout: with no incast the queueing delay stays far below
/// it, so only real losses time out, and a lost WQE tail costs 100 us instead of the 67 ms
/// default (which would freeze a connection for most of a 10 ms run).
fn default_with(faults: &str, run_time: &str) -> rdmasim::scenario::Loaded {
    default_with_extra(faults, run_time, "")
}

/// As `default_with`, with `extra` scenario fields.
fn default_with_extra(faults: &str, run_time: &str, extra: &str) -> rdmasim::scenario::Loaded {
    let text = std::fs::read_to_string(scenario_path("default.ron")).expect("the shipped scenario");
    assert!(text.contains("nic: RoceNic(()),"), "the scenario's NIC line moved");
    let text = text.replace(
        "nic: RoceNic(()),",
        &format!("nic: RoceNic((RetransmitTimeout: \"100us\")),\n    faults: [{faults}],\n    {extra}"),
    );
    load_str("default.ron", &text, &[&format!("simulation.RunTime={run_time}")])
}

/// Every connection's recorded WQEs and Little's law: 10 WQEs always outstanding (a closed loop)
/// = completion rate x mean latency = (sum of the window's latencies) / RunTime.
fn check_littles_law(o: &mut Outcome, run_time_ps: u64, tolerance: f64) {
    let world = &mut o.app.world;
    let mut q = world.query::<&scala_rdma::InitiatorInstance>();
    let mut n = 0;
    for i in q.iter(world) {
        n += 1;
        assert!(i.recorded > 100, "{} completed only {} WQEs", i.name, i.recorded);
        let l = i.recorded_latency.0 as f64 / run_time_ps as f64;
        assert!(
            (l / MAX_PENDING - 1.0).abs() < tolerance,
            "{} has L = {l:.4} WQEs in the system, not {MAX_PENDING}",
            i.name
        );
    }
    assert_eq!(n, 8, "the default scenario's 8 Initiators");
}

#[test]
fn one_percent_loss_on_a_link_is_counted_and_survived_by_every_connection() {
    // Both of h0's link directions lose 1%: all of h0's traffic (data or ACKs) crosses it.
    let loaded = default_with("Loss(link: (\"h0\", \"leaf0\"), rate: 0.01)", "0.01");
    let (mut a, dir_a) = run_loaded(&loaded, "faults-loss-a");
    let (_b, dir_b) = run_loaded(&loaded, "faults-loss-b");
    let s = &a.summary;
    let c = &s.conservation;
    assert!(c.ok(), "{:?}", c.violations);
    let [sent, delivered, dropped, in_flight] = c.totals();
    assert_eq!(sent, {
        let mut t = delivered;
        t += dropped;
        t += in_flight;
        t
    });
    let f = a.app.world.resource::<models::fabric::faults::FaultCounters>().clone();
    let lost: u64 = f.data.iter().map(|t| t.packets).sum();
    assert_eq!(dropped.packets, lost, "every drop is the fault's");
    assert_eq!(f.by_fault, [lost + f.other.packets]);
    // The summary (its text and JSON, the manifest's too) carries the same counts.
    assert_eq!(s.faults.as_ref(), Some(&f));
    let line = format!(
        "faults          {lost} data packets and {} other frames lost (faults[0] {})",
        f.other.packets, f.by_fault[0]
    );
    assert!(s.to_string().contains(&line), "{line:?} not in:\n{s}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir_a.file("default-manifest-0.json")).unwrap()).unwrap();
    assert_eq!(manifest["faults"]["by_fault"][0], f.by_fault[0], "{manifest}");
    // h0 is an Initiator or a Responder: its data (or its peer's) crosses the link. 1% of what
    // crossed, within 5 sigma of a binomial draw.
    let crossed = {
        let fabric = a.app.world.resource::<models::fabric::Fabric>().0.clone();
        let ports = a.app.world.resource::<engine::store::Store<models::nic::HostPort>>();
        let h0 = ports.get(0).unwrap().wire.data_packets;
        let (leaf0, port) = (
            fabric.topology.find("leaf0").unwrap(),
            fabric.topology.port(0, 0).peer_port,
        );
        let switches = a
            .app
            .world
            .resource::<engine::store::Store<models::fabric::switch::Switch>>();
        let to_h0 = switches
            .rows()
            .iter()
            .find(|s| s.node == leaf0)
            .unwrap()
            .wire(port)
            .data_packets;
        h0 + to_h0
    };
    let expect = crossed as f64 * 0.01;
    assert!(crossed > 10_000, "only {crossed} data packets crossed h0's link");
    assert!(
        (lost as f64 - expect).abs() < 5.0 * (expect * 0.99).sqrt(),
        "lost {lost} of {crossed}"
    );
    assert!(s.nic_losses.retransmitted > 0, "go-back-N resent nothing");
    check_littles_law(&mut a, PS_PER_SEC / 100, 0.03);
    for file in ["default-rdma-perf-0.csv", "default-beacon-0.csv"] {
        let x = std::fs::read(dir_a.file(file)).expect(file);
        assert!(
            x == std::fs::read(dir_b.file(file)).expect(file),
            "{file} differs with the same seed"
        );
    }
}

/// Each connection's last completion, in picoseconds, from rdma-perf.
fn last_completions(dir: &ScratchDir) -> Vec<(String, u64)> {
    let perf = Csv::read(&dir.file("default-rdma-perf-0.csv"));
    let (name, end) = (perf.col("application_name"), perf.col("sim_time_sec"));
    let mut last = std::collections::BTreeMap::new();
    for r in &perf.rows {
        let e = last.entry(r[name].clone()).or_insert(0);
        *e = sec_ps(&r[end]).max(*e);
    }
    last.into_iter().collect()
}

#[test]
fn a_host_link_down_for_half_a_millisecond_drops_then_traffic_resumes() {
    // h0's only link is down from 0.006 s to 0.0065 s: everything h0 sends or is sent is lost
    // meanwhile (counted), then go-back-N (a 100 us timeout) resumes its connection.
    let loaded = default_with(
        "LinkDown(link: (\"leaf0\", \"h0\"), at: 0.006, up: Some(0.0065))",
        "0.005",
    );
    let (o, dir) = run_loaded(&loaded, "faults-down");
    let c = &o.summary.conservation;
    assert!(c.ok(), "{:?}", c.violations);
    let f = o.app.world.resource::<models::fabric::faults::FaultCounters>();
    let lost: u64 = f.data.iter().map(|t| t.packets).sum();
    assert_eq!(c.totals()[2].packets, lost, "every drop is the fault's");
    // Lost: what was on the 1 us wire at 0.006 s (~12 frames of 4154 B at 400 Gbps) and each
    // go-back-N resend while down (one per 100 us timeout), at most 500 us of line rate in the
    // one direction h0's data flows (12.04 frames per us: 6,020).
    assert!(lost >= 10, "only {lost} data packets lost while down");
    assert!(lost <= 6_100, "{lost} is more than 500 us at line rate");
    assert!(o.summary.nic_losses.timeouts > 0, "{:?}", o.summary.nic_losses);
    // Every connection, h0's included, completes WQEs in the last millisecond (0.0095-0.0105 s).
    let last = last_completions(&dir);
    assert_eq!(last.len(), 8);
    for (name, t) in last {
        assert!(t > 9_500_000_000, "{name} last completed at {t} ps");
    }
}

#[test]
fn a_spine_link_down_for_good_is_routed_around() {
    // leaf0-spine0 goes down at 0.004 s, before the 0.005 s recording: the routes move every
    // flow off it (spine0 reaches leaf0's hosts through another leaf and spine), so no
    // connection loses more than what was on the link at that instant, and Little's law holds
    // as on a healthy fabric over the 10 ms window (tolerance as in the loss test).
    let loaded = default_with("LinkDown(link: (\"leaf0\", \"spine0\"), at: 0.004)", "0.01");
    let (mut o, _dir) = run_loaded(&loaded, "faults-reroute");
    let c = &o.summary.conservation;
    assert!(c.ok(), "{:?}", c.violations);
    let f = o.app.world.resource::<models::fabric::faults::FaultCounters>().clone();
    // At most what both directions hold at once: a link's 1 us delay plus two switch queues'
    // worth, far below the ~1.2 million packets a 10 ms run sends.
    assert!(
        f.by_fault[0] < 1000,
        "{} packets lost: the routes kept using the link",
        f.by_fault[0]
    );
    check_littles_law(&mut o, PS_PER_SEC / 100, 0.03);
}

#[test]
fn a_host_link_down_for_good_stalls_its_connection_and_the_watchdog_names_it() {
    let loaded = default_with_extra(
        "LinkDown(link: (\"h0\", \"leaf0\"), at: 0.004)",
        "0.005",
        "watchdog: (StallTimeout: 0.002),",
    );
    let (o, _dir) = run_loaded(&loaded, "faults-stall");
    assert!(o.summary.conservation.ok(), "{:?}", o.summary.conservation.violations);
    let w = &o.summary.watchdog;
    // h0 is in exactly one of the 8 disjoint pairs; only that connection stalls.
    assert_eq!(w.stalls.len(), 1, "{w:?}");
    let s = &w.stalls[0];
    assert!(s.initiator == 0 || s.responder == 0, "{s:?}");
    assert!(s.initiator_name == "h0" || s.responder_name == "h0");
    assert!(o.summary.to_string().contains("stalled: connection"));
}

#[test]
fn a_bad_fault_entry_is_refused_naming_its_field() {
    let text = std::fs::read_to_string(scenario_path("default.ron")).expect("the shipped scenario");
    for (fault, field, says) in [
        (
            "Loss(link: (\"h0\", \"nowhere\"), rate: 0.01)",
            "faults[0].link",
            "no node is named \"nowhere\"",
        ),
        (
            "Loss(link: (\"h0\", \"spine0\"), rate: 0.01)",
            "faults[0].link",
            "no link joins",
        ),
        (
            "Loss(link: (\"h0\", \"leaf0\"), rate: 1.5)",
            "faults[0].rate",
            "not a probability",
        ),
        (
            "Loss(link: (\"h0\", \"leaf0\"), rate: 0.1, classes: [8])",
            "faults[0].classes",
            "not a traffic class",
        ),
        (
            "LinkDown(link: (\"h0\", \"leaf0\"), at: -1)",
            "faults[0].at",
            "not a time",
        ),
        (
            "LinkDown(link: (\"h0\", \"leaf0\"), at: 0.2, up: 0.1)",
            "faults[0].up",
            "not after",
        ),
    ] {
        let t = text.replace(
            "nic: RoceNic(()),",
            &format!("nic: RoceNic(()),\n    faults: [{fault}],"),
        );
        let e = rdmasim::scenario::load_text("bad.ron", &t, &[])
            .expect_err(fault)
            .to_string();
        assert!(e.contains(field) && e.contains(says), "{fault}: {e}");
        // The message points into the faults line of the file (line 20, after the nic line).
        assert!(e.contains("bad.ron:20:"), "{fault}: {e}");
    }
}

#[test]
fn a_slow_receiver_fills_its_pool_engages_pfc_and_caps_goodput_at_its_drain_rate() {
    // Every host's NIC drains its receive pool at 100 Gbps, a quarter of the 400 Gbps links, so
    // each Responder's pool fills and PFC holds its Initiator back; the class is lossless, so
    // nothing may be dropped. The default 67 ms timeout: no loss, so no resend is due.
    let text = std::fs::read_to_string(scenario_path("default.ron")).expect("the shipped scenario");
    let slow: Vec<String> = (0..16)
        .map(|h| format!("SlowReceiver(host: {h}, rate: \"100Gbps\")"))
        .collect();
    let text = text.replace(
        "nic: RoceNic(()),",
        &format!("nic: RoceNic(()),\n    faults: [{}],", slow.join(", ")),
    );
    let loaded = load_str("default.ron", &text, &["simulation.RunTime=0.01"]);
    let (o, _dir) = run_loaded(&loaded, "faults-slow");
    let s = &o.summary;
    assert!(s.conservation.ok(), "{:?}", s.conservation.violations);
    assert_eq!(s.conservation.totals()[2].packets, 0, "a lossless class dropped data");
    let nic = s.nic_losses;
    assert_eq!((nic.receive_drops, nic.retransmitted), (0, 0), "{nic:?}");
    assert!(
        nic.pfc_pause_sent > 0,
        "the full pools never paused the switch: {nic:?}"
    );
    // The pool drains 4154-byte frames at 100 Gbps, 4096 payload bytes each: 98.60 Gbps of
    // payload. Over the 10 ms window a Responder can take in at most that plus one pool's worth
    // (the whole 4 MiB ingress buffer: 33.55 Mbit / 10 ms = 3.36 Gbps).
    let drain = 100.0 * 4096.0 / 4154.0;
    let bound = drain + (4u64 << 20) as f64 * 8.0 / 0.01 / 1e9;
    assert_eq!(s.pairs.len(), 8);
    // And the drain is what limits it: well above a quarter of the link's 394 Gbps share.
    assert_goodput_between(s, 0.9 * drain, bound);
}
