//! Memory grows with what is in flight, never with simulated time: the world holds as many
//! entities after a run with three times the data phase. (WQE entities are recycled: bevy 0.20's entity
//! allocator grows with every spawn/despawn cycle, so a fresh entity per WQE would leak.)

use rdmasim_tests::{build_quiet, load, run_built, scenario_path};

fn entities_after(run_time: &str) -> (u32, u64) {
    let loaded = load(
        &scenario_path("default.ron"),
        &[&format!("simulation.RunTime={run_time}")],
    );
    let mut app = build_quiet(&loaded);
    run_built(&mut app, &loaded);
    (
        app.world.entities().len(),
        app.world.resource::<scala_rdma::ScalaRdma>().rx_client,
    )
}

#[test]
fn entity_count_does_not_grow_with_simulated_time() {
    let (short, done_short) = entities_after("0.0005");
    let (long, done_long) = entities_after("0.0045");
    assert!(
        done_long > 2 * done_short,
        "the longer run completes more WQEs: {done_short} vs {done_long}"
    );
    // 80 WQEs outstanding (8 connections x MaxPendingWQEs 10) bound the WQE entities in both.
    assert_eq!(short, long);
}
