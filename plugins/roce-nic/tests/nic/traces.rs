//! The NIC's named trace points (`models::trace`), seen by a subscriber the NIC does not know:
//! one WQE whose PSN 10 the tap drops once, so every point but PFC fires, each a known number
//! of times.

use crate::common::*;
use engine::prelude::*;
use models::fabric::SwitchConfig;
use models::packet::PacketKind;
use models::trace::{MemoryTracer, TracePoint, Tracers};
use roce_nic::RoceNicConfig;

#[test]
fn every_trace_point_fires_as_often_as_the_run_says() {
    let mut tap = Tap::default();
    tap.drop_once.insert((1, 10));
    let mut app = star_app(
        2,
        RoceNicConfig::default(),
        SwitchConfig::default(),
        DriverConfig::new(vec![(0, 1)], 1),
        tap,
    );
    let tracer = MemoryTracer::default();
    app.world.resource_mut::<Tracers>().subscribe(tracer.clone());
    run(&mut app, SimTime::from_us(300));
    let w = &app.world;
    assert_each_completes_once(w);
    let t = w.resource::<DriverLog>().completions[0].times;
    let ev = tracer.events();
    let at = |point: TracePoint, node: u32| ev.iter().filter(move |e| e.point == point && e.node == node);
    let kinds = |point: TracePoint, node: u32| {
        at(point, node)
            .map(|e| e.packet.expect("a frame").kind)
            .collect::<Vec<_>>()
    };
    let count = |v: &[PacketKind], k: PacketKind| v.iter().filter(|&&x| x == k).count();

    // Initiator: sends the connection request and acknowledgment, 62 data packets, then the 52
    // from PSN 10 again (see go_back_n.rs); receives the response, the NAK and the ACK.
    let sent0 = kinds(TracePoint::PacketSent, 0);
    assert_eq!(sent0.len(), 2 + 62 + 52);
    assert_eq!(count(&sent0, PacketKind::Data), 114);
    let psns: Vec<u32> = at(TracePoint::PacketSent, 0)
        .filter_map(|e| e.packet.filter(|p| p.kind == PacketKind::Data).map(|p| p.psn))
        .collect();
    assert_eq!(psns, (0..62).chain(10..62).collect::<Vec<u32>>());
    assert_eq!(
        kinds(TracePoint::PacketReceived, 0),
        vec![PacketKind::ConnectResponse, PacketKind::Nak, PacketKind::Ack]
    );
    // Responder: receives the request and acknowledgment and every data packet the tap let
    // through (61 + 52), refuses PSNs 11 to 61 as out of sequence, and sends the response, the
    // NAK and the ACK.
    let rx1 = kinds(TracePoint::PacketReceived, 1);
    assert_eq!((rx1.len(), count(&rx1, PacketKind::Data)), (2 + 61 + 52, 61 + 52));
    let dropped: Vec<u32> = at(TracePoint::PacketDropped, 1)
        .map(|e| e.packet.expect("a frame").psn)
        .collect();
    assert_eq!(dropped, (11..62).collect::<Vec<u32>>());
    assert_eq!(
        kinds(TracePoint::PacketSent, 1),
        vec![PacketKind::ConnectResponse, PacketKind::Nak, PacketKind::Ack]
    );
    // A trace event's time is when its frame starts on the wire: the first data packet's is
    // the WQE's `first_tx`.
    let first = at(TracePoint::PacketSent, 0).find(|e| e.packet.is_some_and(|p| p.kind == PacketKind::Data));
    assert_eq!(first.map(|e| e.time), Some(t.first_tx));
    // The WQE points, named by (connection, number), at its posting and its completion.
    let wqe = |p| at(p, 0).map(|e| (e.time, e.wqe)).collect::<Vec<_>>();
    assert_eq!(wqe(TracePoint::WqePosted), vec![(t.posted, Some((0, 1)))]);
    assert_eq!(wqe(TracePoint::WqeCompleted), vec![(t.completed, Some((0, 1)))]);
    // No PFC on an idle star, and nothing else.
    assert!(
        !ev.iter()
            .any(|e| matches!(e.point, TracePoint::PfcSent | TracePoint::PfcReceived))
    );
    assert_eq!(ev.len(), 116 + 3 + 115 + 3 + 51 + 2);
}
