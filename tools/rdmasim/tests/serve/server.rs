//! A real `rdmasim serve` process on an ephemeral loopback port, with its own data directory, and
//! a real HTTP client (ureq) to talk to it.

use crate::common::TempDir;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const TOKEN: &str = "test-token-0123456789";
/// 2026-01-01T00:00:00Z: runs through the server and `rdmasim run` write the same bytes.
pub const SOURCE_DATE_EPOCH: &str = "1767225600";

pub struct Server {
    child: Child,
    pub url: String,
    pub data: PathBuf,
    agent: ureq::Agent,
}

/// A status and a body.
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into()
}

impl Server {
    /// `rdmasim serve --listen 127.0.0.1:0 --data DATA --workers 2 EXTRA...` with the token in
    /// the environment; returns once it prints where it listens.
    pub fn start(data: &Path, extra: &[&str]) -> Server {
        Self::start_with(data, extra, Some(TOKEN))
    }

    /// As `start`, with `token` in `RDMASIM_API_TOKEN` (None: unset).
    pub fn start_with(data: &Path, extra: &[&str], token: Option<&str>) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rdmasim"));
        match token {
            Some(t) => cmd.env("RDMASIM_API_TOKEN", t),
            None => cmd.env_remove("RDMASIM_API_TOKEN"),
        };
        let mut child = cmd
            .args(["serve", "--listen", "127.0.0.1:0", "--workers", "2", "--data"])
            .arg(data)
            .args(extra)
            .env("SOURCE_DATE_EPOCH", SOURCE_DATE_EPOCH)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start rdmasim serve");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the first line");
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://127.0.0.1:"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_string();
        Server {
            child,
            url,
            data: data.to_path_buf(),
            agent: agent(),
        }
    }

    /// A request with `token` (None: no Authorization header).
    pub fn call(&self, method: &str, path: &str, body: Option<(&str, &[u8])>, token: Option<&str>) -> Reply {
        let url = if path.starts_with("http") {
            path.to_string()
        } else {
            format!("{}{path}", self.url)
        };
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut res = match (method, body) {
            ("GET", _) => {
                let mut r = self.agent.get(&url);
                if let Some(a) = &auth {
                    r = r.header("Authorization", a);
                }
                r.call()
            }
            (m, b) => {
                let mut r = match m {
                    "POST" => self.agent.post(&url),
                    "PATCH" => self.agent.patch(&url),
                    other => panic!("no {other} here"),
                };
                if let Some(a) = &auth {
                    r = r.header("Authorization", a);
                }
                let (kind, bytes) = b.unwrap_or(("application/json", b""));
                r.content_type(kind).send(bytes)
            }
        }
        .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
        let status = res.status().as_u16();
        let body = res
            .body_mut()
            .with_config()
            .limit(1 << 30)
            .read_to_vec()
            .expect("read the body");
        Reply { status, body }
    }

    pub fn get(&self, path: &str) -> Reply {
        self.call("GET", path, None, Some(TOKEN))
    }

    pub fn post_json(&self, path: &str, json: &str) -> Reply {
        self.call("POST", path, Some(("application/json", json.as_bytes())), Some(TOKEN))
    }

    pub fn patch_json(&self, path: &str, json: &str) -> Reply {
        self.call("PATCH", path, Some(("application/json", json.as_bytes())), Some(TOKEN))
    }

    /// A configuration from `scenario` with `params` (a JSON object) patched on: its id.
    pub fn configure(&self, scenario: &str, params: &str) -> i64 {
        let r = self.call(
            "POST",
            "/api/v1/configurations",
            Some(("text/plain", scenario.as_bytes())),
            Some(TOKEN),
        );
        assert_eq!(r.status, 201, "{}", r.text());
        let id = r.json()["config_id"].as_i64().expect("config_id");
        let r = self.patch_json(&format!("/api/v1/configurations/{id}/parameters"), params);
        assert_eq!(r.status, 200, "{}", r.text());
        id
    }

    /// Starts a simulation of `config`: its id.
    pub fn start_sim(&self, config: i64) -> i64 {
        let r = self.post_json("/api/v1/simulations", &format!("{{\"config_id\": {config}}}"));
        assert_eq!(r.status, 201, "{}", r.text());
        r.json()["sim_id"].as_i64().expect("sim_id")
    }

    pub fn status(&self, sim: i64) -> Value {
        let r = self.get(&format!("/api/v1/simulations/{sim}"));
        assert_eq!(r.status, 200, "{}", r.text());
        r.json()
    }

    /// Polls until the simulation is no longer queued or running (at most 120 s).
    pub fn wait(&self, sim: i64) -> Value {
        self.wait_until(sim, |s| !matches!(s["status"].as_str(), Some("queued" | "running")))
    }

    /// Polls until `done` holds for the simulation's status (at most 120 s).
    pub fn wait_until(&self, sim: i64, done: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let s = self.status(sim);
            if done(&s) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "simulation {sim} stuck: {s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The result list's `(fileName, type, bytes)`, with `query` (e.g. `?type=csv`).
    pub fn results(&self, sim: i64, query: &str) -> Vec<(String, String, u64)> {
        let r = self.get(&format!("/api/v1/simulations/{sim}/results{query}"));
        assert_eq!(r.status, 200, "{}", r.text());
        r.json()["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|f| {
                (
                    f["fileName"].as_str().expect("fileName").to_string(),
                    f["type"].as_str().expect("type").to_string(),
                    f["bytes"].as_u64().expect("bytes"),
                )
            })
            .collect()
    }

    /// A download link for a listed file.
    pub fn download_url(&self, sim: i64, file: &str) -> String {
        let r = self.get(&format!(
            "/api/v1/simulations/{sim}/results/download-url?fileName={file}"
        ));
        assert_eq!(r.status, 200, "{}", r.text());
        r.json()["url"].as_str().expect("url").to_string()
    }

    /// Downloads through a link, with no token (the signature is the credential).
    pub fn download(&self, url: &str) -> Reply {
        self.call("GET", url, None, None)
    }

    /// Asks the server to stop (SIGTERM) and waits: its exit code.
    pub fn terminate(&mut self) -> Option<i32> {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().expect("run kill");
        assert!(sent.success());
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                return s.code();
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the server did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Ends the server at once (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `scenarios/{name}.ron`'s text.
pub fn scenario(name: &str) -> String {
    std::fs::read_to_string(crate::common::scenario(name)).expect("read a scenario")
}

/// `rdmasim run scenario.ron --set ...` in `dir` (holding the text as `scenario.ron`), as the
/// server runs it: with `SOURCE_DATE_EPOCH`. Returns the output folder.
pub fn run_directly(dir: &TempDir, text: &str, overrides: &[&str]) -> PathBuf {
    std::fs::write(dir.0.join("scenario.ron"), text).expect("write the scenario");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rdmasim"));
    cmd.args(["run", "scenario.ron", "--quiet", "--out", "out"]);
    for o in overrides {
        cmd.arg("--set").arg(o);
    }
    let o = cmd
        .current_dir(&dir.0)
        .env("SOURCE_DATE_EPOCH", SOURCE_DATE_EPOCH)
        .output()
        .expect("run rdmasim");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir.0.join("out")
}
