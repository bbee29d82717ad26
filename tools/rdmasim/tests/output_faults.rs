//! `rdmasim run` where its output cannot go (issue #14): an `--out` that cannot be a folder, a
//! record's file name taken, names too long for a file, symbolic links, a full or closed standard
//! output. Each ends with a message naming the path and an exit code, never a panic.

mod common;

use common::{TempDir, rdmasim, stderr};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The arguments of a `run` of scenario `ron` for 1 ms into `out` (a short run: the faults here
/// are all at its edges).
fn run_args<'a>(ron: &'a str, out: &'a str) -> [&'a str; 7] {
    ["run", ron, "--quiet", "--out", out, "--set", "simulation.RunTime=0.001"]
}

/// `run` of the default scenario for 1 ms into `out`, with `extra` arguments.
fn run_into(out: &Path, extra: &[&str]) -> Output {
    let ron = common::default_ron().to_string_lossy().into_owned();
    let mut args = run_args(&ron, out.to_str().expect("utf-8 temp path")).to_vec();
    args.extend_from_slice(extra);
    rdmasim(&args)
}

/// Exit `code`, a message on standard error holding every one of `needles`, and no panic.
fn fails_with(o: &Output, code: i32, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert!(!err.contains("panicked") && !err.contains("internal error"), "{err}");
    for n in needles {
        assert!(err.contains(n), "{n:?} not in {err:?}");
    }
}

#[test]
fn out_that_cannot_be_created_names_it_and_exits_2() {
    // /dev/null is a file, so no folder can be made under it (whoever runs the test, root too).
    let o = run_into(Path::new("/dev/null/out"), &[]);
    fails_with(&o, 2, &["/dev/null/out", "cannot create the folder", "Not a directory"]);
}

#[test]
fn a_folder_at_a_records_name_names_it_and_exits_2() {
    for record in ["rdma-perf", "beacon"] {
        let dir = TempDir::new(&format!("dir-{record}"));
        let taken = dir.0.join(format!("default-{record}-0.csv"));
        std::fs::create_dir(&taken).unwrap();
        let o = run_into(&dir.0, &[]);
        fails_with(&o, 2, &[taken.to_str().unwrap(), "Is a directory"]);
        // Refused at the start: no manifest claims a complete run.
        assert!(!dir.0.join("default-manifest-0.json").exists());
    }
}

#[test]
fn a_folder_at_the_manifests_name_names_it_and_exits_2() {
    let dir = TempDir::new("dir-manifest");
    let taken = dir.0.join("default-manifest-0.json");
    std::fs::create_dir(&taken).unwrap();
    let o = run_into(&dir.0, &[]);
    fails_with(&o, 2, &[taken.to_str().unwrap(), "Is a directory"]);
}

#[test]
fn names_that_cannot_name_files_are_refused_up_front_with_exit_2() {
    let dir = TempDir::new("names");
    // `..` would put `..-rdma-perf-0.csv` beside a hidden-file pattern; any leading '.' is refused.
    for bad in ["..", ".", ".hidden"] {
        let o = run_into(&dir.0, &["--name", bad]);
        fails_with(&o, 2, &["--name", "must not start with '.'"]);
    }
    // 201 bytes: one over the limit that keeps `{name}-{record}-{shard}.csv` within 255 bytes.
    let long = "n".repeat(201);
    let o = run_into(&dir.0, &["--name", &long]);
    fails_with(&o, 2, &["--name", "201 bytes, at most 200"]);
    // Nothing was written: the refusal comes before the run.
    assert_eq!(std::fs::read_dir(&dir.0).unwrap().count(), 0);
    // 200 bytes is accepted: the longest file, the manifest's, is 200 + 16 = 216 bytes.
    let ok = "n".repeat(200);
    let o = run_into(&dir.0, &["--name", &ok]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(dir.0.join(format!("{ok}-manifest-0.json")).is_file());
}

#[test]
fn a_long_scenario_name_names_the_field_and_exits_2() {
    let dir = TempDir::new("scenario-name");
    let text = std::fs::read_to_string(common::default_ron()).unwrap();
    let long = "s".repeat(300);
    let start = text.find("name:").expect("default.ron has a name");
    let end = start + text[start..].find(',').unwrap();
    let edited = format!("{}name: \"{long}\"{}", &text[..start], &text[end..]);
    let ron = dir.0.join("long.ron");
    std::fs::write(&ron, edited).unwrap();
    let o = rdmasim(&["validate", ron.to_str().unwrap()]);
    fails_with(&o, 2, &["long.ron", "name", "300 bytes, at most 200"]);
}

#[test]
fn a_symlink_at_a_records_name_is_refused_not_followed() {
    let dir = TempDir::new("symlink");
    let outside = dir.0.join("outside.csv");
    let out = dir.0.join("out");
    std::fs::create_dir(&out).unwrap();
    let link = out.join("default-rdma-perf-0.csv");
    // Dangling: following it would create `outside.csv`, beyond `--out`.
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let o = run_into(&out, &[]);
    fails_with(&o, 2, &[link.to_str().unwrap(), "symbolic link"]);
    assert!(!outside.exists(), "the link was followed");
}

#[test]
fn out_at_an_existing_file_says_so_and_leaves_it() {
    let dir = TempDir::new("out-file");
    let file = dir.0.join("a-file");
    std::fs::write(&file, "kept\n").unwrap();
    let o = run_into(&file, &[]);
    let want = format!("rdmasim: --out {}: exists and is not a folder", file.display());
    fails_with(&o, 2, &[&want]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "kept\n");
}

/// `rdmasim args` with standard output sent to `stdout`.
fn rdmasim_to(args: &[&str], stdout: impl Into<Stdio>) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rdmasim"))
        .args(args)
        .env_remove("SOURCE_DATE_EPOCH")
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("run rdmasim")
}

#[test]
fn a_full_standard_output_is_reported_with_exit_1() {
    let ron = common::default_ron().to_string_lossy().into_owned();
    let dir = TempDir::new("full");
    let out = dir.0.to_str().unwrap();
    let run = run_args(&ron, out);
    let commands: [&[&str]; 5] = [
        &["plan", &ron],
        &["plan", &ron, "--format", "json"],
        &["validate", &ron],
        &["topology", &ron],
        &run,
    ];
    for args in commands {
        // /dev/full takes the open and refuses every write with ENOSPC.
        let full = std::fs::File::options().write(true).open("/dev/full").unwrap();
        let o = rdmasim_to(args, full);
        fails_with(&o, 1, &["rdmasim: writing standard output: No space left on device"]);
    }
    // The run's records were written before its summary could not be.
    assert!(dir.0.join("default-manifest-0.json").is_file());
}

#[test]
fn a_closed_pipe_ends_quietly_with_exit_0() {
    let ron = common::default_ron().to_string_lossy().into_owned();
    let dir = TempDir::new("pipe");
    let out = dir.0.to_str().unwrap();
    let run = run_args(&ron, out);
    let commands: [&[&str]; 4] = [&["plan", &ron], &["validate", &ron], &["topology", &ron], &run];
    for args in commands {
        // The reader is closed before rdmasim starts, so its first write gets EPIPE for sure
        // (`| head -c1` closes it at some point; this is the worst case of that race).
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = rdmasim_to(args, writer);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
    assert!(dir.0.join("default-manifest-0.json").is_file());
}
