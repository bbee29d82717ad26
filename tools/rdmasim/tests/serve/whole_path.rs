//! The whole path a user scripts: create, patch, run, poll, list, get a link, download; the
//! bytes equal those `rdmasim run` writes for the same scenario and parameters.

use crate::common::TempDir;
use crate::server::{Server, run_directly, scenario};

#[test]
fn create_patch_run_list_download_matches_rdmasim_run() {
    let data = TempDir::new("serve-path");
    let server = Server::start(&data.0.join("data"), &[]);
    let text = scenario("star");
    let config = server.configure(&text, r#"{"RunTime": 0.0005, "RandomSeed": 7}"#);
    let c = server.get(&format!("/api/v1/configurations/{config}")).json();
    assert_eq!(c["scenario"], text.as_str());
    assert_eq!(c["parameters"]["RandomSeed"], 7);
    let overrides = ["simulation.RunTime=0.0005", "simulation.RandomSeed=7"];
    assert_eq!(c["overrides"], serde_json::json!(overrides));

    let sim = server.start_sim(config);
    let done = server.wait(sim);
    assert_eq!(done["status"], "completed", "{done}");

    let all = server.results(sim, "");
    let csv = server.results(sim, "?type=csv");
    let names: Vec<&str> = all.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(
        names,
        ["star-beacon-0.csv", "star-manifest-0.json", "star-rdma-perf-0.csv"]
    );
    assert_eq!(
        csv.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
        ["star-beacon-0.csv", "star-rdma-perf-0.csv"]
    );
    assert!(csv.iter().all(|f| f.1 == "csv"));
    assert!(server.results(sim, "?type=parquet").is_empty());

    let direct = TempDir::new("serve-path-direct");
    let out = run_directly(&direct, &text, &overrides);
    for (name, _, bytes) in &all {
        let url = server.download_url(sim, name);
        assert!(url.starts_with(&server.url), "{url}");
        let got = server.download(&url);
        assert_eq!(got.status, 200, "{}", got.text());
        assert_eq!(got.body.len() as u64, *bytes, "{name}: listed size");
        let want = std::fs::read(out.join(name)).expect("rdmasim run wrote it");
        if name.ends_with(".csv") {
            assert!(got.body == want, "{name} differs from rdmasim run's");
        } else {
            // The manifest: equal but for the wall time, as between two `rdmasim run`s.
            let strip = |b: &[u8]| {
                let mut v: serde_json::Value = serde_json::from_slice(b).expect("manifest JSON");
                v.as_object_mut().expect("object").remove("wall_sec");
                v
            };
            assert_eq!(strip(&got.body), strip(&want), "{name}");
        }
    }
}

/// A configuration the loader refuses is a 400 naming line, column and field; so is a
/// parameter it refuses, and an unknown one, by name.
#[test]
fn bad_scenarios_and_parameters_are_refused_with_their_place() {
    let data = TempDir::new("serve-bad");
    let server = Server::start(&data.0.join("data"), &[]);
    let bad = scenario("star").replace("Star(hosts: 16)", "Star(hosts: 0)");
    let r = server.call(
        "POST",
        "/api/v1/configurations",
        Some(("text/plain", bad.as_bytes())),
        Some(crate::server::TOKEN),
    );
    assert_eq!(r.status, 400, "{}", r.text());
    let e = r.json();
    assert_eq!(e["field"], "topology.hosts");
    assert_eq!(e["file"], "scenario.ron");
    assert!(
        e["line"].as_u64().unwrap() > 1 && e["column"].as_u64().unwrap() > 1,
        "{e}"
    );

    let config = server.configure(&scenario("star"), "{}");
    let path = format!("/api/v1/configurations/{config}/parameters");
    for (body, parameter) in [
        (r#"{"RunTime": -1}"#, "RunTime"),
        (r#"{"RunTime": "10 parsecs"}"#, "RunTime"),
        (r#"{"RandomSeed": 1.5}"#, "RandomSeed"),
        (r#"{"RunTme": 0.01}"#, "RunTme"),
        (r#"{"BeaconReportInterval": true}"#, "BeaconReportInterval"),
    ] {
        let r = server.patch_json(&path, body);
        assert_eq!(r.status, 400, "{body}: {}", r.text());
        assert_eq!(r.json()["parameter"], parameter, "{body}: {}", r.text());
    }
    let r = server.patch_json(&path, "[1, 2]");
    assert_eq!(r.status, 422, "{}", r.text());
    let r = server.patch_json(&path, "{not json");
    assert_eq!(r.status, 400, "{}", r.text());
    // Nothing refused was kept.
    assert_eq!(
        server.get(&format!("/api/v1/configurations/{config}")).json()["parameters"],
        serde_json::json!({})
    );
    for missing in [
        "/api/v1/configurations/999",
        "/api/v1/simulations/999",
        "/api/v1/simulations/abc",
    ] {
        assert_eq!(server.get(missing).status, 404, "{missing}");
    }
    let r = server.post_json("/api/v1/simulations", r#"{"config_id": 999}"#);
    assert_eq!(r.status, 404, "{}", r.text());
}
