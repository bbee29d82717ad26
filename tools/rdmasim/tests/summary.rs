//! The run summary's timing: the set-up (before the first event) is reported apart from the
//! events, in the text and in `--json`, on one shard and on several.

mod common;
use common::*;

/// `rdmasim run --json` (with `extra` arguments) on a short default run, its records in a folder
/// named for `tag`: its summary as JSON.
fn summary(tag: &str, extra: &[&str]) -> serde_json::Value {
    let out = TempDir::new(tag);
    let scenario = default_ron();
    let mut args = vec![
        "run",
        scenario.to_str().unwrap(),
        "--json",
        "--set",
        "simulation.RunTime=0.0005",
        "--out",
    ];
    let dir = out.path().to_string();
    args.push(&dir);
    args.extend_from_slice(extra);
    let o = rdmasim(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("the summary is one JSON object")
}

/// The set-up is part of the wall time, not all of it: the run handled events after it.
fn assert_setup_within_wall(s: &serde_json::Value) {
    let setup = s["setup_sec"].as_f64().expect("setup_sec");
    let wall = s["wall_sec"].as_f64().expect("wall_sec");
    assert!(setup > 0.0, "building 16 hosts and a fabric takes some time: {s}");
    assert!(setup < wall, "set-up {setup} s of a wall time of {wall} s");
    assert!(s["events"].as_u64().expect("events") > 0, "{s}");
}

#[test]
fn json_summary_reports_the_setup_within_the_wall_time() {
    assert_setup_within_wall(&summary("json-one", &[]));
}

#[test]
fn sharded_summary_reports_the_setup_within_the_wall_time() {
    assert_setup_within_wall(&summary("json-two", &["--shards", "2"]));
}

/// The text summary: `wall time  W s (set-up S s)`, and the events' rate after set-up beside
/// the rate over the whole wall time.
#[test]
fn text_summary_shows_the_setup_and_the_rate_after_it() {
    let out = TempDir::new("summary-text");
    let scenario = default_ron();
    let o = rdmasim(&[
        "run",
        scenario.to_str().unwrap(),
        "--set",
        "simulation.RunTime=0.0005",
        "--out",
        out.path(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let wall = text
        .lines()
        .find(|l| l.starts_with("wall time"))
        .expect("a wall time line");
    let words: Vec<&str> = wall.split_whitespace().collect();
    // wall time W s (set-up S s)
    assert_eq!(words[4], "(set-up", "{wall}");
    let (w, s): (f64, f64) = (words[2].parse().unwrap(), words[5].parse().unwrap());
    assert!(s <= w, "{wall}");
    let events = text.lines().find(|l| l.starts_with("events")).expect("an events line");
    assert!(
        events.contains("M events/s;") && events.ends_with("M after set-up)"),
        "{events}"
    );
}
