//! `mpirun -n N rdmasim run` (feature `mpi`): one shard per rank, the same rows as one world at
//! 2, 3 and 4 ranks.
//! Run by `.ci/run` with `cargo test -p rdmasim --features mpi --test mpi`, after it installs
//! Open MPI.
#![cfg(feature = "mpi")]

mod common;

use common::{TempDir, scenario};
use std::path::Path;
use std::process::Command;

/// Runs scenario `name` with `sets` into `dir`, under `mpirun -n ranks` (or alone).
fn run(name: &str, ranks: u32, dir: &TempDir, sets: &[&str]) {
    let bin = env!("CARGO_BIN_EXE_rdmasim");
    let scen = scenario(name);
    let mut args: Vec<String> = vec!["run".into(), scen.display().to_string(), "--quiet".into()];
    for s in sets {
        args.extend(["--set".into(), s.to_string()]);
    }
    args.extend(["--out".into(), dir.path().into()]);
    let mut cmd = if ranks == 1 {
        Command::new(bin)
    } else {
        let mut c = Command::new("mpirun");
        c.args(["--allow-run-as-root", "--oversubscribe", "-n", &ranks.to_string(), bin]);
        c
    };
    let out = cmd
        .args(&args)
        .env("SOURCE_DATE_EPOCH", "0")
        .output()
        .expect("mpirun (Open MPI) on PATH");
    assert!(
        out.status.success(),
        "{ranks} ranks: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if ranks > 1 {
        // Rank 0 alone prints the whole run's summary, naming every rank's files.
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(text.matches("simulation ").count(), 1, "{text}");
        assert!(text.contains(&format!("-rdma-perf-{}.csv", ranks - 1)), "{text}");
    }
}

fn rows(dir: &TempDir, sim: &str, record: &str) -> (usize, Vec<String>) {
    let mut rows = Vec::new();
    let mut files = 0;
    while let Ok(t) = std::fs::read_to_string(Path::new(dir.path()).join(format!("{sim}-{record}-{files}.csv"))) {
        rows.extend(t.lines().skip(1).map(str::to_string));
        files += 1;
    }
    rows.sort();
    (files, rows)
}

/// Scenario `name` (simulation `sim`) under 2, 3 and 4 ranks against one world.
fn check(name: &str, sim: &str, sets: &[&str], tag: &str) {
    let one = TempDir::new(&format!("mpi-{tag}-1"));
    run(name, 1, &one, sets);
    let (_, expected) = rows(&one, sim, "rdma-perf");
    assert!(expected.len() > 100, "only {} rows", expected.len());
    for ranks in [2, 3, 4] {
        let dir = TempDir::new(&format!("mpi-{tag}-{ranks}"));
        run(name, ranks, &dir, sets);
        let (files, got) = rows(&dir, sim, "rdma-perf");
        assert_eq!(files, ranks as usize, "one rdma-perf file per rank");
        assert!(got == expected, "{tag}: rdma-perf rows differ at {ranks} ranks");
    }
}

#[test]
fn ranks_give_the_rows_of_one_world_on_the_default_scenario() {
    check("default", "default", &["simulation.RunTime=0.001"], "default");
}

#[test]
fn ranks_give_the_rows_of_one_world_on_a_fat_tree() {
    check(
        "default",
        "default",
        &["simulation.RunTime=0.0005", "topology=FatTree(k: 4)"],
        "fat-tree",
    );
}

#[test]
fn ranks_give_the_rows_of_one_world_in_the_incast() {
    check(
        "spec-ratios-0.9-0.1",
        "ratios-0.9-0.1",
        &["simulation.RunTime=0.002"],
        "incast",
    );
}
