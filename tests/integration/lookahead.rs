//! The event queue's lookahead (on by itself for fabrics of `LOOKAHEAD_HOSTS` hosts or more)
//! changes no result: small scenarios run with it forced on write the same records, byte for
//! byte, as without it. It covers the shared-buffer switch's warming hooks, a switch model
//! without them (output-queued), both NICs, faults, and an incast's PFC.

use engine::app::{App, Plugin};
use engine::event::EventQueue;
use rdmasim::{RunSetup, assemble};
use rdmasim_tests::{FIXED_EPOCH_SECS, ScratchDir, load, scenario_path};

/// Turns the lookahead on whatever the fabric's size.
struct ForceLookahead;

impl Plugin for ForceLookahead {
    fn build(&self, app: &mut App) {
        app.world
            .resource_mut::<EventQueue>()
            .set_lookahead(models::fabric::LOOKAHEAD_EVENTS);
    }
}

/// Every file but the manifest (which holds the wall time), by name, after a run of `scenario`
/// with `overrides`, with the lookahead forced on or not.
fn records(scenario: &str, overrides: &[&str], forced: bool) -> Vec<(String, Vec<u8>)> {
    let loaded = load(&scenario_path(scenario), overrides);
    let dir = ScratchDir::new("lookahead");
    let setup = RunSetup {
        output: engine::records::Output::Folder(dir.path.clone()),
        name: None,
        clock: engine::clock::WallClock::fixed_at(FIXED_EPOCH_SECS),
    };
    let mut group = assemble::plugins(&loaded);
    if forced {
        group = group.add(ForceLookahead);
    }
    let stop = std::sync::atomic::AtomicUsize::new(0);
    let outcome = rdmasim::run_group(&loaded, &setup, group, None, &stop).expect("the run");
    let on = outcome.app.world.resource::<EventQueue>().lookahead() > 0;
    assert_eq!(on, forced, "{scenario}: the lookahead is not as asked");
    let files = dir.records();
    assert!(files.len() >= 2, "{scenario}: no records");
    files
}

#[test]
fn records_are_the_same_with_the_lookahead_on() {
    let runs: [(&str, &[&str]); 6] = [
        ("default.ron", &["simulation.RunTime=0.002", "topology=FatTree(k: 4)"]),
        ("default.ron", &["simulation.RunTime=0.002"]),
        ("many-connections.ron", &["simulation.RunTime=0.002"]),
        ("star-output-queued.ron", &["simulation.RunTime=0.002"]),
        ("ideal-nic.ron", &["simulation.RunTime=0.002"]),
        ("faults-loss.ron", &["simulation.RunTime=0.002"]),
    ];
    for (scenario, overrides) in runs {
        let plain = records(scenario, overrides, false);
        let ahead = records(scenario, overrides, true);
        assert_eq!(
            plain.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            ahead.iter().map(|(n, _)| n).collect::<Vec<_>>()
        );
        for ((name, a), (_, b)) in plain.iter().zip(&ahead) {
            assert!(a == b, "{scenario} {overrides:?}: {name} differs with the lookahead on");
        }
    }
}
