//! Named trace points: a tracer subscribes through `models::trace::Tracers` without the NIC
//! knowing it, and sees every WQE posted and completed, every data packet sent, and PFC frames.

use models::trace::{MemoryTracer, TracePoint, Tracers};
use rdmasim_tests::{build_quiet, load, run_built, scenario_path};

#[test]
fn tracer_sees_every_point_the_nic_passes() {
    let loaded = load(&scenario_path("default.ron"), &["simulation.RunTime=0.0002"]);
    let mut app = build_quiet(&loaded);
    let tracer = MemoryTracer::default();
    app.world.resource_mut::<Tracers>().subscribe(tracer.clone());
    run_built(&mut app, &loaded);
    let app_state = app.world.resource::<scala_rdma::ScalaRdma>();
    // Every WQE the application posted passed `WqePosted` once, every completion `WqeCompleted`.
    assert!(app_state.rx_client > 0);
    assert_eq!(tracer.count(TracePoint::WqePosted) as u64, app_state.tx_client);
    assert_eq!(tracer.count(TracePoint::WqeCompleted) as u64, app_state.rx_client);
    // Every data packet on a host's egress wire passed `PacketSent` (62 per 250,000-byte WQE).
    let ports = app.world.resource::<engine::store::Store<models::nic::HostPort>>();
    let on_wire: u64 = ports.rows().iter().map(|p| p.wire.data_packets).sum();
    let events = tracer.events();
    let sent_data = events
        .iter()
        .filter(|e| e.point == TracePoint::PacketSent && e.packet.is_some_and(|p| p.kind == models::PacketKind::Data))
        .count() as u64;
    assert_eq!(sent_data, on_wire);
    // Times never go backwards within the trace.
    assert!(events.windows(2).all(|w| w[0].time <= w[1].time));
}

#[test]
fn no_subscriber_no_events_and_same_results() {
    // The trace points must not change the model: the same run with and without a tracer
    // completes the same WQEs.
    let loaded = load(&scenario_path("default.ron"), &["simulation.RunTime=0.0002"]);
    let run = |trace: bool| {
        let mut app = build_quiet(&loaded);
        if trace {
            app.world.resource_mut::<Tracers>().subscribe(MemoryTracer::default());
        }
        let stats = run_built(&mut app, &loaded);
        (stats.events, app.world.resource::<scala_rdma::ScalaRdma>().rx_client)
    };
    assert_eq!(run(false), run(true));
}
