//! Inputs at and past the loader's limits (issue #14's fuzz findings): endless or blocking
//! files, bytes that are not UTF-8, integers past u64, a clock past u64 picoseconds. Each is
//! refused with exit code 2 and a message naming the file (and line, column and field when
//! there is text to point into), never a hang, a panic or gigabytes of memory.

mod common;

use common::{TempFile, default_ron, rdmasim, refused};
use std::path::Path;
use std::process::Command;

#[test]
fn endless_devices_are_refused_by_kind_without_reading() {
    // Both never end: reading them whole would eat all memory.
    for dev in ["/dev/zero", "/dev/urandom"] {
        let first = refused(&["validate", dev]);
        assert_eq!(
            first,
            format!("{dev}: the scenario is a character device, not a regular file: write it to a file first")
        );
    }
}

#[test]
fn a_fifo_with_no_writer_is_refused_not_waited_on() {
    let path = std::env::temp_dir().join(format!("rdmasim-limits-fifo-{}", std::process::id()));
    std::fs::remove_file(&path).ok();
    let made = Command::new("mkfifo").arg(&path).status().expect("mkfifo");
    assert!(made.success());
    let p = path.to_str().expect("utf-8");
    let first = refused(&["validate", p]);
    std::fs::remove_file(&path).ok();
    assert!(
        first.starts_with(&format!("{p}: the scenario is a FIFO (named pipe)")),
        "{first}"
    );
}

#[test]
fn a_file_over_16_mib_is_refused_naming_the_limit() {
    let t = TempFile::new("big", b"");
    // Sparse, so the test writes nothing: 16 MiB + 1 byte.
    let f = std::fs::OpenOptions::new().write(true).open(&t.0).expect("open");
    f.set_len(16 * 1024 * 1024 + 1).expect("set_len");
    let first = refused(&["validate", t.path()]);
    assert_eq!(
        first,
        format!(
            "{}: the scenario is larger than the limit of 16777216 bytes (16 MiB)",
            t.path()
        )
    );
}

#[test]
fn bytes_that_are_not_utf8_are_located() {
    // default.ron with byte 0xFF in place of the `d` of `"default"` (line 7, column 12).
    let text = std::fs::read(default_ron()).expect("default.ron");
    let at = text.windows(9).position(|w| w == b"\"default\"").expect("name") + 1;
    let mut bad = text.clone();
    bad[at] = 0xFF;
    let line = 1 + text[..at].iter().filter(|&&b| b == b'\n').count();
    let column = at - text[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
    let t = TempFile::new("utf8", &bad);
    let first = refused(&["validate", t.path()]);
    assert_eq!(
        first,
        format!(
            "{}:{line}:{column}: the scenario is not UTF-8: byte 0xFF here does not start a valid UTF-8 character",
            t.path()
        )
    );
}

/// `validate default.ron --set SET`'s first line, which must name `field`, shown in the argument.
fn refused_set(set: &str, field: &str) -> String {
    let file = default_ron();
    let file = file.to_str().expect("utf-8");
    let first = refused(&["validate", file, "--set", set]);
    assert!(first.starts_with("<--set>:1:"), "{set}: {first}");
    assert!(
        first.contains(&format!(": {field}: ")),
        "{set}: the field is not named: {first}"
    );
    first
}

#[test]
fn integers_past_u64_are_refused_naming_the_field() {
    // 2^64 would pass a check of `<= u64::MAX as f64` (which is 2^64 in f64) and saturate.
    const N: &str = "18446744073709551616";
    for (set, field) in [
        (
            format!("nic=RoceNic((Pcie: (TlpOverheadBytes: {N})))"),
            "nic.Pcie.TlpOverheadBytes",
        ),
        (format!("nic=RoceNic((FetchWindow: {N}))"), "nic.FetchWindow"),
        (format!("switch.LossyQueueLimit={N}"), "switch.LossyQueueLimit"),
        (format!("topology.link_rate={N}"), "topology.link_rate"),
        (format!("nic=RoceNic((Pcie: (Rate: {N})))"), "nic.Pcie.Rate"),
    ] {
        let first = refused_set(&set, field);
        assert!(first.contains("2^64"), "{field}: {first}");
    }
}

#[test]
fn a_timeline_past_the_clock_names_the_field_that_passes_it() {
    // The clock ends at 2^64 - 1 ps = 18,446,744.0737 s. From StartTime 18,446,744 s the
    // default timeline passes it at RunTime: 18,446,744 + 0.001 + 0.001 + 0.002 + 0.5 s.
    let s = |v: &str| format!("simulation.{v}");
    let first = refused_set(&s("StartTime=18446744"), "simulation.RunTime");
    assert!(first.contains("18446744.504 s"), "{first}");
    // 0.08 s of offset alone passes it.
    let file = default_ron();
    let file = file.to_str().expect("utf-8");
    let start = s("StartTime=18446744");
    let zero = ["ClientStartInterval=0", "WarmUp=0", "CoolDown=0"].map(s);
    let mut args = vec!["validate", file, "--set", &start];
    for z in &zero {
        args.extend(["--set", z]);
    }
    let offset = s("ClientStartOffset=0.08");
    let mut with_offset = args.clone();
    with_offset.extend(["--set", &offset]);
    assert!(refused(&with_offset).contains(": simulation.ClientStartOffset: "));
    // Stop at 18,446,744.07 s fits, but with 1 s beacons the tick after the stop (18,446,745 s)
    // does not: the beacon loop would wrap to 0 and tick forever.
    let (off, run, beacon) = (s("ClientStartOffset=0"), s("RunTime=0.07"), s("BeaconReportInterval=1"));
    args.extend(["--set", &off, "--set", &run]);
    let mut with_beacon = args.clone();
    with_beacon.extend(["--set", &beacon]);
    assert!(refused(&with_beacon).contains(": simulation.BeaconReportInterval: "));
}

#[test]
fn max_pending_wqes_is_bounded_by_a_send_queue_depth() {
    // 32,768 work requests per queue pair: a ConnectX-5/6/7's max_qp_wr. The bound loads; one
    // more is refused naming the field and the source of the bound.
    let file = default_ron();
    let file = file.to_str().expect("utf-8");
    let ok = rdmasim(&["validate", file, "--set", "applications[0].MaxPendingWQEs=32768"]);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
    let first = refused_set("applications[0].MaxPendingWQEs=32769", "applications[0].MaxPendingWQEs");
    assert!(
        first.contains("from 0 to 32,768") && first.contains("max_qp_wr"),
        "{first}"
    );
}

#[test]
fn validate_prints_the_estimates_and_runaways_are_refused() {
    let file = default_ron();
    let file = file.to_str().expect("utf-8");
    // The default: 506 beacon ticks (1 ms to 0.506 s); 8 Initiators x 400 Gbps x 0.504 s / 2e6
    // bit per WQE = 806,400 rdma-perf rows at most; 8 connections x 10 WQEs outstanding.
    let o = rdmasim(&["validate", file]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("estimate: 506 beacon rows, at most 806400 rdma-perf rows, 80 outstanding WQEs"),
        "{out}"
    );
    // 1 ps beacons: 5.06e11 rows; StartTime 1e6 s with 0.1 ms beacons: 1e10 rows. Both past
    // 100 M: refused by validate and by run, before anything is written.
    let out_dir = std::env::temp_dir().join(format!("rdmasim-limits-out-{}", std::process::id()));
    let out_dir = out_dir.to_str().expect("utf-8");
    for sets in [
        vec!["simulation.BeaconReportInterval=1e-12"],
        vec!["simulation.StartTime=1e6", "simulation.BeaconReportInterval=0.0001"],
    ] {
        for cmd in [vec!["validate", file], vec!["run", file, "--quiet", "--out", out_dir]] {
            let mut args = cmd.clone();
            for s in &sets {
                args.extend(["--set", s]);
            }
            let first = refused(&args);
            assert!(
                first.contains(": simulation.BeaconReportInterval: the beacon record would have"),
                "{first}"
            );
            assert!(first.contains("--force"), "{first}");
        }
    }
    assert!(!Path::new(out_dir).exists(), "a refused run writes nothing");
    // 1,024 connections x 8 pairs x 32,768 WQEs = 268,435,456 outstanding WQEs: over 8 GiB.
    let first = refused(&[
        "run",
        file,
        "--quiet",
        "--out",
        out_dir,
        "--set",
        "applications[0].NumConnections=1024",
        "--set",
        "applications[0].MaxPendingWQEs=32768",
    ]);
    assert!(
        first.contains(": applications[0].MaxPendingWQEs: 268435456 outstanding WQEs"),
        "{first}"
    );
}
