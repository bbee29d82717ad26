//! The spec's worked examples, end to end through the scenario loader: host counts and pairs on
//! 16 hosts for the ratios 0.5/0.5, 0.9/0.1 and 0.25/0.75, and the default timeline (requests at
//! 0.002 s, first WQEs at 0.003 s), plus the two other start types.

use bevy_ecs::prelude::*;
use engine::SimTime;
use rdmasim_tests::{Csv, PS_PER_SEC, load, load_str, run_loaded, scenario_path, sec_ps};
use scala_rdma::{InitiatorInstance, Plan};
use std::collections::{BTreeMap, BTreeSet};

/// The default scenario's text: the examples change only the ratios.
fn default_text() -> String {
    std::fs::read_to_string(scenario_path("default.ron")).expect("default.ron")
}

fn plan_for(initiator: f64, responder: f64) -> Plan {
    let i = format!("applications[0].prScalaRdmaInitiator={initiator}");
    let r = format!("applications[0].prScalaRdmaResponder={responder}");
    load_str("default.ron", &default_text(), &[&i, &r]).plan
}

fn hosts_of(plan: &Plan, component: &str) -> BTreeSet<u32> {
    plan.hosts
        .iter()
        .filter(|h| h.component == component)
        .map(|h| h.node_id)
        .collect()
}

/// How many pairs each node appears in, as Initiator (`true`) or Responder (`false`).
fn pair_counts(plan: &Plan, initiator: bool) -> BTreeMap<u32, usize> {
    let mut m = BTreeMap::new();
    for p in &plan.pairs {
        *m.entry(if initiator { p.initiator } else { p.responder }).or_default() += 1;
    }
    m
}

/// What every plan on 16 hosts must satisfy whatever the ratios: each of the 16 hosts runs
/// exactly one component, every pair joins an Initiator host to a Responder host (so never a
/// host to itself), every component appears in some pair, and one connection per pair
/// (`NumConnections` 1).
fn check_common(plan: &Plan) {
    let ids: Vec<u32> = plan.hosts.iter().map(|h| h.node_id).collect();
    assert_eq!(ids, (0..16).collect::<Vec<u32>>(), "one component per host, every host");
    let (ini, res) = (hosts_of(plan, "initiator"), hosts_of(plan, "responder"));
    assert!(ini.is_disjoint(&res));
    for p in &plan.pairs {
        assert!(ini.contains(&p.initiator) && res.contains(&p.responder), "{p:?}");
    }
    assert_eq!(pair_counts(plan, true).keys().copied().collect::<BTreeSet<_>>(), ini);
    assert_eq!(pair_counts(plan, false).keys().copied().collect::<BTreeSet<_>>(), res);
    assert_eq!(plan.connections.len(), plan.pairs.len());
}

#[test]
fn ratios_half_and_half_give_8_distinct_pairs() {
    // floor(0.5 x 16) = 8 each, 8 + 8 = 16: no top-up. Step 1 of pairing: each Initiator takes
    // a Responder nobody has yet; 8 Initiators, 8 Responders: 8 pairs, each host in exactly one.
    let plan = plan_for(0.5, 0.5);
    check_common(&plan);
    assert_eq!(hosts_of(&plan, "initiator").len(), 8);
    assert_eq!(hosts_of(&plan, "responder").len(), 8);
    assert_eq!(plan.pairs.len(), 8);
    assert!(pair_counts(&plan, true).values().all(|&n| n == 1));
    assert!(pair_counts(&plan, false).values().all(|&n| n == 1));
    // The default scenario file is this example.
    assert_eq!(load(&scenario_path("default.ron"), &[]).plan, plan);
}

#[test]
fn ratios_nine_to_one_top_up_the_initiator() {
    // floor(14.4) = 14 Initiators, floor(1.6) = 1 Responder: 15 hosts. Top-up in turn from the
    // Initiator: 14/16 = 0.875 < 0.9, so it takes the 16th host: 15 and 1. All 15 Initiators
    // pair with the one Responder (step 2): 15 pairs.
    let plan = plan_for(0.9, 0.1);
    check_common(&plan);
    assert_eq!(hosts_of(&plan, "initiator").len(), 15);
    assert_eq!(hosts_of(&plan, "responder").len(), 1);
    assert_eq!(plan.pairs.len(), 15);
    assert!(pair_counts(&plan, true).values().all(|&n| n == 1));
    assert_eq!(pair_counts(&plan, false).values().copied().collect::<Vec<_>>(), [15]);
    assert_eq!(load(&scenario_path("spec-ratios-0.9-0.1.ron"), &[]).plan, plan);
}

#[test]
fn ratios_quarter_to_three_quarters_give_every_responder_one_initiator() {
    // floor(4) = 4 Initiators, floor(12) = 12 Responders, no top-up. Step 1: 4 pairs with
    // distinct Responders; step 3: each of the 8 left gets a random Initiator: 12 pairs, each
    // Responder exactly once, the Initiators 3 Responders on average (12 / 4), each at least 1.
    let plan = plan_for(0.25, 0.75);
    check_common(&plan);
    assert_eq!(hosts_of(&plan, "initiator").len(), 4);
    assert_eq!(hosts_of(&plan, "responder").len(), 12);
    assert_eq!(plan.pairs.len(), 12);
    assert!(pair_counts(&plan, false).values().all(|&n| n == 1));
    let per_initiator = pair_counts(&plan, true);
    assert_eq!(per_initiator.values().sum::<usize>(), 12);
    assert!(per_initiator.values().all(|&n| n >= 1));
    assert_eq!(load(&scenario_path("spec-ratios-0.25-0.75.ron"), &[]).plan, plan);
}

/// The default timeline with a short `RunTime`: responders 0.001 s, client window 0.002-0.003 s.
const SHORT: &str = "simulation.RunTime=0.0005";
const WINDOW_START: u64 = 2 * PS_PER_SEC / 1000;
const WINDOW_END: u64 = 3 * PS_PER_SEC / 1000;

fn instances(world: &mut World) -> Vec<InitiatorInstance> {
    let mut q = world.query::<&InitiatorInstance>();
    let mut v: Vec<InitiatorInstance> = q.iter(world).cloned().collect();
    v.sort_by_key(|i| i.connection);
    v
}

/// The first WQE's doorbell time of each connection, from rdma-perf (`wqe_id` 1).
fn first_posts(perf: &Csv) -> BTreeMap<String, u64> {
    let (name, id, start) = (
        perf.col("application_name"),
        perf.col("wqe_id"),
        perf.col("start_time_sec"),
    );
    perf.rows
        .iter()
        .filter(|r| r[id] == "1")
        .map(|r| (r[name].clone(), sec_ps(&r[start])))
        .collect()
}

#[test]
fn default_timeline_first_wqes_at_three_ms() {
    // StartType simultaneous: every request at the window's start, 0.002 s. Setup is three
    // messages over at most 4 links of 1 us each way, microseconds in all, so every connection
    // is set up long before the window ends and posts its first WQEs at exactly 0.003 s.
    let loaded = load(&scenario_path("default.ron"), &[SHORT]);
    let (mut outcome, dir) = run_loaded(&loaded, "timeline");
    let perf = Csv::read(&dir.file("default-rdma-perf-0.csv"));
    let starts: Vec<u64> = perf.column("start_time_sec").into_iter().map(sec_ps).collect();
    assert!(!starts.is_empty());
    assert_eq!(starts.iter().min(), Some(&WINDOW_END));
    assert!(starts.iter().all(|&s| s >= WINDOW_END));
    // The spec's text form of the instant, as printed.
    assert!(perf.column("start_time_sec").contains(&"0.003000000000"));
    let firsts = first_posts(&perf);
    assert_eq!(firsts.len(), 8, "every connection completed its first WQE");
    assert!(firsts.values().all(|&t| t == WINDOW_END));
    for i in instances(&mut outcome.app.world) {
        assert_eq!(i.requested_at, SimTime(WINDOW_START), "{}", i.name);
        let est = i.established_at.expect("set up").0;
        assert!(
            est > WINDOW_START && est < WINDOW_START + PS_PER_SEC / 10_000,
            "{}: {est}",
            i.name
        );
    }
}

#[test]
fn uniform_start_draws_requests_inside_the_window() {
    // Each connection's request at its own uniform time in [0.002, 0.003) s; the draws are
    // independent, so 8 of them are not all equal. Posting starts at the window's end, or at
    // the end of setup if that is later (a draw in the window's last microseconds).
    let loaded = load(
        &scenario_path("default.ron"),
        &[SHORT, "applications[0].StartType=uniform"],
    );
    let (mut outcome, dir) = run_loaded(&loaded, "uniform");
    let insts = instances(&mut outcome.app.world);
    let times: BTreeSet<SimTime> = insts.iter().map(|i| i.requested_at).collect();
    assert!(times.len() > 1, "uniform draws all equal: {times:?}");
    let firsts = first_posts(&Csv::read(&dir.file("default-rdma-perf-0.csv")));
    for i in &insts {
        let t = i.requested_at.0;
        assert!((WINDOW_START..WINDOW_END).contains(&t), "{}: {t}", i.name);
        let est = i.established_at.expect("set up").0;
        assert!(est > t);
        assert_eq!(firsts[&i.name], WINDOW_END.max(est), "{}", i.name);
    }
}

#[test]
fn sequential_start_spaces_requests_evenly() {
    // 8 connections across the 0.001 s window, the first at its start: connection k at
    // 0.002 s + k x 0.001 / 8 s = 0.002 s + k x 125 us, exactly (1e9 ps / 8 divides).
    let loaded = load(
        &scenario_path("default.ron"),
        &[SHORT, "applications[0].StartType=sequential"],
    );
    let (mut outcome, _dir) = run_loaded(&loaded, "sequential");
    let insts = instances(&mut outcome.app.world);
    assert_eq!(insts.len(), 8);
    for (k, i) in insts.iter().enumerate() {
        assert_eq!(
            i.requested_at,
            SimTime(WINDOW_START + k as u64 * 125_000_000),
            "{}",
            i.name
        );
    }
}
