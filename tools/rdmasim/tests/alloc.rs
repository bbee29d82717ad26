//! The binary allocates through jemalloc with transparent huge pages (`src/alloc.rs`): jemalloc's
//! own statistics, printed at exit when asked through its environment variable, show the options
//! it took from the string baked into the binary.

#![cfg(not(target_env = "msvc"))]

use std::process::Command;

#[test]
fn the_binary_runs_on_jemalloc_with_huge_pages_for_heap_and_metadata() {
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/default.ron");
    let out = Command::new(env!("CARGO_BIN_EXE_rdmasim"))
        .args(["validate", scenario])
        // `_RJEM_`: the prefix of the crate's jemalloc symbols, and so of its variable.
        .env("_RJEM_MALLOC_CONF", "stats_print:true")
        .output()
        .expect("run rdmasim");
    assert!(out.status.success(), "{out:?}");
    let stats = String::from_utf8_lossy(&out.stderr);
    // With the system allocator nothing prints these; without the baked-in string, both say
    // "default" / "disabled".
    assert!(stats.contains(r#"opt.thp: "always""#), "{stats}");
    assert!(stats.contains(r#"opt.metadata_thp: "always""#), "{stats}");
}
