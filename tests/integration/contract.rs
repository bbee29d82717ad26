//! The NIC contract suite (`testkit::nic_contract`) on both NICs of the workspace.

use engine::prelude::*;

testkit::nic_contract_suite!(contract_ideal_nic, |app: &mut App| {
    app.add_plugins(ideal_nic::IdealNicPlugin::default());
});

// The RoCE NIC, with its default config, through the same suite.
testkit::nic_contract_suite!(contract_roce_nic, |app: &mut App| {
    app.add_plugins(roce_nic::RoceNicPlugin::default());
});

/// The one-call form works too (and is what a fork's own test would call).
#[test]
fn contract_suite_in_one_call_on_the_ideal_nic() {
    testkit::nic_contract::run_contract_suite(|app: &mut App| {
        app.add_plugins(ideal_nic::IdealNicPlugin::default());
    });
}
