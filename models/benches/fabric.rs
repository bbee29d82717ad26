//! Packets forwarded per second through a two-tier fabric: the default leaf-spine (4 leaves of 4
//! hosts, 4 spines, 400 Gbps, 1 us), 8 line-rate flows of 100,000 frames of 4154 B from the
//! hosts of leaves 0 and 1 to those of leaves 2 and 3, through the test kit. Every frame crosses
//! three switches; ECMP collisions on the uplinks make some of them queue and PFC pause. One
//! iteration builds the app (not timed) and runs it to the end; criterion's throughput is
//! switch forwards (packets leaving a switch) per second.
//!
//! ```text
//! cargo bench -p rdmasim-models --bench fabric -- --warm-up-time 1 --measurement-time 10
//! ```

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use engine::prelude::*;
use models::fabric::SwitchConfig;
use models::topology::TopologyConfig;
use std::time::Duration as WallDuration;
use testkit::fabric::{Offer, TestKit, fabric_app, run_for, switch_totals};

const FLOWS: u32 = 8;
const PACKETS: u64 = 100_000;
const FRAME: u32 = 4154;

fn app() -> App {
    let offers = (0..FLOWS)
        .map(|h| Offer {
            host: h,
            dst: h + 8,
            class: 1,
            packet_bytes: FRAME,
            rate: Rate::gbps(400),
            start: SimTime::ZERO,
            count: PACKETS,
        })
        .collect();
    fabric_app(TopologyConfig::default(), SwitchConfig::default(), offers)
}

/// Long enough for every frame to arrive even if two flows share every link on their way.
const STOP: SimTime = SimTime::from_us(50_000);

fn bench(c: &mut Criterion) {
    // One run outside the timing: check it and count what it does.
    let mut a = app();
    let stats = run_for(&mut a, STOP);
    let delivered = a.world.resource::<TestKit>().delivered();
    assert_eq!(delivered, FLOWS as u64 * PACKETS, "every frame arrives");
    let forwards = switch_totals(&a.world).packets;
    eprintln!(
        "fabric: {delivered} frames delivered, {forwards} switch forwards, {} events ({:.2} per frame), {:.0} forwards/s in the check run",
        stats.events,
        stats.events as f64 / delivered as f64,
        forwards as f64 / stats.wall.as_secs_f64()
    );

    let mut g = c.benchmark_group("fabric");
    g.sample_size(10)
        .warm_up_time(WallDuration::from_secs(1))
        .measurement_time(WallDuration::from_secs(10));
    g.throughput(Throughput::Elements(forwards));
    g.bench_function("leaf_spine_8_flows_100k_frames", |b| {
        b.iter_batched(app, |mut a| run_for(&mut a, STOP), BatchSize::PerIteration);
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
