//! A packet's latency is the sum of its serializations, propagation delays and forwarding
//! latencies, exactly, in picoseconds.

use super::*;
use models::fabric::SwitchConfig;
use models::topology::{LeafSpineTopology, LinkOverride};
use testkit::fabric::{Offer, TestKit, fabric_app, run_for};

#[test]
fn star_latency_is_two_serializations_two_delays_and_one_forwarding() {
    // 4154 B at 400 Gbps: 4154 x 8 / 400e9 s = 83,080 ps on each link; 1 us per link; 500 ns in
    // the switch. Store and forward: 2 x 83,080 + 2 x 1,000,000 + 500,000 = 2,666,160 ps.
    assert_eq!(T, Rate::gbps(400).serialization_time(FRAME as u64));
    let offer = Offer {
        host: 0,
        dst: 1,
        class: 1,
        packet_bytes: FRAME,
        rate: Rate::gbps(400),
        start: SimTime::ZERO,
        count: 10,
    };
    let mut app = fabric_app(star(2), SwitchConfig::default(), vec![offer]);
    run_for(&mut app, SimTime::from_us(10));
    let s = &app.world.resource::<TestKit>().sinks[1];
    assert_eq!(s.packets, 10);
    assert_eq!((s.min_latency, s.max_latency), (SimTime(2_666_160), SimTime(2_666_160)));
    // Back to back at line rate the switch never queues: arrivals are one serialization apart.
    assert_eq!(s.first_arrival, Some(SimTime(2_666_160)));
    assert_eq!(s.last_arrival, SimTime(2_666_160) + SimTime(9 * T.0));
}

#[test]
fn the_spec_figure_253596_bytes_take_5071920_ps() {
    // 253,596 B x 8 / 400 Gbps = 5,071,920 ps; one such frame across a star takes that twice
    // plus 2 us of propagation and 500 ns in the switch.
    assert_eq!(ser400(253_596), SimTime(5_071_920));
    let offer = Offer {
        host: 1,
        dst: 0,
        class: 0,
        packet_bytes: 253_596,
        rate: Rate::gbps(400),
        start: SimTime::from_us(3),
        count: 1,
    };
    let mut app = fabric_app(star(2), SwitchConfig::default(), vec![offer]);
    run_for(&mut app, SimTime::from_us(30));
    let s = &app.world.resource::<TestKit>().sinks[0];
    assert_eq!(s.min_latency, SimTime(2 * 5_071_920 + 2_000_000 + 500_000));
    assert_eq!(s.first_arrival, Some(SimTime::from_us(3) + s.min_latency));
}

#[test]
fn leaf_spine_latency_sums_four_hops() {
    // h0 on leaf0 to h2 on leaf1: host link (100 Gbps, 1 us), leaf0-spine and spine-leaf1
    // (400 Gbps, 2 us), host link again, through three switches of 500 ns each.
    // 4154 B: 332,320 ps at 100 Gbps, 83,080 ps at 400 Gbps.
    // 2 x 332,320 + 2 x 83,080 + 2 x 1 us + 2 x 2 us + 3 x 500 ns = 8,330,800 ps.
    let topo = TopologyConfig::LeafSpine(LeafSpineTopology {
        leaves: 2,
        spines: 2,
        hosts_per_leaf: 2,
        link_rate: Rate::gbps(400),
        link_delay: Duration::from_us(2),
        host_link: Some(LinkOverride {
            rate: Some(Rate::gbps(100)),
            delay: Some(Duration::from_us(1)),
        }),
        spine_link: None,
    });
    assert_eq!(Rate::gbps(100).serialization_time(FRAME as u64), SimTime(332_320));
    let offers = (0..4)
        .map(|i| Offer {
            host: i % 2,
            dst: 2 + i % 2,
            class: 1,
            packet_bytes: FRAME,
            rate: Rate::gbps(10),
            start: SimTime::from_us(i as u64),
            count: 3,
        })
        .collect();
    let mut app = fabric_app(topo, SwitchConfig::default(), offers);
    run_for(&mut app, SimTime::from_us(50));
    let kit = app.world.resource::<TestKit>();
    for dst in [2, 3] {
        let s = &kit.sinks[dst];
        assert_eq!(s.packets, 6);
        assert_eq!(
            (s.min_latency, s.max_latency),
            (SimTime(8_330_800), SimTime(8_330_800)),
            "host {dst}"
        );
    }
}
