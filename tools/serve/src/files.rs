//! The data directory's layout and the only way a result file is opened: by a name the
//! simulation's list holds, as a regular file at exactly `DATA/results/{sim_id}/{name}`, never
//! through a symbolic link.

use crate::db::FileRow;
use std::path::{Path, PathBuf};

/// The folders under the data directory.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The data directory, canonical.
    pub root: PathBuf,
}

impl Layout {
    /// Creates the data directory and its folders if missing.
    pub fn create(data: &Path) -> std::io::Result<Layout> {
        std::fs::create_dir_all(data)?;
        let root = data.canonicalize()?;
        for d in ["runs", "results"] {
            std::fs::create_dir_all(root.join(d))?;
        }
        Ok(Layout { root })
    }

    pub fn database(&self) -> PathBuf {
        self.root.join("rdmasim.sqlite")
    }

    pub fn signing_key(&self) -> PathBuf {
        self.root.join("url-signing.key")
    }

    /// Where a run in flight works: its scenario and its `out` folder.
    pub fn run_dir(&self, sim_id: i64) -> PathBuf {
        self.root.join("runs").join(sim_id.to_string())
    }

    /// Where a completed run's files are, moved from its run folder in one rename.
    pub fn results_dir(&self, sim_id: i64) -> PathBuf {
        self.root.join("results").join(sim_id.to_string())
    }

    /// After a restart: removes every run folder, and every result folder but those of
    /// `completed` simulations.
    pub fn clean(&self, completed: &[i64]) -> std::io::Result<()> {
        let runs = self.root.join("runs");
        std::fs::remove_dir_all(&runs)?;
        std::fs::create_dir_all(&runs)?;
        for entry in std::fs::read_dir(self.root.join("results"))? {
            let entry = entry?;
            let keep = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i64>().ok())
                .is_some_and(|id| completed.contains(&id));
            if !keep {
                let p = entry.path();
                if entry.file_type()?.is_dir() {
                    std::fs::remove_dir_all(p)?;
                } else {
                    std::fs::remove_file(p)?;
                }
            }
        }
        Ok(())
    }

    /// Opens a listed result file: `None` unless `DATA/results/{sim_id}/{name}` is a regular
    /// file reached through no symbolic link, and the file opened is that one.
    pub fn open_result(&self, sim_id: i64, name: &str) -> Option<(std::fs::File, u64)> {
        if !is_plain_name(name) {
            return None;
        }
        let path = self.results_dir(sim_id).join(name);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        if !meta.file_type().is_file() || path.canonicalize().ok()? != path {
            return None;
        }
        let file = std::fs::File::open(&path).ok()?;
        let opened = file.metadata().ok()?;
        same_file(&meta, &opened).then_some((file, opened.len()))
    }
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    b.is_file()
}

/// Whether `name` can be a result file's name: what `rdmasim run` names files with (letters,
/// digits, `-`, `_`, `.`, not starting with `.`), so never a path.
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// A file's type as the list's `type` filter matches it: its extension (`csv`, `json`).
pub fn kind_of(name: &str) -> String {
    name.rsplit_once('.').map_or("", |(_, ext)| ext).to_ascii_lowercase()
}

/// The regular files a finished run wrote in `dir`, by name.
pub fn list_outputs(dir: &Path) -> std::io::Result<Vec<FileRow>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if entry.file_type()?.is_file() && is_plain_name(&name) {
            out.push(FileRow {
                kind: kind_of(&name),
                bytes: meta.len(),
                name,
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_pass() {
        for ok in ["default-rdma-perf-0.csv", "a.json", "x_1"] {
            assert!(is_plain_name(ok), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            "../../etc/passwd",
            "/etc/passwd",
            "a/b",
            "a\\b",
            "%2e%2e",
            ".hidden",
            "a\0b",
        ] {
            assert!(!is_plain_name(bad), "{bad}");
        }
        assert_eq!(kind_of("a-0.CSV"), "csv");
        assert_eq!(kind_of("noext"), "");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_never_opened() {
        let root = std::env::temp_dir().join(format!("rdmasim-serve-files-{}", std::process::id()));
        let l = Layout::create(&root).unwrap();
        let dir = l.results_dir(1);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.csv"), "x\n").unwrap();
        let outside = root.join("outside.csv");
        std::fs::write(&outside, "secret\n").unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("b.csv")).unwrap();
        assert_eq!(l.open_result(1, "a.csv").map(|f| f.1), Some(2));
        assert!(l.open_result(1, "b.csv").is_none());
        assert!(l.open_result(1, "../outside.csv").is_none());
        // A symlinked results folder is refused too.
        std::fs::create_dir_all(root.join("elsewhere")).unwrap();
        std::fs::write(root.join("elsewhere/a.csv"), "y\n").unwrap();
        std::os::unix::fs::symlink(root.join("elsewhere"), l.results_dir(2)).unwrap();
        assert!(l.open_result(2, "a.csv").is_none());
        let listed = list_outputs(&dir).unwrap();
        assert_eq!(listed.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["a.csv"]);
        l.clean(&[1]).unwrap();
        assert!(dir.exists() && !l.results_dir(2).exists());
        std::fs::remove_dir_all(&root).ok();
    }
}
