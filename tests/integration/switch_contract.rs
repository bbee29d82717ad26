//! The switch contract suite (`testkit::switch_contract`) on both switch models of the
//! workspace, and a whole scenario on each.

use engine::prelude::*;
use models::fabric::SwitchConfig;
use oq_switch::OqSwitchConfig;

testkit::switch_contract_suite!(shared_buffer, SwitchConfig::default());
testkit::switch_contract_suite!(output_queued, OqSwitchConfig::default());
// A forwarding latency of its own: the timing follows the model's setting.
testkit::switch_contract_suite!(
    output_queued_slow,
    OqSwitchConfig {
        ForwardingLatency: Duration::from_us(2)
    }
);

/// The star scenario (one Initiator per Responder, so no egress port is shared) on the ideal
/// output-queued switch: it runs, the selection is the one written, and with no contention
/// every WQE's latency, and its breakdown, is what the shared-buffer switch gives.
#[test]
fn a_star_without_contention_has_the_same_wqe_latency_on_both_switches() {
    use rdmasim_tests::{Csv, run_scenario, scenario_path};
    let run = |switch: &str| {
        let set = format!("switch={switch}");
        let (outcome, dir) = run_scenario(&scenario_path("star.ron"), &["simulation.RunTime=0.004", &set]);
        assert!(
            outcome.summary.conservation.ok(),
            "{switch}: {:?}",
            outcome.summary.conservation
        );
        let csv = Csv::read(&dir.file("star-rdma-perf-0.csv"));
        // Every column but `job_id`, which holds the scenario's hash.
        let job = csv.col("job_id");
        let rows: Vec<Vec<String>> = csv
            .rows
            .iter()
            .map(|r| {
                r.iter()
                    .enumerate()
                    .filter(|(i, _)| *i != job)
                    .map(|(_, v)| v.clone())
                    .collect()
            })
            .collect();
        (outcome.app, rows)
    };
    let (shared, shared_rows) = run("SharedBuffer(())");
    let (ideal, ideal_rows) = run("OutputQueued(())");
    assert!(shared_rows.len() > 1000, "{} WQEs", shared_rows.len());
    assert_eq!(ideal_rows, shared_rows);
    assert!(
        ideal
            .world
            .get_resource::<engine::store::Store<oq_switch::OqSwitch>>()
            .is_some()
    );
    assert!(
        shared
            .world
            .get_resource::<engine::store::Store<oq_switch::OqSwitch>>()
            .is_none()
    );
}
