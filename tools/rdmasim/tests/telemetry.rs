//! The telemetry records: `cc-rate` rows for every queue pair with a controller at every sample,
//! `queue-depth` rows for every switch queue holding bytes (and one 0 when it empties), and
//! neither file without a `telemetry` section.

mod common;

use common::{TempDir, rdmasim, scenario};
use rdmasim::scenario::load_path;
use std::collections::BTreeMap;
use std::path::Path;

fn rows(dir: &TempDir, file: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(Path::new(dir.path()).join(file)).expect(file);
    text.lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn run(tag: &str, name: &str, sets: &[&str]) -> TempDir {
    let dir = TempDir::new(tag);
    let file = scenario(name);
    let mut args = vec!["run", file.to_str().unwrap(), "--quiet", "--out", dir.path()];
    for s in sets {
        args.extend(["--set", s]);
    }
    let out = rdmasim(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir
}

#[test]
fn cc_rate_has_every_paced_queue_pair_at_every_sample() {
    let dir = run(
        "telemetry-cc",
        "default",
        &[
            "simulation.RunTime=0.0002",
            "nic=RoceNic((CongestionControl: FixedRate((Rate: \"100Gbps\"))))",
            "telemetry=(Interval: \"20us\", CcRate: true)",
        ],
    );
    let rows = rows(&dir, "default-cc-rate-0.csv");
    // The 8 Initiators' queue pairs exist from the connection requests at 0.002 s; a sample at
    // that instant runs before them, so the first is at 0.00202 s. The stop time is 0.0062 s
    // (0.001 + 0.001 + 0.001 + 0.002 + 0.0002 + 0.001) and no sample is taken there: the last is
    // at 0.00618 s. (6,180 - 2,020) / 20 + 1 = 209 samples of 8 rows.
    assert_eq!(rows.len(), 209 * 8);
    let mut per_time: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &rows {
        *per_time.entry(r[0].as_str()).or_default() += 1;
        // The pacer's rate, exactly; no window: the field is empty.
        assert_eq!((r[4].as_str(), r[5].as_str()), ("100000000000", ""), "{r:?}");
    }
    assert_eq!(per_time.keys().next().copied(), Some("0.002020000000"));
    assert_eq!(per_time.keys().last().copied(), Some("0.006180000000"));
    assert!(per_time.values().all(|&n| n == 8));
    // A pacer at a quarter of the line rate still keeps data in flight once WQEs flow.
    assert!(rows.iter().any(|r| r[6].parse::<u64>().unwrap() > 0));
    assert!(!Path::new(dir.path()).join("default-queue-depth-0.csv").exists());
}

#[test]
fn queue_depth_shows_the_incast_bottleneck_and_each_queue_emptying() {
    let sets = [
        "simulation.RunTime=0.0003",
        "telemetry=(Interval: \"5us\", QueueDepth: true)",
    ];
    let dir = run("telemetry-qd", "spec-ratios-0.9-0.1", &sets);
    let rows = rows(&dir, "ratios-0.9-0.1-queue-depth-0.csv");
    let perf = std::fs::read_to_string(Path::new(dir.path()).join("ratios-0.9-0.1-rdma-perf-0.csv")).unwrap();
    let responder: u32 = perf
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .nth(13)
        .unwrap()
        .parse()
        .unwrap();
    // The port that sends to the one Responder: 15 Initiators at 400 Gbps share it.
    let loaded = load_path(&scenario("spec-ratios-0.9-0.1"), &[]).unwrap();
    let topo = &loaded.topology;
    let (leaf, port) = topo
        .nodes
        .iter()
        .enumerate()
        .find_map(|(n, node)| {
            let p = node.ports.iter().position(|p| p.peer_node == responder)?;
            (n as u32 != responder).then_some((n as u32, p as u32))
        })
        .unwrap();
    let mut series: BTreeMap<(u32, u32, u32), Vec<(String, u64)>> = BTreeMap::new();
    for r in &rows {
        let key = (r[2].parse().unwrap(), r[3].parse().unwrap(), r[4].parse().unwrap());
        assert_eq!(r[1], topo.nodes[key.0 as usize].name, "the switch's name");
        series
            .entry(key)
            .or_default()
            .push((r[0].clone(), r[5].parse().unwrap()));
    }
    let deepest = |k: &(u32, u32, u32)| series[k].iter().map(|s| s.1).max().unwrap();
    let (bottleneck, _) = series.iter().max_by_key(|(k, _)| deepest(k)).unwrap();
    assert_eq!(
        (bottleneck.0, bottleneck.1),
        (leaf, port),
        "the deepest queue feeds the Responder"
    );
    // Fifteen line-rate senders into one port: far more than one packet (4,154 B) queues there.
    assert!(deepest(bottleneck) > 10 * 4154, "{}", deepest(bottleneck));
    // A 0 row only ever follows a row with bytes: each queue's rows alternate runs of bytes and
    // single zeros, and the samples are 5 us apart.
    for s in series.values() {
        for w in s.windows(2) {
            assert!(w[0].1 > 0 || w[1].1 > 0, "two zero rows in a row: {w:?}");
            assert!(w[0].0 < w[1].0);
        }
    }
}

#[test]
fn without_telemetry_there_is_no_sample_and_no_record() {
    let dir = run("telemetry-off", "default", &["simulation.RunTime=0.0002"]);
    for record in ["cc-rate", "queue-depth"] {
        assert!(!Path::new(dir.path()).join(format!("default-{record}-0.csv")).exists());
    }
}
