//! The profile-guided build's plumbing (docs/performance.md, "Profile-guided optimization"): cargo's config
//! names the wrapper, the wrapper hands rustc the committed profile by absolute path (and leaves
//! an instrumented compile alone), and the profile is an LLVM indexed profile, not a placeholder
//! or a text-mangled copy.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// What the wrapper runs when cargo calls it as `rustc-wrapper echo ARGS...`.
fn wrapped(args: &[&str]) -> String {
    let out = Command::new(root().join("tools/pgo/rustc-wrapper"))
        .arg("echo")
        .args(args)
        .current_dir(std::env::temp_dir())
        .output()
        .expect("the wrapper runs");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim_end().to_string()
}

#[test]
fn cargo_uses_the_wrapper() {
    let config = std::fs::read_to_string(root().join(".cargo/config.toml")).unwrap();
    assert!(
        config.contains("rustc-wrapper = \"tools/pgo/rustc-wrapper\""),
        "{config}"
    );
}

#[test]
fn the_wrapper_adds_the_profile_by_absolute_path_from_any_directory() {
    let profile = root().join("pgo/rdmasim.profdata").canonicalize().unwrap();
    assert_eq!(
        wrapped(&["--crate-name", "x"]),
        format!("--crate-name x -Cprofile-use={}", profile.display())
    );
}

#[test]
fn an_instrumented_compile_gets_no_profile() {
    assert_eq!(
        wrapped(&["-Cprofile-generate=/tmp/p", "--crate-name", "x"]),
        "-Cprofile-generate=/tmp/p --crate-name x"
    );
}

#[test]
fn an_incremental_compile_gets_no_profile() {
    // The dev and test profiles compile incrementally, and that cache would mix two profiles'
    // code after a refresh (the wrapper says why).
    assert_eq!(
        wrapped(&["--crate-name", "x", "-C", "incremental=/t/inc"]),
        "--crate-name x -C incremental=/t/inc"
    );
}

#[test]
fn the_profile_is_an_llvm_indexed_profile() {
    let bytes = std::fs::read(root().join("pgo/rdmasim.profdata")).unwrap();
    // The indexed format's magic (`\xfflprofi\x81`) and a version rustc's LLVM reads (LLVM 19's
    // llvm-profdata writes 12).
    assert_eq!(&bytes[..8], b"\xfflprofi\x81");
    let version = u64::from_le_bytes(bytes[8..16].try_into().unwrap()) & 0xFFFF;
    assert!((10..=13).contains(&version), "version {version}");
    assert!(bytes.len() > 100_000, "a real profile of the runs is megabytes");
}

/// Each package `cargo tree` lists for `selection`, with the features the build turns on.
fn features(selection: &[&str]) -> std::collections::BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "--locked",
            "--prefix",
            "none",
            "--edges",
            "normal,build",
        ])
        .args(["--format", "{p} [{f}]"])
        .args(selection)
        .current_dir(root())
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty() && !l.ends_with("(*)"))
        .map(str::to_string)
        .collect()
}

/// The profile names functions by their symbols, and a symbol's name carries a hash of its
/// crate's features and those of everything below it. If `cargo build --release` (the whole
/// workspace) and `cargo build --release -p rdmasim` (the README's command) turned on different
/// features anywhere under rdmasim, one of the two builds would match none of the profile and run
/// 10% slower, silently (which is why rdmasim's manifest names `serde_core`).
#[test]
fn the_workspace_build_and_the_rdmasim_build_are_the_same_binary() {
    let alone = features(&["-p", "rdmasim"]);
    let workspace = features(&["--workspace"]);
    let differ: Vec<_> = alone.iter().filter(|p| !workspace.contains(*p)).collect();
    assert!(alone.len() > 50, "{alone:?}");
    assert!(differ.is_empty(), "features differ in the workspace build: {differ:?}");
}
