//! The binary allocates through jemalloc and hands it the huge-page options baked into it
//! (`src/alloc.rs`): jemalloc's own statistics, printed at exit when asked through its
//! environment variable, show the options it took.

#![cfg(target_os = "linux")]

use std::process::Command;

#[test]
fn the_binary_runs_on_jemalloc_with_the_baked_in_huge_page_options() {
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/default.ron");
    let out = Command::new(env!("CARGO_BIN_EXE_rdmasim"))
        .args(["validate", scenario])
        // `_RJEM_`: the prefix of the crate's jemalloc symbols, and so of its variable.
        .env("_RJEM_MALLOC_CONF", "stats_print:true")
        .output()
        .expect("run rdmasim");
    assert!(out.status.success(), "{out:?}");
    let stats = String::from_utf8_lossy(&out.stderr);
    // Without the baked-in string jemalloc reports "default" and "disabled"; on a kernel without
    // transparent huge pages, `opt.thp` "not supported"; on the system allocator, nothing.
    let thp = std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists();
    let (want, want_meta) = if thp {
        (r#"opt.thp: "always""#, r#"opt.metadata_thp: "always""#)
    } else {
        (r#"opt.thp: "not supported""#, "opt.metadata_thp:")
    };
    assert!(stats.contains(want), "{stats}");
    assert!(stats.contains(want_meta), "{stats}");
}
