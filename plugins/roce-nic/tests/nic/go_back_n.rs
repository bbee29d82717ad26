//! Go-back-N after a loss: a NAK when a gap shows, the retransmission timeout when nothing
//! follows the lost packet, and many losses on a lossy class under incast. Single losses are
//! injected by the tap (it drops a chosen packet once before the NIC sees it), so the recovery's
//! timing can be derived exactly.

use crate::Figures;
use crate::common::*;
use engine::prelude::*;
use models::fabric::SwitchConfig;
use models::wire::ROCE_ACK_BYTES;
use roce_nic::RoceNicConfig;
use testkit::fabric::switch_totals;

/// One spec WQE from host 0 to host 1, the tap dropping PSN `psn` once at host 1.
fn one_wqe_losing(psn: u32) -> App {
    let mut tap = Tap::tracing();
    tap.drop_once.insert((1, psn));
    let mut app = star_app(
        2,
        RoceNicConfig::default(),
        SwitchConfig::default(),
        DriverConfig::new(vec![(0, 1)], 1),
        tap,
    );
    // Long enough for one retransmission timeout and the resend after it.
    run(
        &mut app,
        SimTime::from_us(300) + RoceNicConfig::default().RetransmitTimeout.0,
    );
    app
}

#[test]
fn a_gap_draws_one_nak_and_the_sender_goes_back_to_it() {
    let app = one_wqe_losing(10);
    let w = &app.world;
    let f = Figures::defaults();
    assert_each_completes_once(w);
    let t = w.resource::<DriverLog>().completions[0].times;
    let s = f.s(4154);
    // Packet k (k < 61) reaches the Responder at first_tx + (k + 2) s + 2D + F (see
    // `Figures::network`). PSN 10 is lost; PSN 11 arrives out of sequence and draws a NAK for
    // 10, which crosses the idle star back (62 B). By then the Initiator has sent all 62
    // packets (the last began at first_tx + 61 s = 5.07 us, the NAK lands at 6.08 us).
    let nak_at = t.first_tx + SimTime(s.0 * 13) + f.d + f.d + f.f + f.across(ROCE_ACK_BYTES as u64);
    assert!(t.first_tx + SimTime(s.0 * 61) < nak_at);
    // It goes back to PSN 10: 52 packets again (51 full and the 144 B one, 209,040 B), fetched
    // again over the now idle PCIe, then across the star, then the ACK.
    let resent = 51 * 4096 + 144;
    assert_eq!(
        t.completed,
        nak_at + f.fetch(4096) + f.network(resent) + f.across(ROCE_ACK_BYTES as u64)
    );
    let c = nic_counters(w, 0);
    assert_eq!((c.retransmitted_packets, c.timeouts), (52, 0));
    assert_eq!(c.data_packets_sent, 62 + 52);
    // The Responder refused PSNs 11 to 61 (51), answered the gap with one NAK, and took every
    // byte once, in order: it wrote 250,000 B to host memory.
    let r = nic_counters(w, 1);
    assert_eq!((r.out_of_sequence, r.naks_sent, r.acks_sent), (51, 1, 1));
    assert_eq!(r.payload_bytes_received, WQE_BYTES);
    assert_eq!(pcie(w, 1).nic_to_host.bytes, WQE_BYTES);
    // The Initiator fetched the resent payload again: doorbell + WQE + resent bytes.
    assert_eq!(pcie(w, 0).host_to_nic.bytes, 92 + WQE_BYTES + resent);
    let tap = w.resource::<Tap>();
    assert_eq!((tap.dropped, tap.seen.len()), (1, 62 + 52));
}

#[test]
fn a_lost_last_packet_is_resent_after_the_timeout() {
    let app = one_wqe_losing(61);
    let w = &app.world;
    let f = Figures::defaults();
    let nic = RoceNicConfig::default();
    assert_each_completes_once(w);
    let t = w.resource::<DriverLog>().completions[0].times;
    // Nothing follows the last packet, so no NAK: the timer, armed when that packet left the
    // port (first_tx + 5,071,920 ps), fires RetransmitTimeout (67.1 ms) later. With one ACK per
    // WQE nothing was acknowledged, so the whole WQE goes again: fetch, network, ACK.
    let deadline = t.first_tx + f.wqe_serialization(WQE_BYTES) + nic.RetransmitTimeout.0;
    assert_eq!(
        t.completed,
        deadline + f.fetch(4096) + f.network(WQE_BYTES) + f.across(ROCE_ACK_BYTES as u64)
    );
    let c = nic_counters(w, 0);
    assert_eq!((c.retransmitted_packets, c.timeouts), (62, 1));
    // The Responder ignored the 61 duplicates (no AckReq on them) and acknowledged PSN 61 once.
    let r = nic_counters(w, 1);
    assert_eq!((r.out_of_sequence, r.naks_sent, r.acks_sent), (0, 0, 1));
    assert_eq!(r.payload_bytes_received, WQE_BYTES);
    assert_eq!(pcie(w, 1).nic_to_host.bytes, WQE_BYTES);
}

#[test]
fn incast_on_a_lossy_class_drops_and_go_back_n_delivers_everything_once() {
    // Class 1 lossy on the switch with a drop-tail limit of 16 KiB (under four full frames):
    // two Initiators at 400 Gbps into one 400 Gbps port overflow it within a few packets.
    let mut switch = SwitchConfig::default();
    switch.Lossless[1] = false;
    switch.LossyQueueLimit = Size(16 << 10);
    let mut driver = DriverConfig::new(vec![(0, 1), (2, 1)], 3);
    driver.class = 1;
    let mut app = star_app(3, RoceNicConfig::default(), switch, driver, Tap::tracing());
    run(&mut app, SimTime::from_us(5_000));
    let w = &app.world;
    assert_each_completes_once(w);
    let log = w.resource::<DriverLog>();
    for conn in 0..2 {
        let numbers: Vec<u64> = completions_of(log, conn).iter().map(|d| d.number).collect();
        assert_eq!(numbers, vec![1, 2, 3], "connection {conn}");
    }
    let sw = switch_totals(w);
    assert!(sw.drops > 0, "no drop: the test shows nothing");
    assert_eq!(sw.headroom_drops, 0);
    let resent: u64 = (0..3).map(|h| nic_counters(w, h).retransmitted_packets).sum();
    assert!(resent > 0);
    // The Responder accepted each byte once and in order, and wrote exactly that to memory,
    // though more than that reached it (resent packets after a gap).
    let r = nic_counters(w, 1);
    assert_eq!(r.payload_bytes_received, 6 * WQE_BYTES);
    assert_eq!(pcie(w, 1).nic_to_host.bytes, 6 * WQE_BYTES);
    let arrived: u64 = w.resource::<Tap>().seen.iter().map(|s| s.pkt.payload as u64).sum();
    assert!(arrived > 6 * WQE_BYTES);
    // Every data packet went as class 1 (CS1, DSCP 8).
    assert!(w.resource::<Tap>().seen.iter().all(|s| s.pkt.dscp() == 8));
    assert_eq!(r.ingress_drops, 0);
}
