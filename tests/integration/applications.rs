//! Applications are swapped and combined the way NICs are: the spec's even split over every
//! entry left out, one shared host budget, and `Flows` (a second application) running an htsim
//! connection matrix and a single flow whose FCT is derived from first principles.

use models::fabric::SwitchConfig;
use models::pcie::PcieConfig;
use rdmasim::scenario::load_text;
use rdmasim_tests::{Csv, ScratchDir, load_str, run_loaded, scenario_path, sec_ps, usec_ps};
use roce_nic::RoceNicConfig;
use std::collections::BTreeSet;

/// Row `k`'s time column `name` in picoseconds (`*_sec` or `*_usec`).
fn ps(csv: &Csv, k: usize, name: &str) -> u64 {
    let cell = &csv.rows[k][csv.col(name)];
    if name.ends_with("_usec") {
        usec_ps(cell)
    } else {
        sec_ps(cell)
    }
}

/// A scenario on the default 16-host fabric with these `applications` entries.
fn with_apps(apps: &str) -> String {
    format!("(\n    name: \"apps\",\n    nic: RoceNic(()),\n    applications: [{apps}],\n)\n")
}

/// The hosts of each (application, component), in the plan.
fn hosts(l: &rdmasim::scenario::Loaded, app: &str, component: &str) -> BTreeSet<u32> {
    l.plan
        .hosts
        .iter()
        .filter(|h| h.application == app && h.component == component)
        .map(|h| h.node_id)
        .collect()
}

#[test]
fn two_scala_applications_without_ratios_split_the_hosts_evenly() {
    // The spec: 1.0 split evenly over the four entries, 0.25 each; floor(0.25 x 16) = 4 each,
    // 16 in all, no top-up. Hosts in scenario order: a's Initiators 0-3, its Responders 4-7,
    // b's Initiators 8-11, its Responders 12-15.
    let l = load_str(
        "apps.ron",
        &with_apps("ScalaRdma((name: \"a\")), ScalaRdma((name: \"b\"))"),
        &[],
    );
    assert_eq!(l.placements[0].ratios, vec![0.25, 0.25]);
    assert_eq!(l.placements[1].ratios, vec![0.25, 0.25]);
    let ids: Vec<u32> = l.plan.hosts.iter().map(|h| h.node_id).collect();
    assert_eq!(
        ids,
        (0..16).collect::<Vec<u32>>(),
        "every host runs exactly one component"
    );
    assert_eq!(hosts(&l, "a", "initiator"), (0..4).collect());
    assert_eq!(hosts(&l, "a", "responder"), (4..8).collect());
    assert_eq!(hosts(&l, "b", "initiator"), (8..12).collect());
    assert_eq!(hosts(&l, "b", "responder"), (12..16).collect());
    // Each application pairs its own: 4 pairs each, ids numbered in scenario order.
    for p in &l.plan.pairs {
        let app = if p.initiator < 8 { "a" } else { "b" };
        assert_eq!(p.application, app);
        assert!(hosts(&l, app, "responder").contains(&p.responder), "{p:?}");
    }
    assert_eq!(l.plan.connections.len(), 8);
    let ids: Vec<u32> = l.plan.connections.iter().map(|c| c.id).collect();
    assert_eq!(ids, (0..8).collect::<Vec<u32>>());

    // And it runs: both applications complete WQEs, on their own connections.
    let l = load_str(
        "apps.ron",
        &with_apps("ScalaRdma((name: \"a\")), ScalaRdma((name: \"b\"))"),
        &["simulation.RunTime=0.0002"],
    );
    let (out, dir) = run_loaded(&l, "two-scala");
    assert!(out.summary.wqes_completed > 0);
    assert_eq!(out.summary.pairs.len(), 8);
    let perf = Csv::read(&dir.file("apps-rdma-perf-0.csv"));
    let names: BTreeSet<&str> = perf
        .column("application_name")
        .iter()
        .map(|n| n.split("-initiator-").next().unwrap_or(""))
        .collect();
    assert_eq!(names, BTreeSet::from(["a", "b"]));
}

#[test]
fn given_ratios_stay_and_those_left_out_share_the_rest() {
    // 0.4 given; the three left out share 0.6, 0.2 each. Floors on 16 hosts: 6, 3, 3, 3 = 15;
    // top-up from the first entry: 6 / 16 = 0.375 < 0.4, so a's Initiators take the 16th host.
    let l = load_str(
        "apps.ron",
        &with_apps("ScalaRdma((name: \"a\", prScalaRdmaInitiator: 0.4)), ScalaRdma((name: \"b\"))"),
        &[],
    );
    let counts: Vec<usize> = [
        ("a", "initiator"),
        ("a", "responder"),
        ("b", "initiator"),
        ("b", "responder"),
    ]
    .iter()
    .map(|(a, c)| hosts(&l, a, c).len())
    .collect();
    assert_eq!(counts, vec![7, 3, 3, 3]);
}

#[test]
fn totals_other_than_one_are_refused_naming_the_field() {
    let refused = |apps: &str| {
        let e = load_text("apps.ron", &with_apps(apps), &[]).expect_err(apps);
        (e.field.clone().unwrap_or_default(), e.message.clone())
    };
    // All given, 0.5 + 0.25: the check spans the entries.
    let (field, msg) = refused("ScalaRdma((prScalaRdmaInitiator: 0.5, prScalaRdmaResponder: 0.25))");
    assert_eq!(field, "applications");
    assert!(msg.contains("0.75"), "{msg}");
    // 1.0 given, nothing left for the two left out: the first of them is named.
    let (field, _) =
        refused("ScalaRdma((prScalaRdmaInitiator: 0.5, prScalaRdmaResponder: 0.5)), ScalaRdma((name: \"b\"))");
    assert_eq!(field, "applications[1].prScalaRdmaInitiator");
    // A ratio of 0 stays invalid.
    let (field, msg) = refused("ScalaRdma((prScalaRdmaInitiator: 0)), ScalaRdma((name: \"b\"))");
    assert_eq!(field, "applications[0].prScalaRdmaInitiator");
    assert!(msg.contains("a ratio of 0"), "{msg}");
}

/// A scenario on a 2-host star (400 Gbps, the default 1 us links and switch) with one `Flows`
/// entry, written into `dir` with `matrix` beside it when given.
fn flows_scenario(dir: &ScratchDir, flows: &str, matrix: Option<&str>) -> std::path::PathBuf {
    if let Some(text) = matrix {
        std::fs::write(dir.file("m.cm"), text).expect("write the matrix");
    }
    let text = format!(
        "(\n    name: \"flows\",\n    simulation: (RunTime: 0.001),\n    topology: Star(hosts: 2),\n    nic: RoceNic(()),\n    applications: [Flows(({flows}))],\n)\n"
    );
    let path = dir.file("flows.ron");
    std::fs::write(&path, text).expect("write the scenario");
    path
}

#[test]
fn one_flow_on_a_star_completes_at_the_first_principles_figure() {
    let dir = ScratchDir::new("flow-fct");
    // Starts at 0.003 s, after its connection is set up (requests at 0.002 s, ~5 us across).
    let path = flows_scenario(&dir, "flows: [(src: 0, dst: 1, bytes: 250000, start: 0.003)]", None);
    let l = rdmasim_tests::load(&path, &[]);
    let (out, run) = run_loaded(&l, "flow-fct");
    let fct = Csv::read(&run.file("flows-flow-fct-0.csv"));
    assert_eq!(
        fct.header,
        [
            "flow_id",
            "src",
            "dst",
            "bytes",
            "start_time_sec",
            "finish_time_sec",
            "fct_usec"
        ]
    );
    assert_eq!(fct.rows.len(), 1);
    assert_eq!(out.summary.wqes_completed, 1);

    // First principles, with the defaults (s(b): b bytes at 400 Gbps, 20 ps a byte; p(b): at
    // the PCIe rate; L: the PCIe latency; D: the 1 us link; F: the switch's forwarding):
    let nic = RoceNicConfig::default();
    let pcie: PcieConfig = nic.Pcie.clone();
    let f = SwitchConfig::default().ForwardingLatency.0;
    let d = engine::SimTime::from_us(1);
    let s = |b: u64| nic.PortRate.serialization_time(b);
    let p = |b: u64| pcie.Rate.serialization_time(b);
    let l_pcie = pcie.Latency.0;
    let tlp = |payload: u64, max: u64| payload + payload.div_ceil(max).max(1) * pcie.TlpOverheadBytes.0;
    // Wire bytes: ceil(250,000 / 4,096) = 62 packets (61 of 4,096 B, one of 144 B), each with
    // 58 B of headers (Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4): 250,000 + 62 x 58 = 253,596.
    let (mss, header) = (nic.Mss.0, nic.HeaderBytes.0);
    let packets = 250_000u64.div_ceil(mss);
    assert_eq!((mss, header, packets), (4096, 58, 62));
    let wire = 250_000 + packets * header;
    assert_eq!(wire, 253_596);
    // Doorbell: 64 + 28 = 92 B in one TLP host to NIC, then L.
    let doorbell = p(tlp(92, pcie.MaxPayloadSize.0)) + l_pcie;
    // Fetch of the first packet: its read requests NIC to host (headers only), L, its
    // completions host to NIC, L; the later packets' fetches hide behind transmission.
    let requests = mss.div_ceil(pcie.MaxReadRequestSize.0);
    let fetch = p(requests * pcie.TlpOverheadBytes.0) + l_pcie + p(tlp(mss, pcie.MaxPayloadSize.0)) + l_pcie;
    // Network: the first frame to the switch, D + F, then the switch's port sends all 253,596 B
    // back to back (5,071,920 ps), then D.
    let network = s(mss + header) + d + f + s(wire) + d;
    assert_eq!(s(wire), engine::SimTime(5_071_920));
    // Completion waits for the ACK (62 B) back across the star: s + D + F + s + D.
    let ack_bytes = models::wire::ROCE_ACK_BYTES as u64;
    let ack = s(ack_bytes) + d + f + s(ack_bytes) + d;
    let expected = doorbell + fetch + network + ack;
    // 251,842 + 574,160 + 7,655,000 + 2,502,480 ps = 10.983482 us.
    assert_eq!(expected, engine::SimTime(10_983_482));
    let row = &fct.rows[0];
    assert_eq!(&row[..4], ["1", "0", "1", "250000"]);
    let start = ps(&fct, 0, "start_time_sec");
    let finish = ps(&fct, 0, "finish_time_sec");
    assert_eq!(start, 3_000_000_000);
    assert_eq!(finish - start, expected.0, "FCT to the picosecond");
    assert_eq!(ps(&fct, 0, "fct_usec"), expected.0);
}

/// htsim's 16-host permutation (`scenarios/perm.cm`, 8 never-ending flows) with every flow
/// made finite: `size 0` becomes `size 2000000`.
fn finite_permutation() -> String {
    std::fs::read_to_string(scenario_path("perm.cm"))
        .expect("perm.cm")
        .replace("size 0", "size 2000000")
}

#[test]
fn the_htsim_permutation_writes_one_fct_row_per_flow() {
    let dir = ScratchDir::new("perm");
    std::fs::write(dir.file("perm.cm"), finite_permutation()).expect("write the matrix");
    let text = std::fs::read_to_string(scenario_path("flows-permutation.ron")).expect("the shipped scenario");
    std::fs::write(dir.file("perm.ron"), text).expect("write the scenario");
    let l = rdmasim_tests::load(&dir.file("perm.ron"), &["simulation.RunTime=0.001"]);
    assert_eq!(l.plan.connections.len(), 8);
    let (out, run) = run_loaded(&l, "perm");
    let fct = Csv::read(&run.file("flows-permutation-flow-fct-0.csv"));
    assert_eq!(fct.rows.len(), 8, "one row per flow");
    let mut ids: Vec<u64> = fct.column("flow_id").iter().map(|s| s.parse().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=8).collect::<Vec<u64>>());
    for k in 0..8 {
        let (src, dst): (u32, u32) = (fct.rows[k][1].parse().unwrap(), fct.rows[k][2].parse().unwrap());
        assert_eq!(dst, src + 8, "the permutation sends i to i + 8");
        // 2 MB is 489 packets (2,028,362 B on the wire, 40.6 us at 400 Gbps): no flow can beat
        // that, and on disjoint paths none should take more than twice it.
        let fct_ps = ps(&fct, k, "fct_usec");
        assert!(fct_ps > 40_567_240 && fct_ps < 2 * 60_000_000, "flow {k}: {fct_ps} ps");
    }
    assert_eq!(out.summary.wqes_completed, 8);

    // The shipped matrix's flows never end: no row, but data flows until the stop. Four flows
    // leave each pair of leaves over 4 spines by ECMP hash, so two may share an uplink (about
    // 195 Gbps each); a flow alone on its path runs at 16 MiB WRITEs back to back, less one
    // round trip between WRITEs (~380 Gbps).
    let l = rdmasim_tests::load(&scenario_path("flows-permutation.ron"), &["simulation.RunTime=0.0005"]);
    let (out, run) = run_loaded(&l, "perm-inf");
    assert_eq!(Csv::read(&run.file("flows-permutation-flow-fct-0.csv")).rows.len(), 0);
    assert_eq!(out.summary.pairs.len(), 8);
    for p in &out.summary.pairs {
        assert!(p.gbps > 150.0 && p.gbps < 394.5, "{p:?}");
    }
}

#[test]
fn scala_rdma_and_flows_share_the_nic_contract() {
    // The Scala RDMA application on its own half and half; a flow between two of its hosts on
    // top. Each application's events reach its own handlers.
    let l = load_str(
        "mixed.ron",
        &with_apps("ScalaRdma(()), Flows((flows: [(src: 0, dst: 15, bytes: \"1MB\", start: 0.003)]))"),
        &["simulation.RunTime=0.0002"],
    );
    assert_eq!(l.plan.connections.len(), 9);
    assert_eq!(l.plan.connections[8].application_name, "flows-flow-1");
    let (out, run) = run_loaded(&l, "mixed");
    assert!(Csv::read(&run.file("apps-rdma-perf-0.csv")).rows.len() > 8);
    assert_eq!(Csv::read(&run.file("apps-flow-fct-0.csv")).rows.len(), 1);
    assert!(out.summary.wqes_completed > 9);
}

#[test]
fn bad_flows_are_refused_naming_the_file_line_and_field() {
    let refused = |flows: &str, matrix: Option<&str>| {
        let dir = ScratchDir::new("bad-flows");
        let path = flows_scenario(&dir, flows, matrix);
        let e = rdmasim::scenario::load_path(&path, &[]).expect_err(flows);
        (e.field.clone().unwrap_or_default(), e.message.clone())
    };
    let (field, msg) = refused("flows: [(src: 0, dst: 2, bytes: 1)]", None);
    assert_eq!(field, "applications[0].flows[0].dst");
    assert!(
        msg.contains("host 2 does not exist") && msg.contains("2 hosts"),
        "{msg}"
    );
    let (field, msg) = refused("flows: [(src: 1, dst: 1, bytes: 1)]", None);
    assert_eq!(field, "applications[0].flows[0].dst");
    assert!(msg.contains("to itself"), "{msg}");
    let (field, _) = refused("", None);
    assert_eq!(field, "applications[0].flows");
    let (field, msg) = refused("matrix: \"missing.cm\"", None);
    assert_eq!(field, "applications[0].matrix");
    assert!(msg.contains("cannot read") && msg.contains("missing.cm"), "{msg}");
    let (field, msg) = refused(
        "matrix: \"m.cm\"",
        Some("Nodes 2\nConnections 1\n0->1 id 1 begin 0 size 5\n"),
    );
    assert_eq!(field, "applications[0].matrix");
    assert!(msg.contains("m.cm: line 3: unknown key `begin`"), "{msg}");
    let (field, msg) = refused(
        "matrix: \"m.cm\"",
        Some("Nodes 4\nConnections 1\n0->3 id 1 start 0 size 5\n"),
    );
    assert_eq!(field, "applications[0].matrix");
    assert!(msg.contains("flow id 1: host 3 does not exist"), "{msg}");
    let (field, _) = refused(
        "flows: [(src: 0, dst: 1, bytes: 1)], matrix: \"m.cm\"",
        Some("Nodes 2\nConnections 0\n"),
    );
    assert_eq!(field, "applications[0].matrix");
    let (field, msg) = refused("flows: [(src: 0, dst: 1, bytes: \"1 parsec\")]", None);
    assert!(field.starts_with("applications[0].flows[0]"), "{field}: {msg}");
}

#[test]
fn the_matrix_file_is_part_of_the_scenario_hash() {
    let dir = ScratchDir::new("matrix-hash");
    let matrix = |size: u64| format!("Nodes 2\nConnections 1\n0->1 id 1 start 3000 size {size}\n");
    let path = flows_scenario(&dir, "matrix: \"m.cm\"", Some(&matrix(250_000)));
    let first = rdmasim_tests::load(&path, &[]).hash;
    assert_eq!(
        rdmasim_tests::load(&path, &[]).hash,
        first,
        "the same inputs, the same hash"
    );
    // The same scenario text over another matrix (the flow one byte longer) is another scenario.
    flows_scenario(&dir, "matrix: \"m.cm\"", Some(&matrix(250_001)));
    let second = rdmasim_tests::load(&path, &[]).hash;
    assert_ne!(second, first, "the matrix's text is hashed with the scenario's");
}
