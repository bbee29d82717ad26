//! Swapping the NIC is one line of RON: the same scenario with `nic: IdealNic(())` instead of
//! `nic: RoceNic(())` loads, gives the same plan, writes the same record columns and completes
//! WQEs; only the NIC differs, and it shows in the latency (the ideal NIC has no PCIe).

use rdmasim_tests::{Csv, load, run_loaded, scenario_path};

#[test]
fn roce_nic_and_ideal_nic_swap_with_one_line() {
    let roce = load(&scenario_path("default.ron"), &["simulation.RunTime=0.0005"]);
    let ideal = load(
        &scenario_path("default.ron"),
        &["simulation.RunTime=0.0005", "nic=IdealNic(())"],
    );
    assert_eq!(roce.scenario.nic.name, "RoceNic");
    assert_eq!(ideal.scenario.nic.name, "IdealNic");
    assert_eq!(
        roce.plan, ideal.plan,
        "the application and fabric do not depend on the NIC"
    );
    // The scenario texts differ in exactly one line.
    let differing: Vec<_> = roce
        .text
        .lines()
        .zip(ideal.text.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(differing.len(), 1, "{differing:?}");
    assert!(differing[0].1.contains("IdealNic"));

    let (r, rdir) = run_loaded(&roce, "swap-roce");
    let (i, idir) = run_loaded(&ideal, "swap-ideal");
    assert!(r.summary.wqes_completed > 0 && i.summary.wqes_completed > 0);
    let rp = Csv::read(&rdir.file("default-rdma-perf-0.csv"));
    let ip = Csv::read(&idir.file("default-rdma-perf-0.csv"));
    assert_eq!(rp.header, ip.header);
    // First WQE of each connection: the ideal NIC skips the doorbell and the fetch over PCIe,
    // so its latency is lower.
    let first = |c: &Csv| {
        c.column("perf_metric_usec")
            .first()
            .map(|s| s.parse::<f64>().unwrap())
            .unwrap()
    };
    assert!(first(&ip) < first(&rp), "ideal {} vs roce {}", first(&ip), first(&rp));
}
