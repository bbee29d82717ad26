//! WQEs completed per second of wall time through two RoCE NICs and a switch: a 2-host star
//! (400 Gbps, 1 us links, the default switch), one connection from host 0 to host 1 with the
//! spec's closed loop (`MaxPendingWQEs` = 10 outstanding, a new 250,000 B WQE posted at each
//! completion), run for a fixed 10 ms of simulated time. One iteration builds the app (not
//! timed) and runs it; criterion's throughput is WQEs completed.
//!
//! ```text
//! cargo bench -p rdmasim-roce-nic --bench wqe -- --warm-up-time 1 --measurement-time 5
//! ```

#[path = "../tests/common/mod.rs"]
mod common;

use common::{DriverConfig, DriverLog, Tap, run, star_app};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use engine::prelude::*;
use models::fabric::SwitchConfig;
use roce_nic::RoceNicConfig;

/// The spec's default `MaxPendingWQEs`.
const MAX_PENDING: u64 = 10;
const STOP: SimTime = SimTime::from_us(10_000);

fn app() -> App {
    let driver = DriverConfig {
        closed_loop: true,
        ..DriverConfig::new(vec![(0, 1)], MAX_PENDING)
    };
    star_app(
        2,
        RoceNicConfig::default(),
        SwitchConfig::default(),
        driver,
        Tap::default(),
    )
}

fn bench(c: &mut Criterion) {
    // One run outside the timing: check it and count what it does.
    let mut a = app();
    let stats = run(&mut a, STOP);
    let completed = a.world.resource::<DriverLog>().completions.len() as u64;
    // One WQE on the wire at a time, each ~10.7 us from start to completion (fetch, network,
    // ACK): about 930 in 10 ms.
    assert!(completed > 900, "only {completed} WQEs completed");
    eprintln!(
        "wqe: {completed} WQEs completed in {STOP} simulated, {} events ({:.0} per WQE), {:.0} WQEs/s in the check run",
        stats.events,
        stats.events as f64 / completed as f64,
        completed as f64 / stats.wall.as_secs_f64()
    );

    let mut g = c.benchmark_group("roce_nic");
    g.sample_size(10);
    g.throughput(Throughput::Elements(completed));
    g.bench_function("star2_one_connection_closed_loop_10ms", |b| {
        b.iter_batched(
            app,
            |mut a| {
                run(&mut a, STOP);
                a
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
