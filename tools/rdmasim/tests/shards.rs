//! Shards give the results one world gives: the rows of every record, sorted, are byte for byte
//! the same at 1, 2, 3 and 4 shards (the beacon, which each shard writes for its own part as the
//! spec says, adds up over shards to the one-world row), on the default scenario, a fat tree and
//! the 15:1 incast. `StartType: sequential` is the exception the spec makes, with its own rule.

mod common;

use common::{TempDir, scenario, workspace};
use engine::clock::WallClock;
use engine::records::Output;
use rdmasim::RunSetup;
use rdmasim::scenario::{Loaded, load_path};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicUsize;

fn load(name: &str, overrides: &[&str]) -> Loaded {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    load_path(&scenario(name), &o).unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

fn setup(dir: &TempDir) -> RunSetup {
    RunSetup {
        output: Output::Folder(dir.path().into()),
        name: None,
        clock: WallClock::fixed_at(0),
    }
}

/// Runs `loaded` in `shards` shards into a fresh folder.
fn run(loaded: &Loaded, shards: u32) -> (TempDir, rdmasim::summary::Summary) {
    // Tests run in parallel in one process: a folder per test and shard count.
    let dir = TempDir::new(&format!("{}-{:016x}-{shards}", loaded.scenario.name, loaded.hash));
    let summary = if shards == 1 {
        rdmasim::run(loaded, &setup(&dir), None).expect("run").summary
    } else {
        let p = rdmasim::shards::partition(loaded, shards).expect("partition");
        rdmasim::shards::run_sharded(loaded, &setup(&dir), p, None, &AtomicUsize::new(0))
            .expect("sharded run")
            .summary
    };
    (dir, summary)
}

/// Every file of `record` in `dir` (`{simulation}-{record}-{shard}.csv`), shard by shard: the
/// header and the rows of each.
fn shard_files(dir: &TempDir, sim: &str, record: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for shard in 0.. {
        let Ok(text) =
            std::fs::read_to_string(std::path::Path::new(dir.path()).join(format!("{sim}-{record}-{shard}.csv")))
        else {
            break;
        };
        let mut lines = text.lines().map(str::to_string);
        let header = lines.next().expect("a header");
        out.push((header, lines.collect()));
    }
    out
}

/// The rows of `record` over all shards, sorted.
fn union(dir: &TempDir, sim: &str, record: &str) -> Vec<String> {
    let mut rows: Vec<String> = shard_files(dir, sim, record).into_iter().flat_map(|(_, r)| r).collect();
    rows.sort();
    rows
}

/// Each beacon column after the first three (job, wall time, simulated time) summed over the
/// shards, by simulated time.
fn beacon_sums(dir: &TempDir, sim: &str) -> BTreeMap<String, Vec<u64>> {
    let mut sums: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (_, rows) in shard_files(dir, sim, "beacon") {
        for row in rows {
            let cells: Vec<&str> = row.split(',').collect();
            let s = sums
                .entry(cells[2].to_string())
                .or_insert_with(|| vec![0; cells.len() - 3]);
            for (acc, v) in s.iter_mut().zip(&cells[3..]) {
                *acc += v.parse::<u64>().expect("a count");
            }
        }
    }
    sums
}

fn check_identical(name: &str, sim: &str, overrides: &[&str], records: &[&str]) {
    let loaded = load(name, overrides);
    let (one, whole) = run(&loaded, 1);
    let rows: Vec<Vec<String>> = records.iter().map(|r| union(&one, sim, r)).collect();
    for (record, rows) in records.iter().zip(&rows) {
        assert!(rows.len() > 100, "{name}: only {} {record} rows to compare", rows.len());
    }
    let beacon = beacon_sums(&one, sim);
    for shards in 2..=4 {
        let (dir, summary) = run(&loaded, shards);
        for (record, rows) in records.iter().zip(&rows) {
            let files = shard_files(&dir, sim, record);
            assert_eq!(files.len(), shards as usize, "{name}: one {record} file per shard");
            assert!(files.iter().all(|(h, _)| *h == shard_files(&one, sim, record)[0].0));
            assert!(
                union(&dir, sim, record) == *rows,
                "{name}: {record} rows differ at {shards} shards"
            );
        }
        assert_eq!(
            beacon_sums(&dir, sim),
            beacon,
            "{name}: beacon sums differ at {shards} shards"
        );
        assert_eq!(
            (summary.events, summary.data_packets, summary.wqes_completed),
            (whole.events, whole.data_packets, whole.wqes_completed),
            "{name}: {shards} shards"
        );
        assert!(
            summary.conservation.ok(),
            "{name}: {:?}",
            summary.conservation.violations
        );
        assert_eq!(summary.conservation.totals(), whole.conservation.totals());
        assert_eq!(
            summary.pairs.iter().map(|p| (p.wqes, p.bytes)).collect::<Vec<_>>(),
            whole.pairs.iter().map(|p| (p.wqes, p.bytes)).collect::<Vec<_>>()
        );
    }
}

#[test]
fn the_default_scenario_gives_the_same_rows_at_any_shard_count() {
    check_identical("default", "default", &["simulation.RunTime=0.001"], &["rdma-perf"]);
}

#[test]
fn a_fat_tree_gives_the_same_rows_at_any_shard_count() {
    check_identical(
        "default",
        "default",
        &["simulation.RunTime=0.0005", "topology=FatTree(k: 4)"],
        &["rdma-perf"],
    );
}

#[test]
fn the_incast_gives_the_same_rows_at_any_shard_count() {
    // 15 Initiators into one Responder: PFC pauses cross the shards' boundaries too.
    check_identical(
        "spec-ratios-0.9-0.1",
        "ratios-0.9-0.1",
        &["simulation.RunTime=0.002"],
        &["rdma-perf"],
    );
}

#[test]
fn telemetry_gives_the_same_rows_at_any_shard_count() {
    // The incast under a pacer: queue pairs' rates and the queues they build, sampled every
    // 5 us, each shard sampling its own hosts and switches.
    check_identical(
        "spec-ratios-0.9-0.1",
        "ratios-0.9-0.1",
        &[
            "simulation.RunTime=0.0003",
            "nic=RoceNic((CongestionControl: FixedRate((Rate: \"50Gbps\"))))",
            "telemetry=(Interval: \"5us\", CcRate: true, QueueDepth: true)",
        ],
        &["rdma-perf", "cc-rate", "queue-depth"],
    );
}

#[test]
fn sequential_starts_are_spaced_per_shard() {
    // The spec: `sequential` spaces each process's own connections evenly across the client
    // start window. With 8 connections on 2 shards of 4 Initiators each, each shard's four
    // requests go out at window_start + k x window / 4, k = 0..3.
    let loaded = load(
        "default",
        &["simulation.RunTime=0.0005", "applications[0].StartType=sequential"],
    );
    let dir = TempDir::new("sequential");
    let p = rdmasim::shards::partition(&loaded, 2).expect("partition");
    let out = rdmasim::shards::run_sharded(&loaded, &setup(&dir), p, None, &AtomicUsize::new(0)).expect("run");
    let t = loaded.timeline;
    let window = t.client_window_end.ps() - t.client_window_start.ps();
    for (me, mut app) in out.apps.into_iter().enumerate() {
        let plan = app.world.resource::<models::shard::ShardPlan>().clone();
        let mut q = app.world.query::<&scala_rdma::runtime::InitiatorInstance>();
        let mut times: Vec<u64> = q
            .iter(&app.world)
            .filter(|i| plan.owns(i.node))
            .map(|i| i.requested_at.ps())
            .collect();
        times.sort_unstable();
        let n = times.len() as u64;
        assert_eq!(n, 4, "shard {me} runs four Initiators");
        let expected: Vec<u64> = (0..n).map(|k| t.client_window_start.ps() + window * k / n).collect();
        assert_eq!(times, expected, "shard {me}");
    }
}

#[test]
fn a_link_without_delay_between_shards_is_refused_by_name() {
    let out = common::rdmasim(&[
        "run",
        workspace().join("scenarios/default.ron").to_str().expect("utf-8"),
        "--set",
        "topology=LeafSpine(leaves: 2, spines: 1, hosts_per_leaf: 8, spine_link: Some((delay: Some(\"0s\"))))",
        "--shards",
        "2",
        "--out",
        TempDir::new("zero-delay").path(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--shards 2") && err.contains("spine0") && err.contains("zero delay"),
        "{err}"
    );
}

#[test]
fn the_k64_scale_scenario_loads_and_splits_by_pod() {
    // 65,536 hosts: 64 ports a switch need the raised shared buffer to pass the loader's
    // lossless-headroom check; two shards get 32 pods, 32,768 hosts, each.
    let loaded = load_path(&workspace().join("scenarios/scale/fat-tree-k64.ron"), &[]).expect("loads");
    assert_eq!(loaded.topology.num_hosts, 65_536);
    let p = rdmasim::shards::partition(&loaded, 2).expect("partition");
    assert_eq!(p.hosts_per_shard(&loaded.topology), vec![32_768, 32_768]);
    assert_eq!(p.lookahead, engine::SimTime::from_us(1));
}

#[test]
fn a_partition_given_in_the_scenario_is_the_one_run() {
    // Three leaves and every spine on shard 0, leaf3 alone on shard 1: 12 hosts and 4.
    let given = r#"partition=[["leaf0", "leaf1", "leaf2", "spine0", "spine1", "spine2", "spine3"], ["leaf3"]]"#;
    let loaded = load("default", &["simulation.RunTime=0.0005", given]);
    let p = rdmasim::shards::partition(&loaded, 2).expect("partition");
    assert_eq!(p.hosts_per_shard(&loaded.topology), vec![12, 4]);
    let e = rdmasim::shards::partition(&loaded, 3).unwrap_err();
    assert!(e.contains("the scenario's partition has 2 shards"), "{e}");
    let (one, whole) = run(&loaded, 1);
    let (two, split) = run(&loaded, 2);
    let rows = union(&one, "default", "rdma-perf");
    assert!(rows.len() > 100);
    assert!(
        union(&two, "default", "rdma-perf") == rows,
        "rows differ under the given partition"
    );
    assert_eq!(split.events, whole.events);
    // Each shard wrote the rows of its own Initiators: leaf3 (hosts 12-15) has only Responders.
    let files = shard_files(&two, "default", "rdma-perf");
    assert_eq!((files[0].1.len(), files[1].1.len()), (rows.len(), 0));
    // A name that is not a switch is refused at load, naming the entry.
    let default = common::default_ron();
    let msg = common::refused(&[
        "run",
        default.to_str().unwrap(),
        "--set",
        r#"partition=[["leaf0", "spine9"]]"#,
    ]);
    assert!(msg.contains("partition[0][1]") && msg.contains("`spine9`"), "{msg}");
}
