//! ECN marking: two senders at line rate into one port grow its queue by one frame every
//! serialization, so the depth each packet finds is known exactly.

use super::*;
use engine::units::Size;
use models::fabric::SwitchConfig;
use models::fabric::switch_config::EcnConfig;
use testkit::fabric::{Offer, TestKit, TestKitPlugin, fabric_app, fabric_app_with, run_for, switch_totals};

fn ecn_switch() -> SwitchConfig {
    let mut enabled = [false; 8];
    enabled[2] = true;
    SwitchConfig {
        Ecn: EcnConfig {
            Enabled: enabled,
            Kmin: Size(20_000),
            Kmax: Size(40_000),
            Pmax: 0.5,
        },
        ..SwitchConfig::default()
    }
}

#[test]
fn marks_start_past_kmin_and_cover_everything_past_kmax() {
    // h0 and h1 send 60 frames of 1000 B (20 ns) each, class 2 (lossy, ECN on), to h2. Frame i
    // of both arrives at the same instant, h0's first (its link is the lower event source), and
    // the port sends one frame per 20 ns from the first arrival. h0's frame 0 goes straight out,
    // h1's frame 0 finds an empty queue; after that the queue gains one frame per instant, so
    // h0's frame i finds i x 1000 B ahead of it and h1's frame i finds (i + 1) x 1000 B.
    let offers = (0..2)
        .map(|h| Offer {
            host: h,
            dst: 2,
            class: 2,
            packet_bytes: 1000,
            rate: Rate::gbps(400),
            start: SimTime::ZERO,
            count: 60,
        })
        .collect();
    let mut app = fabric_app_with(
        star(3),
        ecn_switch(),
        TestKitPlugin {
            offers,
            pauses: vec![],
            trace: true,
        },
    );
    run_for(&mut app, SimTime::from_us(20));
    let kit = app.world.resource::<TestKit>();
    assert_eq!(kit.trace.len(), 120);
    let depth = |src: u32, i: u32| -> u64 {
        match (src, i) {
            (_, 0) => 0,
            (0, i) => i as u64 * 1000,
            (_, i) => (i as u64 + 1) * 1000,
        }
    };
    let mut between = (0, 0);
    for a in &kit.trace {
        let d = depth(a.src, a.psn);
        if d <= 20_000 {
            assert!(!a.ce, "depth {d} is not above Kmin: {a:?}");
        } else if d > 40_000 {
            assert!(a.ce, "depth {d} is above Kmax: {a:?}");
        } else {
            between.0 += 1;
            between.1 += a.ce as u32;
        }
    }
    // 40 frames found a depth between the thresholds (p from 0.025 to 0.5, ~10 expected marked).
    assert_eq!(between.0, 40);
    assert!(between.1 > 0 && between.1 < 40, "{between:?}");
    // 39 frames found more than Kmax.
    let sw = switch_totals(&app.world);
    assert_eq!(sw.ecn_marked, 39 + between.1 as u64);
    assert_eq!(kit.sinks[2].ce_marked, sw.ecn_marked);
}

#[test]
fn no_marks_while_the_queue_stays_below_kmin() {
    // One sender at line rate: the port sends as fast as frames arrive, so each frame finds an
    // empty queue and is its only occupant, for an instant, before it goes on the wire.
    let offer = Offer {
        host: 0,
        dst: 2,
        class: 2,
        packet_bytes: 1000,
        rate: Rate::gbps(400),
        start: SimTime::ZERO,
        count: 1000,
    };
    let mut app = fabric_app(star(3), ecn_switch(), vec![offer]);
    run_for(&mut app, SimTime::from_us(40));
    assert_eq!(app.world.resource::<TestKit>().sinks[2].packets, 1000);
    let sw = switch_totals(&app.world);
    assert_eq!((sw.ecn_marked, sw.peak_class_queue_bytes[2]), (0, 1000));
}
