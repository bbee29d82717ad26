//! Every shipped scenario, at its full length, accounts for every data packet: what the hosts
//! sent is what reached a NIC, plus what was dropped, plus what was still on a link or in a
//! switch queue at the stop; and none of them (all lossless, no faults) drops anything.

use rdmasim_tests::*;

#[test]
fn conservation_holds_on_every_shipped_scenario_at_full_length() {
    // Two at a time (the machine has two cores); faults-* scenarios drop on purpose and are
    // checked by their own tests.
    let files: Vec<_> = all_scenarios()
        .into_iter()
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("faults-"))
        })
        .collect();
    assert!(files.len() >= 6, "the shipped scenarios: {files:?}");
    for pair in files.chunks(2) {
        let runs: Vec<_> = pair
            .iter()
            .cloned()
            .map(|p| std::thread::spawn(move || (p.clone(), run_scenario(&p, &[]).0.summary)))
            .collect();
        for r in runs {
            let (path, s) = r.join().expect("run thread");
            let name = path.display();
            let c = &s.conservation;
            assert!(c.ok(), "{name}: {:?}", c.violations);
            let [sent, delivered, dropped, in_flight] = c.totals();
            assert!(sent.packets > 0 && delivered.packets > 0, "{name}: no traffic");
            assert_eq!(sent.packets, delivered.packets + dropped.packets + in_flight.packets);
            assert_eq!(dropped.packets, 0, "{name}: dropped data on a lossless fabric");
            assert!(c.warnings.is_empty(), "{name}: {:?}", c.warnings);
            assert_eq!(s.nic_losses.retransmitted, 0, "{name}: resent data it never lost");
        }
    }
}
