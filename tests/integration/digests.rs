//! Every shipped scenario's records are byte for byte what they were when the digests were
//! recorded: a refactor that claims to change no result proves it here. A change that is meant
//! to change results re-records them (`RDMASIM_RECORD_DIGESTS=1 cargo test -p rdmasim-tests
//! --test integration digests`) and says in its commit which scenarios moved and why.
//!
//! The manifest is left out (it holds the wall time); every other file a run writes is in.

use rdmasim_tests::{all_scenarios, run_scenario, workspace_root};
use std::collections::BTreeMap;

/// The recorded digests: `scenario file fnv1a-64`, one line per output file.
const DIGESTS: &str = "tests/integration/digests.txt";

/// How long each scenario runs: long enough for every WQE state and, for faults-loss, through
/// its link-down (0.1 s to 0.2 s); short enough for CI.
fn run_time(scenario: &str) -> &'static str {
    match scenario {
        "faults-loss" => "simulation.RunTime=0.21",
        _ => "simulation.RunTime=0.004",
    }
}

fn digests_now() -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    for path in all_scenarios() {
        let stem = path.file_stem().expect("a file name").to_string_lossy().into_owned();
        let (_outcome, dir) = run_scenario(&path, &[run_time(&stem)]);
        for (name, bytes) in dir.records() {
            out.insert((stem.clone(), name), format!("{:016x}", fnv1a(&bytes)));
        }
    }
    out
}

/// FNV-1a, 64 bits: enough to tell a changed file from an unchanged one.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

#[test]
fn shipped_scenarios_write_the_recorded_records() {
    let now = digests_now();
    let path = workspace_root().join(DIGESTS);
    if std::env::var_os("RDMASIM_RECORD_DIGESTS").is_some() {
        let text: String = now.iter().map(|((s, f), d)| format!("{s} {f} {d}\n")).collect();
        std::fs::write(&path, text).expect("write the digests");
        return;
    }
    let recorded: BTreeMap<(String, String), String> = std::fs::read_to_string(&path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some(((w.next()?.into(), w.next()?.into()), w.next()?.into()))
        })
        .collect();
    let differ: Vec<String> = now
        .iter()
        .filter(|(k, d)| recorded.get(*k) != Some(*d))
        .map(|((s, f), d)| format!("{s} {f}: {d}, recorded {:?}", recorded.get(&(s.clone(), f.clone()))))
        .chain(
            recorded
                .keys()
                .filter(|k| !now.contains_key(*k))
                .map(|(s, f)| format!("{s} {f}: no longer written")),
        )
        .collect();
    assert!(
        differ.is_empty(),
        "records differ from {DIGESTS} (re-record with RDMASIM_RECORD_DIGESTS=1 only for a change meant to move results):\n{}",
        differ.join("\n")
    );
}
