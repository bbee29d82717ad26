//! Incast: four senders at line rate into one receiver port of a star. On a lossless class PFC
//! holds every packet; on a lossy class the queue overflows and the switch drops.

use super::*;
use engine::beacon::BeaconColumns;
use models::fabric::SwitchConfig;
use testkit::fabric::{Offer, TestKit, fabric_app, run_for, switch_totals};

const PER_SENDER: u64 = 2000;

fn incast(class: u8) -> Vec<Offer> {
    (0..4)
        .map(|h| Offer {
            host: h,
            dst: 4,
            class,
            packet_bytes: FRAME,
            rate: Rate::gbps(400),
            start: SimTime::ZERO,
            count: PER_SENDER,
        })
        .collect()
}

#[test]
fn lossless_incast_pauses_and_delivers_everything() {
    let cfg = SwitchConfig::default();
    let mut app = fabric_app(star(5), cfg.clone(), incast(1));
    // The receiver's link carries 8000 frames one after another: 8000 x 83,080 ps = 664.6 us.
    run_for(&mut app, SimTime::from_us(1000));
    let kit = app.world.resource::<TestKit>();
    let sw = switch_totals(&app.world);
    assert_eq!(kit.sent(), 4 * PER_SENDER);
    assert_eq!(kit.sinks[4].packets, 4 * PER_SENDER, "every packet delivered");
    assert_eq!((sw.drops, sw.headroom_drops), (0, 0));
    // Each sender alone fills its ingress counter past XOFF: 3/4 of what it sends stays queued.
    assert!(sw.pfc_pause_sent >= 4, "{sw:?}");
    for h in 0..4 {
        assert!(kit.sinks[h].pause_received >= 1, "sender {h} was paused");
        assert_eq!(kit.sinks[h].pause_received, kit.sinks[h].resume_received, "and resumed");
    }
    assert!(sw.peak_buffer_bytes <= cfg.BufferSize.0);
    // PFC bounds each ingress counter by XOFF + headroom, so the buffer by four of them.
    assert!(
        sw.peak_buffer_bytes <= 4 * (cfg.PfcXoff.0 + cfg.PfcHeadroom.0),
        "{sw:?}"
    );
    // XON leaves enough queued to cover a RESUME's round trip: the bottleneck never idles, so
    // the 8000 frames leave one serialization apart.
    let s = &kit.sinks[4];
    assert_eq!(s.last_arrival - s.first_arrival.unwrap(), SimTime(7999 * T.0));
    // The beacon columns sum the same counters.
    let cols = app.world.resource::<BeaconColumns>();
    let named: Vec<(&str, u64)> = cols.names().into_iter().zip(cols.values(&app.world)).collect();
    assert!(named.contains(&("switch_packets", 4 * PER_SENDER)), "{named:?}");
    assert!(named.contains(&("switch_drops", 0)));
    assert!(named.contains(&("pfc_pause_sent", sw.pfc_pause_sent)));
    assert!(named.contains(&("pfc_pause_received", 0)), "the hosts send no PFC");
}

#[test]
fn lossy_incast_drops_and_accounts_for_every_packet() {
    let cfg = SwitchConfig {
        LossyQueueLimit: engine::units::Size(200 * 1024),
        ..SwitchConfig::default()
    };
    let mut app = fabric_app(star(5), cfg, incast(2));
    run_for(&mut app, SimTime::from_us(1000));
    let kit = app.world.resource::<TestKit>();
    let sw = switch_totals(&app.world);
    assert_eq!(sw.pfc_pause_sent, 0, "no PFC on a lossy class");
    assert!(sw.drops > 0);
    assert_eq!(sw.headroom_drops, 0);
    assert_eq!(kit.sent(), 4 * PER_SENDER);
    assert_eq!(kit.sent(), kit.delivered() + sw.drops, "sent = delivered + dropped");
    // The senders never pause, so they send for 2000 serializations; the bottleneck carries one
    // frame per serialization meanwhile, then drains the full queue: floor(204,800 / 4154) = 49
    // frames. Delivered = 2000 + 49, give or take the frames in service at either end.
    let delivered = kit.delivered() as i64;
    assert!((delivered - 2049).abs() <= 2, "delivered {delivered}");
    assert!(sw.peak_class_queue_bytes[2] <= 200 * 1024);
}

#[test]
fn headroom_use_stays_within_the_pause_round_trip() {
    // h0 sends class 1 at line rate to h1, which pauses class 1 from 5 us on: the switch's
    // counter for h0 grows at the full line rate, the worst case. After it passes XOFF, the
    // switch's serializer towards h0 is idle, so the PAUSE (60 B, 1,200 ps) leaves at once and
    // reaches h0 1 us later; h0 finishes the frame in service (at most T) and what it sent
    // until then arrives within 1 us + 500 ns. So the counter ends above XOFF by at most the
    // frame that passed it, plus (1,200 ps + 1 us + T + 1.5 us) x 50 B/ns; at least the 2.5 us
    // of line rate are in flight whatever the frame alignment.
    let cfg = SwitchConfig::default();
    let offer = Offer {
        host: 0,
        dst: 1,
        class: 1,
        packet_bytes: FRAME,
        rate: Rate::gbps(400),
        start: SimTime::ZERO,
        count: 400,
    };
    let pause = testkit::fabric::HostPause {
        host: 1,
        class: 1,
        from: SimTime::from_us(5),
        until: SimTime::from_us(500),
    };
    let kit = testkit::fabric::TestKitPlugin {
        offers: vec![offer],
        pauses: vec![pause],
        trace: false,
    };
    let mut app = testkit::fabric::fabric_app_with(star(2), cfg.clone(), kit);
    run_for(&mut app, SimTime::from_us(100));
    let sw = switch_totals(&app.world);
    assert_eq!((sw.pfc_pause_sent, sw.headroom_drops), (1, 0));
    let above = sw.peak_ingress_class_bytes[1] - cfg.PfcXoff.0;
    let window = SimTime(1_200) + SimTime::from_us(1) + T + SimTime::from_ns(1_500);
    let most = FRAME as u64 + window.0 / 20;
    assert!(above <= most, "{above} > {most}");
    assert!(above >= 125_000, "{above}");
    assert!(above <= cfg.PfcHeadroom.0);
    // It came to 132,486 B here: a 128 KiB headroom would have dropped a lossless frame.
    assert!(above > 128 * 1024, "{above}");
}
