//! DCQCN's behaviour in whole runs of its shipped scenarios (`scenarios/cc/`): two flows into
//! one 400 Gbps port share it equally, and a 15-to-1 incast keeps its bottleneck queue near the
//! ECN thresholds at high goodput with far fewer PFC pauses than without congestion control, and
//! the `cc-rate` record shows each of its senders near a fifteenth of the port.
//!
//! Each run is the scenario with a short `RunTime`; the flows' goodput is binned from the NICs'
//! trace (payload of data packets received at host 0, per sender, in bins of 1 ms), the queue
//! sampled at every beacon tick (10 us) as the data bytes queued in the switches towards host 0.
//!
//! Why 1 ms bins: each DCQCN sender's rate is a sawtooth (a cut, then fast recovery over five
//! `RpTimer` periods of 55 us), and the two senders' teeth are not in phase; 1 ms holds ~20 CNP
//! intervals, while 500 us and 100 us bins see the teeth (docs/validation.md). The 2-to-1 flows are finite (200 MB, one WRITE each) so
//! that no gap between two WRITEs of a never-ending flow (`plugins/flows/README.md`, ~12 us)
//! shows up as unfairness.

use engine::prelude::*;
use models::PacketKind;
use models::trace::{TraceEvent, TracePoint, Tracer, Tracers};
use rdmasim_tests::*;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The bin of goodput samples and the beacon (queue sample) interval.
const BIN: SimTime = SimTime::from_us(1000);
const BEACON: &str = "simulation.BeaconReportInterval=0.00001";

/// Payload bytes received at host 0 per (sender, bin).
#[derive(Clone, Default)]
struct Bins(Arc<Mutex<BTreeMap<(u32, u64), u64>>>);

impl Tracer for Bins {
    fn record(&mut self, e: &TraceEvent) {
        if e.point != TracePoint::PacketReceived || e.node != 0 {
            return;
        }
        let Some(p) = e.packet.filter(|p| p.kind == PacketKind::Data) else {
            return;
        };
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *m.entry((p.src, e.time.ps() / BIN.ps())).or_default() += p.payload as u64;
    }
}

/// What one run showed.
struct Run {
    /// Goodput (Gbps) per sender per bin, bins from 0 s.
    gbps: BTreeMap<u32, Vec<f64>>,
    /// Data bytes queued towards host 0, one sample per beacon tick.
    queue: Vec<u64>,
    /// PFC PAUSE frames the switches sent.
    pauses: u64,
    /// Packets marked CE.
    marked: u64,
}

impl Run {
    /// Total goodput (Gbps) into host 0 over bins `from..to`.
    fn total_gbps(&self, from: usize, to: usize) -> f64 {
        let sum: f64 = self.gbps.values().map(|v| v[from..to].iter().sum::<f64>()).sum();
        sum / (to - from) as f64
    }
}

/// Runs `scenarios/cc/<file>` with `cc` in place of `Dcqcn(())`, to `run_time` seconds.
fn run(file: &str, cc: &str, run_time: &str) -> Run {
    let path = workspace_root().join("scenarios/cc").join(file);
    let text = std::fs::read_to_string(&path).expect("the shipped scenario");
    assert!(
        text.contains("CongestionControl: Dcqcn(())"),
        "{file}: the controller line moved"
    );
    let text = text.replace("CongestionControl: Dcqcn(())", &format!("CongestionControl: {cc}"));
    let loaded = load_str(file, &text, &[&format!("simulation.RunTime={run_time}"), BEACON]);
    let mut app = build_quiet(&loaded);
    let bins = Bins::default();
    app.world.resource_mut::<Tracers>().subscribe(bins.clone());
    let queue = Arc::new(Mutex::new(Vec::new()));
    let samples = queue.clone();
    app.add_beacon_column("test_queue_to_h0", move |w| {
        let mut bytes = 0;
        models::switch::Switches::for_each_queued(w, &mut |p| {
            if p.dst == 0 && p.kind == PacketKind::Data {
                bytes += p.bytes as u64;
            }
        });
        samples.lock().unwrap_or_else(|e| e.into_inner()).push(bytes);
        bytes
    });
    run_built(&mut app, &loaded);
    let totals = testkit::fabric::switch_totals(&app.world);
    let n = (loaded.timeline.stop.ps() / BIN.ps()) as usize;
    let mut gbps: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for (&(src, b), &bytes) in bins.0.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        let v = gbps.entry(src).or_insert_with(|| vec![0.0; n + 1]);
        v[b as usize] = bytes as f64 * 8.0 / BIN.as_secs_f64() / 1e9;
    }
    let queue = std::mem::take(&mut *queue.lock().unwrap_or_else(|e| e.into_inner()));
    Run {
        gbps,
        queue,
        pauses: totals.pfc_pause_sent,
        marked: totals.ecn_marked,
    }
}

#[test]
fn two_flows_converge_to_an_equal_share_and_stay_there() {
    // Flow 1 (host 1) alone from setup, flow 2 (host 2) from 0.5 ms; 11 ms in all, flow 1 done
    // near 8.2 ms. From 3 ms (2.5 ms after flow 2 joined) to 8 ms every 1 ms bin of each flow
    // must be within 5% of half the two flows' total in that bin.
    let r = run("dcqcn-incast-2to1.ron", "Dcqcn(())", "0.01");
    let (a, b) = (&r.gbps[&1], &r.gbps[&2]);
    let (from, to) = (3, 8);
    let mut worst: f64 = 0.0;
    let mut shown = Vec::new();
    for i in from..to {
        let share = (a[i] + b[i]) / 2.0;
        let off = (a[i] - share).abs() / share;
        worst = worst.max(off);
        shown.push(format!("{:.0}/{:.0}", a[i], b[i]));
    }
    println!(
        "two flows, 1 ms bins from 3 to 8 ms (Gbps): {shown:?}; worst {:.2}% off",
        worst * 100.0
    );
    assert!(r.marked > 0, "nothing was marked");
    assert!(
        worst <= 0.05,
        "worst bin {:.1}% off an equal share: {shown:?}",
        worst * 100.0
    );
    let total = r.total_gbps(from, to);
    assert!(
        total > 0.9 * 400.0 * 4096.0 / 4154.0,
        "two flows only reach {total:.1} Gbps"
    );
}

#[test]
fn a_15_to_1_incast_keeps_the_queue_near_the_thresholds_and_pfc_quiet() {
    let dcqcn = run("dcqcn-incast-15to1.ron", "Dcqcn(())", "0.01");
    let none = run("dcqcn-incast-15to1.ron", "None", "0.01");
    // Goodput into host 0 from 3 ms (the rates have come down) to the end: above 90% of what
    // the port carries at line rate (400 Gbps x 4,096 / 4,154 of payload).
    let from = 3;
    let to = dcqcn.gbps[&1].len() - 2;
    let line = 400.0 * 4096.0 / 4154.0;
    let got = dcqcn.total_gbps(from, to);
    assert!(got > 0.9 * line, "goodput {got:.1} Gbps of {line:.1}");
    // The queue towards host 0 from 4.4 ms on, against the marking band (Kmin 100 KiB, Kmax
    // 400 KiB): its mean below Kmax and its peak within a quarter of Kmax above it (PFC alone
    // holds megabytes).
    let settled = &dcqcn.queue[dcqcn.queue.len() * 2 / 5..];
    let mean = settled.iter().sum::<u64>() as f64 / settled.len() as f64;
    let peak = *settled.iter().max().expect("samples");
    let none_settled = &none.queue[none.queue.len() * 2 / 5..];
    let none_mean = none_settled.iter().sum::<u64>() as f64 / none_settled.len() as f64;
    println!(
        "15-to-1 from 3 ms: goodput {got:.1} Gbps of {line:.1}; queue towards host 0 from 4.4 ms: \
         mean {mean:.0} B, peak {peak} B (None: mean {none_mean:.0} B, goodput {:.1} Gbps); \
         PAUSE frames {} against {}; marks {}",
        none.total_gbps(from, to),
        dcqcn.pauses,
        none.pauses,
        dcqcn.marked
    );
    assert!(
        mean < 400.0 * 1024.0 && peak < 500 * 1024,
        "DCQCN queue mean {mean:.0} B, peak {peak} B (without: mean {none_mean:.0} B)"
    );
    // PFC: at least 90% fewer PAUSE frames than without congestion control.
    assert!(
        (dcqcn.pauses as f64) <= 0.1 * none.pauses as f64,
        "PAUSE frames: {} with DCQCN, {} without",
        dcqcn.pauses,
        none.pauses
    );
}

#[test]
fn the_cc_rate_record_shows_each_sender_near_a_fifteenth_of_the_port() {
    // The 15-to-1 scenario writes the cc-rate record every 10 us (its telemetry section). From
    // 3 ms to the stop (6 ms), each sender's mean Rc must be within 25% of 400 / 15 = 26.7 Gbps
    // and the 15 together within 10% of 400 Gbps: the controllers' own rates, read through
    // `CongestionControl::rate`, agree with the goodput the other tests measure at host 0.
    let path = workspace_root().join("scenarios/cc/dcqcn-incast-15to1.ron");
    let (_outcome, dir) = run_scenario(&path, &["simulation.RunTime=0.005"]);
    let csv = Csv::read(&dir.file("dcqcn-incast-15to1-cc-rate-0.csv"));
    let (t, host, rate) = (csv.col("sim_time_sec"), csv.col("host"), csv.col("rate_bps"));
    let mut by_host: BTreeMap<u32, (f64, u32)> = BTreeMap::new();
    for r in &csv.rows {
        if sec_ps(&r[t]) < 3 * PS_PER_SEC / 1000 {
            continue;
        }
        let e = by_host.entry(r[host].parse().expect("a host")).or_default();
        e.0 += r[rate].parse::<f64>().expect("a rate") / 1e9;
        e.1 += 1;
    }
    assert_eq!(by_host.len(), 15, "{by_host:?}");
    let means: Vec<f64> = by_host.values().map(|(sum, n)| sum / *n as f64).collect();
    let total: f64 = means.iter().sum();
    let share = 400.0 / 15.0;
    assert!(
        means.iter().all(|m| (m - share).abs() <= 0.25 * share) && (total - 400.0).abs() <= 40.0,
        "mean Rc per sender {means:.1?} Gbps, {total:.1} together"
    );
}
