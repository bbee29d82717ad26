//! What the `rdmasim` command's tests share: the paths, running the binary (killed after a
//! while: a hang is a failure, not a stuck test), its output as text, and temp files and folders
//! that are removed when dropped, named for the test binary so parallel binaries never collide.

// Each test file uses some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `scenarios/{name}.ron`.
pub fn scenario(name: &str) -> PathBuf {
    workspace().join(format!("scenarios/{name}.ron"))
}

pub fn default_ron() -> PathBuf {
    scenario("default")
}

/// Runs `rdmasim args` with no standard input and without `SOURCE_DATE_EPOCH`, killing it after
/// 120 s.
pub fn rdmasim(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdmasim"))
        .args(args)
        .env_remove("SOURCE_DATE_EPOCH")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run rdmasim");
    // Read the pipes while it runs, so a chatty child never blocks on a full pipe.
    let (mut out, mut err) = (
        child.stdout.take().expect("stdout"),
        child.stderr.take().expect("stderr"),
    );
    let out = std::thread::spawn(move || read_all(&mut out));
    let err = std::thread::spawn(move || read_all(&mut err));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().ok();
            panic!("rdmasim {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

fn read_all(r: &mut impl std::io::Read) -> Vec<u8> {
    let mut v = Vec::new();
    r.read_to_end(&mut v).ok();
    v
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `rdmasim args` refuses its input: exit 2, no panic. Returns the first line of standard error.
pub fn refused(args: &[&str]) -> String {
    let o = rdmasim(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    err.lines().next().unwrap_or_default().to_string()
}

/// `rdmasim-{test binary}-{tag}-{pid}{suffix}` in the temp dir.
fn temp_path(tag: &str, suffix: &str) -> PathBuf {
    let binary = env!("CARGO_CRATE_NAME");
    std::env::temp_dir().join(format!("rdmasim-{binary}-{tag}-{}{suffix}", std::process::id()))
}

/// A scenario file in the temp dir, removed when dropped.
pub struct TempFile(pub PathBuf);

impl TempFile {
    pub fn new(tag: &str, bytes: impl AsRef<[u8]>) -> TempFile {
        let path = temp_path(tag, ".ron");
        std::fs::write(&path, bytes).expect("write a temp file");
        TempFile(path)
    }
    pub fn path(&self) -> &str {
        self.0.to_str().expect("utf-8 temp path")
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        std::fs::remove_file(&self.0).ok();
    }
}

/// A fresh, empty folder in the temp dir, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let path = temp_path(tag, "");
        std::fs::remove_dir_all(&path).ok();
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(path)
    }
    pub fn path(&self) -> &str {
        self.0.to_str().expect("utf-8 temp path")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

/// Every `<svg>...</svg>` of `html` parses and renders, and draws something besides the white
/// background; returns how many there are.
pub fn render_every_plot(html: &str) -> usize {
    let mut count = 0;
    let mut rest = html;
    while let Some(start) = rest.find("<svg") {
        let end = start + rest[start..].find("</svg>").expect("svg end") + "</svg>".len();
        let svg = &rest[start..end];
        let tree = resvg::usvg::Tree::from_str(svg, &resvg::usvg::Options::default())
            .unwrap_or_else(|e| panic!("plot {count} does not parse: {e}"));
        let size = tree.size().to_int_size();
        let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).expect("pixmap");
        resvg::render(&tree, resvg::tiny_skia::Transform::default(), &mut pixmap.as_mut());
        let inked = pixmap
            .pixels()
            .iter()
            .filter(|p| p.red() < 200 || p.green() < 200 || p.blue() < 200)
            .count();
        assert!(inked > 2_000, "plot {count} draws almost nothing ({inked} pixels)");
        count += 1;
        rest = &rest[end..];
    }
    count
}
