//! The spec's 0.9/0.1 worked example is a 15:1 incast into one Responder on a lossless fabric.
//! At full length (the default `RunTime`, 0.5 s) and whatever the transmit pool's size, no
//! connection may stall, nothing may be dropped or resent, PFC must be what holds the senders
//! back, and Little's law must hold on every connection.

use rdmasim::Outcome;
use rdmasim_tests::*;
use std::collections::BTreeMap;

/// The default timeline's `RunTime` (recording 0.005-0.505 s) and stop, in picoseconds.
const RUN_TIME_PS: u64 = PS_PER_SEC / 2;
const STOP_PS: u64 = 506 * PS_PER_SEC / 1000;
const MAX_PENDING: f64 = 10.0;

/// What a full-length incast run showed, per connection and in total.
struct Incast {
    outcome: Outcome,
    /// Each connection's last completion (from rdma-perf), by Initiator instance name.
    last_completion: BTreeMap<String, u64>,
}

fn run_incast(egress_buffer: &str) -> Incast {
    run_incast_with(&format!("EgressBufferManager: (BufferSize: \"{egress_buffer}\")"), &[])
}

/// The incast with `nic_fields` inside `RoceNic((...))` and `overrides`.
fn run_incast_with(nic_fields: &str, overrides: &[&str]) -> Incast {
    let path = scenario_path("spec-ratios-0.9-0.1.ron");
    let text = std::fs::read_to_string(&path).expect("the shipped scenario");
    let nic = format!("nic: RoceNic(({nic_fields})),");
    assert!(text.contains("nic: RoceNic(()),"), "the scenario's NIC line moved");
    let loaded = load_str(
        "spec-ratios-0.9-0.1.ron",
        &text.replace("nic: RoceNic(()),", &nic),
        overrides,
    );
    let (outcome, dir) = run_loaded(&loaded, "incast");
    let perf = Csv::read(&dir.file("ratios-0.9-0.1-rdma-perf-0.csv"));
    let (name, end) = (perf.col("application_name"), perf.col("sim_time_sec"));
    let mut last_completion = BTreeMap::new();
    for r in &perf.rows {
        let t = sec_ps(&r[end]);
        let e = last_completion.entry(r[name].clone()).or_insert(0);
        *e = (*e).max(t);
    }
    Incast {
        outcome,
        last_completion,
    }
}

fn check(run: &mut Incast, pool: &str) {
    let s = &run.outcome.summary;
    assert!(s.conservation.ok(), "{pool}: {:?}", s.conservation.violations);
    let [sent, _, dropped, _] = s.conservation.totals();
    assert!(sent.packets > 1_000_000, "{pool}: only {} data packets", sent.packets);
    assert_eq!(dropped.packets, 0, "{pool}: the lossless fabric dropped data");
    let nic = s.nic_losses;
    assert_eq!(
        (nic.receive_drops, nic.out_of_sequence, nic.timeouts, nic.retransmitted),
        (0, 0, 0, 0),
        "{pool}: a lossless incast loses and resends nothing"
    );
    assert!(
        s.conservation.switch_pfc_pause_sent > 0,
        "{pool}: PFC never held the senders back"
    );
    // Every one of the 15 connections completed a WQE in the last millisecond before the stop:
    // with ~15 x 250,000 B ahead of it at 400 Gbps (75 us) a live connection completes one
    // every ~100 us.
    assert_eq!(run.last_completion.len(), 15, "{pool}: connections with completions");
    for (name, &t) in &run.last_completion {
        assert!(
            t >= STOP_PS - PS_PER_SEC / 1000,
            "{pool}: {name} completed nothing after {:.6} s",
            t as f64 / PS_PER_SEC as f64
        );
    }
    // Little's law on each closed loop: 10 WQEs always outstanding = completion rate x mean
    // latency = (sum of the window's latencies) / RunTime; the WQEs straddling the window's
    // ends differ by a few latencies out of thousands.
    let mut q = run.outcome.app.world.query::<&scala_rdma::InitiatorInstance>();
    for i in q.iter(&run.outcome.app.world) {
        let l = i.recorded_latency.0 as f64 / RUN_TIME_PS as f64;
        assert!(
            (l / MAX_PENDING - 1.0).abs() < 0.02,
            "{pool}: {} has L = {l:.3} WQEs in the system, not {MAX_PENDING}",
            i.name
        );
        assert!(i.recorded > 1000, "{pool}: {} recorded {}", i.name, i.recorded);
    }
}

#[test]
fn the_incast_runs_full_length_without_a_stall_a_drop_or_a_resend() {
    // The default pool (2 MiB for class 0), then 256 KiB to 1 GiB (BufferSize is twice the
    // class-0 pool: PoolAllocationVector gives it half). A pool that fills only holds fetches
    // back; a leak from the pool would stall the smaller pools' connections first.
    let pools = [
        ("4MiB", "2 MiB"),
        ("512KiB", "256 KiB"),
        ("64MiB", "32 MiB"),
        ("2GiB", "1 GiB"),
    ];
    let handles: Vec<_> = pools
        .into_iter()
        .map(|(buffer, pool)| std::thread::spawn(move || (pool, run_incast(buffer))))
        .collect();
    for h in handles {
        let (pool, mut run) = h.join().expect("run thread");
        check(&mut run, pool);
    }
}

#[test]
fn resends_racing_a_completion_never_leak_the_transmit_pool() {
    // A 100 us timeout is below this incast's queueing delay, so timers fire on WQEs whose
    // first transmission is still queued: go-back-N refetches their payload, and the ACK of
    // the first transmission then completes them mid-resend. The payload fetched for the
    // resend must go back to the pool; when it did not, the pool filled and two connections
    // stopped for good after about 0.03 s. Stop at 0.106 s: every connection still completes.
    let stop = 106 * PS_PER_SEC / 1000;
    let run = run_incast_with("RetransmitTimeout: \"100us\"", &["simulation.RunTime=0.1"]);
    let s = &run.outcome.summary;
    assert!(s.conservation.ok(), "{:?}", s.conservation.violations);
    assert!(
        s.nic_losses.timeouts > 100,
        "the race needs timeouts: {:?}",
        s.nic_losses
    );
    assert_eq!(run.last_completion.len(), 15);
    for (name, &t) in &run.last_completion {
        assert!(
            t >= stop - PS_PER_SEC / 1000,
            "{name} completed nothing after {:.6} s",
            t as f64 / PS_PER_SEC as f64
        );
    }
}
