//! Robustness: many clients at once while runs go on; the server killed mid-run and restarted;
//! a run refused at load; a cancelled run.

use crate::common::TempDir;
use crate::server::{Server, agent, scenario};
use std::sync::Arc;

/// 200 list requests at once, while two runs go on: every one answered 200 with the same list.
#[test]
fn two_hundred_concurrent_lists_while_runs_go_on() {
    let data = TempDir::new("serve-load");
    let server = Arc::new(Server::start(&data.0.join("data"), &[]));
    let quick = server.configure(&scenario("star"), r#"{"RunTime": 0.0005}"#);
    let done = server.start_sim(quick);
    assert_eq!(server.wait(done)["status"], "completed");
    let want = server.results(done, "?type=csv");
    let long = server.configure(&scenario("star"), r#"{"RunTime": 0.05}"#);
    let running: Vec<i64> = (0..2).map(|_| server.start_sim(long)).collect();
    let threads: Vec<_> = (0..200)
        .map(|i| {
            let url = format!(
                "{}/api/v1/simulations/{}/results{}",
                server.url,
                if i % 4 == 0 { running[i % 2] } else { done },
                if i % 2 == 0 { "?type=csv" } else { "" }
            );
            std::thread::spawn(move || {
                // One client per thread: 200 connections at once.
                let mut r = agent()
                    .get(&url)
                    .header("Authorization", format!("Bearer {}", crate::server::TOKEN))
                    .call()
                    .expect("an answer");
                (r.status().as_u16(), r.body_mut().read_to_string().expect("body"), url)
            })
        })
        .collect();
    for t in threads {
        let (status, body, url) = t.join().expect("client thread");
        assert_eq!(status, 200, "{url}: {body}");
        let v: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        if url.contains(&format!("/simulations/{done}/")) && url.ends_with("csv") {
            assert_eq!(v["results"].as_array().unwrap().len(), want.len(), "{body}");
        }
    }
    for sim in running {
        assert_eq!(server.wait(sim)["status"], "completed");
    }
}

/// SIGKILL while a run is in flight, then a restart on the same data: the finished simulation's
/// results are intact, the interrupted one is failed (as documented), and the server runs on.
#[test]
fn a_server_killed_mid_run_restarts_consistent() {
    let data = TempDir::new("serve-kill");
    let mut server = Server::start(&data.0.join("data"), &[]);
    let quick = server.configure(&scenario("star"), r#"{"RunTime": 0.0005}"#);
    let done = server.start_sim(quick);
    assert_eq!(server.wait(done)["status"], "completed");
    let before = server.results(done, "");
    let url = server.download_url(done, "star-rdma-perf-0.csv");
    let bytes = server.download(&url).body;
    // About 20 s of run: the kill lands long before its end.
    let long = server.configure(&scenario("star"), r#"{"RunTime": 1.0}"#);
    let cut = server.start_sim(long);
    let s = server.wait_until(cut, |s| s.get("progress").is_some());
    assert_eq!(s["status"], "running");
    assert!(s["progress"]["sim_time_sec"].as_f64().unwrap() < s["progress"]["stop_sec"].as_f64().unwrap());
    server.kill();

    let server = Server::start(&server.data.clone(), &[]);
    // One server per data directory: a second one is refused, and changes nothing.
    let second = std::process::Command::new(env!("CARGO_BIN_EXE_rdmasim"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(&server.data)
        .env("RDMASIM_API_TOKEN", crate::server::TOKEN)
        .output()
        .expect("run a second server");
    assert_eq!(second.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&second.stderr).contains("another server"));
    let s = server.status(cut);
    assert_eq!(s["status"], "failed", "{s}");
    assert!(s["message"].as_str().unwrap().contains("server stopped"), "{s}");
    assert!(server.results(cut, "").is_empty());
    assert_eq!(server.results(done, ""), before);
    assert_eq!(
        server.download(&server.download_url(done, "star-rdma-perf-0.csv")).body,
        bytes
    );
    // Nothing of the interrupted run is left in flight.
    let runs = server.data.join("runs");
    assert_eq!(std::fs::read_dir(&runs).unwrap().count(), 0, "{runs:?} not cleaned");
    // And it runs new simulations.
    let again = server.start_sim(quick);
    assert_eq!(server.wait(again)["status"], "completed");
    // The same records (the manifest's size follows its wall time, which differs run to run).
    assert_eq!(server.results(again, "?type=csv"), server.results(done, "?type=csv"));
    assert_eq!(server.results(again, "").len(), before.len());
}

/// A configuration the loader accepts but `rdmasim run` refuses at load (its estimate passes the
/// row limit) fails with the run's own message; the server goes on.
#[test]
fn a_run_refused_at_load_is_failed_with_its_message() {
    let data = TempDir::new("serve-fail");
    let server = Server::start(&data.0.join("data"), &[]);
    let config = server.configure(&scenario("star"), r#"{"BeaconReportInterval": "1ps"}"#);
    let sim = server.start_sim(config);
    let s = server.wait(sim);
    assert_eq!(s["status"], "failed", "{s}");
    let message = s["message"].as_str().unwrap();
    assert!(
        message.contains("scenario.ron") && message.contains("BeaconReportInterval"),
        "{message}"
    );
    assert!(server.results(sim, "").is_empty());
    let r = server.get(&format!(
        "/api/v1/simulations/{sim}/results/download-url?fileName=star-beacon-0.csv"
    ));
    assert_eq!(r.status, 404);
    assert_eq!(server.get("/api/v1/health").status, 200);
}

/// A cancelled run stops and lists nothing; a finished one cannot be cancelled.
#[test]
fn cancelling_stops_a_run() {
    let data = TempDir::new("serve-cancel");
    let server = Server::start(&data.0.join("data"), &[]);
    let long = server.configure(&scenario("star"), r#"{"RunTime": 1.0}"#);
    let sim = server.start_sim(long);
    server.wait_until(sim, |s| s.get("progress").is_some());
    let r = server.post_json(&format!("/api/v1/simulations/{sim}/cancel"), "");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(server.status(sim)["status"], "cancelled");
    let r = server.post_json(&format!("/api/v1/simulations/{sim}/cancel"), "");
    assert_eq!(r.status, 409, "{}", r.text());
    // The worker is free again: a new run completes.
    let quick = server.configure(&scenario("star"), r#"{"RunTime": 0.0005}"#);
    let next = server.start_sim(quick);
    assert_eq!(server.wait(next)["status"], "completed");
    assert!(server.results(sim, "").is_empty());
    assert_eq!(std::fs::read_dir(server.data.join("results")).unwrap().count(), 1);
}

/// SIGTERM stops the server (exit 0) with its in-flight run failed as on a restart, and its
/// child gone; the next start serves the same state.
#[test]
fn sigterm_stops_the_server_and_fails_the_run_in_flight() {
    let data = TempDir::new("serve-term");
    let mut server = Server::start(&data.0.join("data"), &[]);
    let long = server.configure(&scenario("star"), r#"{"RunTime": 1.0}"#);
    let sim = server.start_sim(long);
    server.wait_until(sim, |s| s.get("progress").is_some());
    assert_eq!(server.terminate(), Some(0));
    let server = Server::start(&server.data.clone(), &[]);
    let s = server.status(sim);
    assert_eq!(s["status"], "failed", "{s}");
    assert!(s["message"].as_str().unwrap().contains("server stopped"), "{s}");
}

/// `--insecure-no-auth` on loopback: a demo that needs no token.
#[test]
fn insecure_mode_serves_without_a_token_on_loopback() {
    let data = TempDir::new("serve-insecure");
    let server = Server::start_with(&data.0.join("data"), &["--insecure-no-auth"], None);
    let text = scenario("star");
    let r = server.call(
        "POST",
        "/api/v1/configurations",
        Some(("text/plain", text.as_bytes())),
        None,
    );
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(server.call("GET", "/api/v1/configurations/1", None, None).status, 200);
}
