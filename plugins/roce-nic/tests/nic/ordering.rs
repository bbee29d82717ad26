//! One WQE of a connection on the wire at a time (the spec's "WQEs", step 2): ten posted at once
//! wait at the NIC in post order, each starting when the one ahead completes.

use crate::Figures;
use crate::common::*;
use engine::prelude::*;
use models::fabric::SwitchConfig;
use models::wire::ROCE_ACK_BYTES;
use roce_nic::RoceNicConfig;

#[test]
fn ten_wqes_on_one_connection_go_one_at_a_time_in_post_order() {
    const N: u64 = 10;
    let mut app = star_app(
        2,
        RoceNicConfig::default(),
        SwitchConfig::default(),
        DriverConfig::new(vec![(0, 1)], N),
        Tap::tracing(),
    );
    run(&mut app, SimTime::from_us(300));
    let w = &app.world;
    assert_each_completes_once(w);
    let f = Figures::defaults();
    let log = w.resource::<DriverLog>();
    let done = completions_of(log, 0);
    let numbers: Vec<u64> = done.iter().map(|d| d.number).collect();
    assert_eq!(numbers, (1..=N).collect::<Vec<_>>(), "completions in post order");

    // Every WQE's own part (fetch of its first packet, the network, the ACK) is the same as a
    // lone WQE's: the link, the port and PCIe are idle when it starts.
    let own = f.fetch(4096) + f.network(WQE_BYTES) + f.across(ROCE_ACK_BYTES as u64);
    let posted = log.established[0].1;
    for (k, d) in done.iter().enumerate() {
        let t = d.times;
        assert!(t.monotonic(), "WQE {}", d.number);
        assert_eq!(t.posted, posted);
        // The ten doorbells queue on the host-to-NIC direction: the k-th (from 0) is at the NIC
        // after k + 1 TLPs of 116 B, then L.
        assert_eq!(t.at_nic, posted + SimTime(f.p(116).0 * (k as u64 + 1)) + f.l());
        assert_eq!(t.completed - t.started, own, "WQE {}", d.number);
        if k > 0 {
            let ahead = done[k - 1].times;
            assert!(t.started >= ahead.completed);
            // It starts the instant the one ahead completes: the NIC wastes no time.
            assert_eq!(t.started, ahead.completed);
        } else {
            assert_eq!(t.started, t.at_nic);
        }
    }
    // Wait at the NIC grows by one WQE's own time per place in the queue (less the doorbells'
    // stagger): the 10th waited for nine.
    let last = done[9].times;
    assert_eq!(last.started, done[0].times.started + SimTime(own.0 * 9));

    // On the wire: WQE k owns PSNs 62k .. 62k + 61, and every one of its packets left the
    // Initiator after the WQE ahead completed and reached the Responder before it completed.
    let seen = &w.resource::<Tap>().seen;
    assert_eq!(seen.len() as u64, 62 * N);
    for s in seen {
        let k = (s.pkt.psn / 62) as usize;
        let t = done[k].times;
        assert!(s.pkt.sent_at >= t.started && s.at <= t.last_rx, "psn {}", s.pkt.psn);
        if k > 0 {
            assert!(s.pkt.sent_at >= done[k - 1].times.completed, "psn {}", s.pkt.psn);
        }
    }
    assert_eq!(nic_counters(w, 1).payload_bytes_received, N * WQE_BYTES);
}

#[test]
fn a_queue_pair_keeps_one_retransmission_timer_whatever_the_wqes() {
    // Each WQE arms a 100 us timeout when its last packet leaves; ten WQEs of about 11 us each
    // complete well inside it. The queue pair's one pending timer re-arms itself for the latest
    // deadline instead of leaving one event per WQE in the heap.
    const N: u64 = 10;
    let make = || {
        star_app(
            2,
            RoceNicConfig::default(),
            SwitchConfig::default(),
            DriverConfig::new(vec![(0, 1)], N),
            Tap::tracing(),
        )
    };
    let mut app = make();
    run(&mut app, SimTime::from_us(300));
    let last = completions_of(app.world.resource::<DriverLog>(), 0)[N as usize - 1]
        .times
        .completed;
    assert!(
        last < SimTime::from_us(150),
        "all ten done long before the first timeout"
    );
    let mut app = make();
    run(&mut app, last + SimTime(1));
    let pending = app.world.resource::<EventQueue>().pending();
    assert_eq!(completions_of(app.world.resource::<DriverLog>(), 0).len() as u64, N);
    assert!(
        pending <= 2,
        "{pending} events pending after the last completion (one timer, no per-WQE ones)"
    );
    assert_eq!(nic_counters(&app.world, 0).timeouts, 0);
}

/// The fabric's handler holds the NICs while events run and puts them back whenever the loop
/// stops: a run cut into 200 segments (a stop every 1.5 us, mid-WQE) must give the same
/// completions, counters and event count as one segment, with the NICs in the world after each.
#[test]
fn a_run_cut_into_segments_is_the_same_run() {
    let build = || {
        star_app(
            3,
            RoceNicConfig::default(),
            SwitchConfig::default(),
            DriverConfig::new(vec![(0, 1), (2, 1)], 4),
            Tap::default(),
        )
    };
    let stop = SimTime::from_us(300);
    let mut whole = build();
    let one = run(&mut whole, stop);
    let mut cut = build();
    let many = cut.run(RunOptions {
        stop,
        beacon_interval: SimTime::from_ns(1_500),
        progress: None,
    });
    assert_eq!(many.beacons, 200);
    assert_eq!(one.events, many.events);
    let done = |app: &App| -> Vec<(u32, u64, SimTime)> {
        let log = app.world.resource::<DriverLog>();
        log.completions.iter().map(|d| (d.connection, d.number, d.at)).collect()
    };
    assert_eq!(done(&whole).len(), 8, "every WQE completed");
    assert_eq!(done(&whole), done(&cut));
    for host in 0..3 {
        assert_eq!(nic_counters(&whole.world, host), nic_counters(&cut.world, host));
        assert_eq!(
            pcie(&whole.world, host).host_to_nic.bytes,
            pcie(&cut.world, host).host_to_nic.bytes
        );
    }
}
