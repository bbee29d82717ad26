//! Injected faults (`faults: [...]`, `models::fabric::faults`): packets lost on a link are
//! counted and the balance still holds; go-back-N recovers, so every connection keeps completing
//! WQEs and Little's law holds per connection; the same seed loses the same packets.

use rdmasim::Outcome;
use rdmasim_tests::*;

const MAX_PENDING: f64 = 10.0;

/// The default scenario (8 disjoint pairs on the leaf-spine) for `run_time` seconds, with
/// `faults` and a 100 us RetransmitTimeout: with no incast the queueing delay stays far below
/// it, so only real losses time out, and a lost WQE tail costs 100 us instead of the 67 ms
/// default (which would freeze a connection for most of a 10 ms run).
fn default_with(faults: &str, run_time: &str) -> rdmasim::scenario::Loaded {
    let text = std::fs::read_to_string(scenario_path("default.ron")).expect("the shipped scenario");
    assert!(text.contains("nic: RoceNic(()),"), "the scenario's NIC line moved");
    let text = text.replace(
        "nic: RoceNic(()),",
        &format!("nic: RoceNic((RetransmitTimeout: \"100us\")),\n    faults: [{faults}],"),
    );
    load_str("default.ron", &text, &[&format!("simulation.RunTime={run_time}")])
}

/// Every connection's recorded WQEs and Little's law: 10 WQEs always outstanding (a closed loop)
/// = completion rate x mean latency = (sum of the window's latencies) / RunTime.
fn check_littles_law(o: &mut Outcome, run_time_ps: u64, tolerance: f64) {
    let world = &mut o.app.world;
    let mut q = world.query::<&scala_rdma::InitiatorInstance>();
    let mut n = 0;
    for i in q.iter(world) {
        n += 1;
        assert!(i.recorded > 100, "{} completed only {} WQEs", i.name, i.recorded);
        let l = i.recorded_latency.0 as f64 / run_time_ps as f64;
        assert!(
            (l / MAX_PENDING - 1.0).abs() < tolerance,
            "{} has L = {l:.4} WQEs in the system, not {MAX_PENDING}",
            i.name
        );
    }
    assert_eq!(n, 8, "the default scenario's 8 Initiators");
}

#[test]
fn one_percent_loss_on_a_link_is_counted_and_survived_by_every_connection() {
    // Both of h0's link directions lose 1%: all of h0's traffic (data or ACKs) crosses it.
    let loaded = default_with("Loss(link: (\"h0\", \"leaf0\"), rate: 0.01)", "0.01");
    let (mut a, dir_a) = run_loaded(&loaded, "faults-loss-a");
    let (_b, dir_b) = run_loaded(&loaded, "faults-loss-b");
    let s = &a.summary;
    let c = &s.conservation;
    assert!(c.ok(), "{:?}", c.violations);
    let [sent, delivered, dropped, in_flight] = c.totals();
    assert_eq!(sent, {
        let mut t = delivered;
        t += dropped;
        t += in_flight;
        t
    });
    let f = a.app.world.resource::<models::fabric::faults::FaultCounters>().clone();
    let lost: u64 = f.data.iter().map(|t| t.packets).sum();
    assert_eq!(dropped.packets, lost, "every drop is the fault's");
    assert_eq!(f.by_fault, [lost + f.other.packets]);
    // h0 is an Initiator or a Responder: its data (or its peer's) crosses the link. 1% of what
    // crossed, within 5 sigma of a binomial draw.
    let crossed = {
        let fabric = a.app.world.resource::<models::fabric::Fabric>().0.clone();
        let mut dirs = a.app.world.query::<&models::fabric::link::LinkDirection>();
        let h0 = dirs
            .get(&a.app.world, fabric.dirs[fabric.host_egress(0) as usize])
            .unwrap()
            .data_packets;
        let (leaf0, port) = (
            fabric.topology.find("leaf0").unwrap(),
            fabric.topology.port(0, 0).peer_port,
        );
        let mut sw = a.app.world.query::<&models::fabric::switch::Switch>();
        let to_h0 = sw
            .iter(&a.app.world)
            .find(|s| s.node == leaf0)
            .unwrap()
            .wire(port)
            .data_packets;
        h0 + to_h0
    };
    let expect = crossed as f64 * 0.01;
    assert!(crossed > 10_000, "only {crossed} data packets crossed h0's link");
    assert!(
        (lost as f64 - expect).abs() < 5.0 * (expect * 0.99).sqrt(),
        "lost {lost} of {crossed}"
    );
    assert!(s.nic_losses.retransmitted > 0, "go-back-N resent nothing");
    check_littles_law(&mut a, PS_PER_SEC / 100, 0.03);
    for file in ["default-rdma-perf-0.csv", "default-beacon-0.csv"] {
        let x = std::fs::read(dir_a.file(file)).expect(file);
        assert!(
            x == std::fs::read(dir_b.file(file)).expect(file),
            "{file} differs with the same seed"
        );
    }
}
