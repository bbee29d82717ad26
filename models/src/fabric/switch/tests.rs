//! The switch's decisions on their own, without a fabric: thresholds, drops and frames.

use super::*;
use engine::units::Size;

fn cfg() -> SwitchConfig {
    SwitchConfig {
        PfcXoff: Size(10_000),
        PfcXon: Size(5_000),
        PfcHeadroom: Size(4_000),
        LossyQueueLimit: Size(3_000),
        ..SwitchConfig::default()
    }
}

fn pkt(class: u8, bytes: u32) -> Packet {
    Packet {
        class,
        bytes,
        ecn: ecn::ECT0,
        ..Default::default()
    }
}

#[test]
fn pause_past_xoff_resume_at_xon() {
    let mut s = Switch::new(10, "s".into(), 3, &cfg(), 1);
    let mut f = Frames::default();
    // Ten 1000 B packets reach XOFF exactly (10,000 B): not past it, no PAUSE.
    for _ in 0..10 {
        assert!(s.enqueue(0, 2, pkt(1, 1000), &mut f));
    }
    assert_eq!(f.as_slice().len(), 0);
    // The eleventh passes it: one PAUSE of class 1 out of ingress port 0.
    assert!(s.enqueue(0, 2, pkt(1, 1000), &mut f));
    assert_eq!(f.as_slice().len(), 1);
    let (port, class, pause) = f.as_slice()[0];
    let frame = s.pfc_frame(SimTime::ZERO, class, pause);
    assert_eq!(
        (port, frame.kind, frame.class, frame.aux, frame.bytes),
        (0, PacketKind::Pfc, 1, 1, 60)
    );
    assert!(s.upstream_paused(0, 1));
    // More arrivals do not repeat it.
    let mut f = Frames::default();
    assert!(s.enqueue(0, 2, pkt(1, 1000), &mut f));
    assert_eq!(f.as_slice().len(), 0);
    // 12,000 B held; draining to 5,000 B (XON) takes 7 departures, the 7th sends RESUME.
    for i in 1..=7 {
        let mut f = Frames::default();
        assert!(s.dequeue(2, &mut f).is_some());
        assert_eq!(f.as_slice().len(), (i == 7) as usize, "departure {i}");
    }
    assert!(!s.upstream_paused(0, 1));
    assert_eq!((s.counters.pfc_pause_sent, s.counters.pfc_resume_sent), (1, 1));
    assert_eq!((s.ingress_bytes(0, 1), s.buffer_bytes()), (5_000, 5_000));
}

#[test]
fn lossless_drops_only_past_headroom() {
    let mut s = Switch::new(10, "s".into(), 3, &cfg(), 1);
    let mut f = Frames::default();
    // XOFF + headroom = 14,000 B: fourteen 1000 B packets fit, the fifteenth does not.
    for _ in 0..14 {
        assert!(s.enqueue(0, 2, pkt(0, 1000), &mut f));
    }
    assert!(!s.enqueue(0, 2, pkt(0, 1000), &mut f));
    assert_eq!((s.counters.headroom_drops, s.counters.drops), (1, 0));
    // Another ingress port has its own counter.
    assert!(s.enqueue(1, 2, pkt(0, 1000), &mut f));
}

#[test]
fn lossy_drop_tail_at_queue_limit() {
    let mut s = Switch::new(10, "s".into(), 3, &cfg(), 1);
    let mut f = Frames::default();
    for _ in 0..3 {
        assert!(s.enqueue(0, 2, pkt(4, 1000), &mut f));
    }
    assert!(!s.enqueue(1, 2, pkt(4, 1000), &mut f));
    assert_eq!(s.counters.drops, 1);
    assert_eq!(f.as_slice().len(), 0, "lossy classes never send PFC");
    // Another egress port's queue of the same class is separate.
    assert!(s.enqueue(0, 1, pkt(4, 1000), &mut f));
    assert_eq!(s.counters.peak_class_queue_bytes[4], 3_000);
    assert_eq!(s.counters.peak_buffer_bytes, 4_000);
}

#[test]
fn lossy_classes_cannot_take_the_lossless_reservation() {
    // 3 ports x 2 lossless classes x 14,000 B = 84,000 B reserved of 100,000 B: lossy traffic
    // gets 16,000 B however long its queues may be.
    let c = SwitchConfig {
        BufferSize: Size(100_000),
        LossyQueueLimit: Size(1 << 20),
        ..cfg()
    };
    let mut s = Switch::new(10, "s".into(), 3, &c, 1);
    let mut f = Frames::default();
    let admitted = (0..40).filter(|_| s.enqueue(0, 2, pkt(3, 1000), &mut f)).count();
    assert_eq!(admitted, 16);
}

#[test]
fn ecn_marks_by_queue_depth_only_on_enabled_capable_packets() {
    let mut c = cfg();
    c.LossyQueueLimit = Size(1 << 20);
    c.Ecn = EcnConfig {
        Enabled: [false, false, false, true, false, false, false, false],
        Kmin: Size(2000),
        Kmax: Size(4000),
        Pmax: 0.5,
    };
    let mut s = Switch::new(10, "s".into(), 3, &c, 1);
    let mut f = Frames::default();
    // Depths seen: 0, 1000, 2000 (at Kmin: never), then 3000 (p = 0.25), 4000 (p = 0.5), then
    // 5000.. (above Kmax: always).
    for _ in 0..3 {
        s.enqueue(0, 2, pkt(3, 1000), &mut f);
    }
    assert_eq!(s.counters.ecn_marked, 0);
    for _ in 0..2 {
        s.enqueue(0, 2, pkt(3, 1000), &mut f);
    }
    let before = s.counters.ecn_marked;
    for _ in 0..5 {
        s.enqueue(0, 2, pkt(3, 1000), &mut f);
    }
    assert_eq!(s.counters.ecn_marked, before + 5);
    // Not ECN-capable, or a class without ECN: never marked.
    s.enqueue(
        0,
        2,
        Packet {
            ecn: ecn::NOT_ECT,
            ..pkt(3, 1000)
        },
        &mut f,
    );
    s.enqueue(0, 1, pkt(2, 1000), &mut f);
    for _ in 0..6 {
        s.enqueue(0, 1, pkt(2, 1000), &mut f);
    }
    assert_eq!(s.counters.ecn_marked, before + 5);
    let marked = (0..10)
        .filter_map(|_| s.dequeue(2, &mut f))
        .filter(|p| p.is_ce())
        .count() as u64;
    assert_eq!(marked, before + 5);
}

#[test]
fn red_probability_holds_over_many_draws() {
    // At a depth half way between Kmin and Kmax the probability is Pmax / 2 = 0.25; over
    // 100,000 packets the fraction marked is within 1% of it (the standard error is 0.14%).
    let mut c = cfg();
    c.LossyQueueLimit = Size(1 << 30);
    c.BufferSize = Size(1 << 31);
    c.Ecn = EcnConfig {
        Enabled: [true; 8],
        Kmin: Size(2000),
        Kmax: Size(4000),
        Pmax: 0.5,
    };
    let mut s = Switch::new(10, "s".into(), 3, &c, 7);
    let mut f = Frames::default();
    s.enqueue(0, 2, pkt(5, 3000), &mut f);
    let n = 100_000;
    for _ in 0..n {
        s.enqueue(0, 2, pkt(5, 1000), &mut f);
        s.egress[2].queues[5].pop_back();
        s.egress[2].queue_bytes[5] -= 1000;
    }
    let frac = s.counters.ecn_marked as f64 / n as f64;
    assert!((frac - 0.25).abs() < 0.01, "{frac}");
}

#[test]
fn cut_through_is_enqueue_then_dequeue() {
    // A packet that finds its egress idle and empty skips the queue (`forward`). Against a twin
    // switch that queues and dequeues each packet: the same packets out (ECN marks included),
    // the same counters and peaks, the same PFC frames, over lossless and lossy classes, ECN on
    // and off (an empty queue is never marked), sizes that cross XOFF (PAUSE then RESUME in one
    // step) and drops.
    let mut config = cfg();
    config.Ecn.Enabled = [false, false, false, true, true, false, false, false];
    config.Ecn.Kmin = Size(0);
    let mut fast = Switch::new(10, "fast".into(), 3, &config, 7);
    let mut slow = Switch::new(10, "slow".into(), 3, &config, 7);
    for i in 0..400u32 {
        let p = pkt((i % 8) as u8, 200 + (i * 997) % 14_000);
        let (mut ff, mut fs) = (Frames::default(), Frames::default());
        let out_fast = fast.forward(0, 2, p, &mut ff);
        let out_slow = if slow.enqueue(0, 2, p, &mut fs) {
            slow.dequeue(2, &mut fs)
        } else {
            None
        };
        assert_eq!(out_fast, out_slow, "packet {i}");
        assert_eq!(ff.as_slice(), fs.as_slice(), "frames of packet {i}");
    }
    assert_eq!(fast.counters, slow.counters);
    assert!(fast.counters.drops > 0 && fast.counters.headroom_drops > 0 && fast.counters.pfc_pause_sent > 0);
    assert_eq!((fast.buffer_bytes(), slow.buffer_bytes()), (0, 0));
}

#[test]
fn cut_through_only_when_the_queue_would_hand_this_packet_straight_back() {
    // The gate of `forward`: a free serializer, nothing queued or pending on the port, the class
    // not paused, strict priority. Each condition broken on its own closes it; a packet let
    // through past a queued one would overtake it.
    use engine::event::EventQueue;
    use engine::units::Rate;
    let wired = |config: &SwitchConfig| {
        let mut q = EventQueue::new();
        let key = q.add_channel_type::<Packet>();
        let wires = (0..3)
            .map(|id| {
                let to = (id + 1, 0);
                LinkDirection::new(
                    &mut q,
                    id,
                    (10, id as u16),
                    to,
                    Rate::gbps(400),
                    SimTime(1_000),
                    engine::event::EventKind(0),
                    key,
                )
            })
            .collect();
        (Switch::new(10, "s".into(), 3, config, 1).with_wires(wires), q)
    };
    let now = SimTime(5_000);
    let (mut s, mut q) = wired(&cfg());
    assert!(s.can_cut_through(now, 2, 1), "idle, empty, unpaused");
    let mut f = Frames::default();
    assert!(s.enqueue(0, 2, pkt(3, 1000), &mut f));
    assert!(
        !s.can_cut_through(now, 2, 1),
        "a packet is queued on the port (another class)"
    );
    assert!(s.can_cut_through(now, 1, 1), "other ports are not affected");
    *s.tx_pending(1) = true;
    assert!(!s.can_cut_through(now, 1, 1), "a send is pending on the port");
    s.on_pfc(0, 4, true);
    assert!(!s.can_cut_through(now, 0, 4), "the class is paused downstream");
    assert!(s.can_cut_through(now, 0, 5), "another class is not");
    let end = s.wire_mut(0).launch(&mut q, now, pkt(5, 1000));
    assert!(!s.can_cut_through(now, 0, 5), "the serializer is busy");
    assert!(s.can_cut_through(end, 0, 5), "and free again when the frame is out");
    let dwrr = SwitchConfig {
        Scheduler: crate::fabric::switch_config::Scheduler::Dwrr { weights: [1; 8] },
        ..cfg()
    };
    let (s, _q) = wired(&dwrr);
    assert!(
        !s.can_cut_through(now, 2, 1),
        "DWRR keeps its round state: always queue"
    );
}

#[test]
fn each_port_keeps_the_id_of_the_wire_leaving_it() {
    // The warming finds a port's outgoing channel by `wire_ids` (the wire's own lines are not
    // yet loaded): the ids must be the wires' own, port by port, whatever their order.
    use engine::event::EventQueue;
    use engine::units::Rate;
    let mut q = EventQueue::new();
    let key = q.add_channel_type::<Packet>();
    let mut wires: Vec<LinkDirection> = (0..3)
        .map(|id| {
            let rate = Rate::gbps(400);
            LinkDirection::new(
                &mut q,
                id,
                (10, 0),
                (id + 1, 0),
                rate,
                SimTime(1_000),
                engine::event::EventKind(0),
                key,
            )
        })
        .collect();
    wires.rotate_left(1);
    let s = Switch::new(10, "s".into(), 3, &cfg(), 1).with_wires(wires);
    assert_eq!(s.wire_ids, [1, 2, 0]);
    for port in 0..3u16 {
        assert_eq!(s.wire(port).id, s.wire_ids[port as usize], "port {port}");
    }
}
