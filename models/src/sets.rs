//! Build order. Plugins put their `Build`-phase systems in these sets, which run in this order,
//! so a NIC finds the fabric's entities and an application finds the NICs' without naming them.

use bevy_ecs::schedule::SystemSet;

/// The `Build` phase's sets, in the order they run.
#[derive(SystemSet, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BuildSet {
    /// Topology, links, switches, hosts, PCIe links.
    Fabric,
    /// NIC state on every host.
    Nics,
    /// Applications: placement, pairing, connections.
    Applications,
}

/// Orders the sets in the `Build`, `Start` and `Finish` phases (at `Finish`: the fabric's
/// conservation check, then the NICs' end-of-run figures, then the applications', then the
/// watchdog's last look).
pub fn configure(app: &mut engine::app::App) {
    use bevy_ecs::schedule::{IntoScheduleConfigs, ScheduleLabel};
    for phase in [
        engine::phases::Build.intern(),
        engine::phases::Start.intern(),
        engine::phases::Sample.intern(),
        engine::phases::Finish.intern(),
    ] {
        app.world.schedule_scope(phase, |_, s| {
            s.configure_sets((BuildSet::Fabric, BuildSet::Nics, BuildSet::Applications).chain());
        });
    }
    app.world.schedule_scope(engine::phases::Finish.intern(), |_, s| {
        use crate::fabric::deadlock::WatchdogSystems;
        s.configure_sets(WatchdogSystems::Fabric.after(BuildSet::Applications));
    });
}
