//! Applications are combined the way the spec says: the even split over every entry left out,
//! and one shared host budget.

use rdmasim::scenario::load_text;
use rdmasim_tests::{Csv, load_str, run_loaded};
use std::collections::BTreeSet;

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
