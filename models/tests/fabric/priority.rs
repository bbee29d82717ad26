//! Classes at a congested port: strict priority lets a higher class through, a paused class
//! stops while another flows, and DWRR shares by weight.

use super::*;
use models::fabric::SwitchConfig;
use models::fabric::switch_config::Scheduler;
use testkit::fabric::{HostPause, Offer, TestKit, TestKitPlugin, fabric_app, fabric_app_with, run_for, switch_totals};

#[test]
fn a_higher_class_overtakes_a_lower_one() {
    // h0 sends class 0 at 400 Gbps and h1 class 1 at 200 Gbps to h2: its port is 1.5x
    // oversubscribed. Class 1 waits at most for the class-0 frame in service, so its latency is
    // at most the unloaded one (2T + 2 us + 500 ns) plus T; class 0 queues behind it.
    let offers = vec![
        Offer {
            host: 0,
            dst: 2,
            class: 0,
            packet_bytes: FRAME,
            rate: Rate::gbps(400),
            start: SimTime::ZERO,
            count: 3000,
        },
        Offer {
            host: 1,
            dst: 2,
            class: 1,
            packet_bytes: FRAME,
            rate: Rate::gbps(200),
            start: SimTime::ZERO,
            count: 1000,
        },
    ];
    let mut app = fabric_app(star(3), SwitchConfig::default(), offers);
    run_for(&mut app, SimTime::from_us(1000));
    let kit = app.world.resource::<TestKit>();
    let s = &kit.sinks[2];
    assert_eq!((s.class_packets[0], s.class_packets[1]), (3000, 1000));
    let base = SimTime(2 * T.0 + 2_500_000);
    assert!(s.max_latency >= base);
    let high = s.mean_latency(1).unwrap();
    let low = s.mean_latency(0).unwrap();
    assert!(high <= base + T, "class 1 mean {high}");
    assert!(low >= base + SimTime(20 * T.0), "class 0 mean {low}");
    assert_eq!(switch_totals(&app.world).drops, 0);
}

#[test]
fn a_paused_class_stops_while_another_flows() {
    // h0 sends classes 0 and 1 to h1 at line rate (they share its link half and half). h1
    // pauses class 1 from 20 us to 60 us with real PFC frames.
    let offers = vec![
        Offer {
            host: 0,
            dst: 1,
            class: 0,
            packet_bytes: FRAME,
            rate: Rate::gbps(400),
            start: SimTime::ZERO,
            count: 100_000,
        },
        Offer {
            host: 0,
            dst: 1,
            class: 1,
            packet_bytes: FRAME,
            rate: Rate::gbps(400),
            start: SimTime::ZERO,
            count: 300,
        },
    ];
    let pause = HostPause {
        host: 1,
        class: 1,
        from: SimTime::from_us(20),
        until: SimTime::from_us(60),
    };
    let kit = TestKitPlugin {
        offers,
        pauses: vec![pause],
        trace: true,
    };
    let mut app = fabric_app_with(star(2), SwitchConfig::default(), kit);
    run_for(&mut app, SimTime::from_us(150));
    let kit = app.world.resource::<TestKit>();
    // The PAUSE (60 B, 1.2 ns) reaches the switch 1 us + 500 ns later; the class-1 frame then in
    // service (at most T) is the last to reach h1, 1 us after it leaves. The RESUME acts at
    // 61.5 us + 1.2 ns and its first frame reaches h1 one T and 1 us after that.
    let at_switch = SimTime::from_us(20) + SimTime(1_200) + SimTime::from_ns(1_500);
    let stopped = at_switch + T + SimTime::from_us(1);
    let resumed = SimTime::from_us(60) + SimTime(1_200) + SimTime::from_ns(1_500) + T + SimTime::from_us(1);
    let in_window = |class: u8, from: SimTime, to: SimTime| {
        kit.trace
            .iter()
            .filter(|a| a.class == class && a.time > from && a.time < to)
            .count() as u64
    };
    assert_eq!(in_window(1, stopped, resumed), 0, "class 1 stopped");
    assert!(in_window(1, SimTime::ZERO, stopped) > 0 && in_window(1, resumed, SimTime::MAX) > 0);
    // The switch holds class 1 until its counter passes XOFF and PAUSEs h0's class 1; from then
    // h0 sends class 0 alone, at line rate: 20 us / 83,080 ps = 240.7 frames from 40 to 60 us.
    let flowing = in_window(0, SimTime::from_us(40), SimTime::from_us(60));
    assert!((240..=241).contains(&flowing), "class 0 flowed {flowing} frames");
    assert_eq!(
        kit.sinks[1].class_packets[1], 300,
        "all of class 1 arrives after the RESUME"
    );
    // Two PAUSEs reach h0: class 1 during the pause, then class 0, which queues behind the
    // class-1 backlog once that drains first (strict priority) after the RESUME.
    assert_eq!(kit.sinks[0].pause_received, 2);
    assert_eq!(kit.sinks[0].resume_received, 2);
    let sw = switch_totals(&app.world);
    assert_eq!((sw.pfc_pause_received, sw.pfc_resume_received), (1, 1));
    assert_eq!((sw.drops, sw.headroom_drops), (0, 0));
}

#[test]
fn dwrr_shares_a_congested_port_by_weight() {
    // h0 (class 0) and h1 (class 1) both at line rate into h2, weights 1 and 3: while both are
    // backlogged (PFC keeps them so), class 1 gets 3/4 of the port and class 0 1/4.
    let cfg = SwitchConfig {
        Scheduler: Scheduler::Dwrr {
            weights: [1, 3, 1, 1, 1, 1, 1, 1],
        },
        ..SwitchConfig::default()
    };
    let offers = (0..2)
        .map(|h| Offer {
            host: h,
            dst: 2,
            class: h as u8,
            packet_bytes: FRAME,
            rate: Rate::gbps(400),
            start: SimTime::ZERO,
            count: 100_000,
        })
        .collect();
    let kit = TestKitPlugin {
        offers,
        pauses: vec![],
        trace: true,
    };
    let mut app = fabric_app_with(star(3), cfg, kit);
    run_for(&mut app, SimTime::from_us(500));
    let kit = app.world.resource::<TestKit>();
    // Count after the start-up, from 50 us to 450 us: 400 us / 83,080 ps = 4814.6 frames in all.
    let count = |c: u8| {
        kit.trace
            .iter()
            .filter(|a| a.class == c && a.time > SimTime::from_us(50) && a.time <= SimTime::from_us(450))
            .count() as f64
    };
    let (c0, c1) = (count(0), count(1));
    assert!(
        ((c0 + c1) - 400e6 / 83_080.0).abs() <= 2.0,
        "the port stays busy: {c0} + {c1}"
    );
    assert!((c1 / c0 - 3.0).abs() < 0.05, "class 1 / class 0 = {c1} / {c0}");
}
