//! No plugin names another plugin: each plugin crate depends only on the engine, the models
//! and outside crates, and no source file of one mentions another's crate. A model is swapped
//! through its contract (`models::nic`, `models::switch`, `models::cc`, `models::application`),
//! so this is what keeps every model swappable.

use rdmasim_tests::workspace_root;
use std::fs;
use std::path::Path;

/// The plugin crates: (folder, which is also the workspace's dependency key; lib name).
fn plugins(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in fs::read_dir(root.join("plugins")).expect("plugins/") {
        let dir = entry.expect("plugins/ entry").path();
        if !dir.join("Cargo.toml").is_file() {
            continue;
        }
        let folder = dir.file_name().unwrap().to_string_lossy().into_owned();
        let lib = folder.replace('-', "_");
        out.push((folder, lib));
    }
    out.sort();
    out
}

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_plugin_names_another_plugin() {
    let root = workspace_root();
    let all = plugins(&root);
    assert!(all.len() >= 6, "the plugins were not found: {all:?}");
    let mut found = Vec::new();
    for (folder, _) in &all {
        let dir = root.join("plugins").join(folder);
        let manifest = fs::read_to_string(dir.join("Cargo.toml")).expect("plugin manifest");
        let mut files = Vec::new();
        for sub in ["src", "tests", "benches", "examples"] {
            sources(&dir.join(sub), &mut files);
        }
        for (other, lib) in all.iter().filter(|(f, _)| f != folder) {
            let dep = format!("\n{other}");
            if manifest.contains(&format!("{dep}.workspace")) || manifest.contains(&format!("{dep} =")) {
                found.push(format!("plugins/{folder}/Cargo.toml depends on {other}"));
            }
            for f in &files {
                let text = fs::read_to_string(f).expect("source file");
                if text.contains(&format!("{lib}::")) || text.contains(&format!("use {lib};")) {
                    found.push(format!("{} names {lib}", f.display()));
                }
            }
        }
    }
    assert!(found.is_empty(), "plugins naming other plugins:\n{}", found.join("\n"));
}
