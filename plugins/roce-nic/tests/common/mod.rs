//! What the RoCE NIC's tests and benchmark add to the test kit's driver application
//! (`testkit::nic_contract::driver`, re-exported here): a star with this NIC under the driver,
//! and its counters.
#![allow(dead_code)] // Each test binary uses a different part of the kit.

use bevy_ecs::world::World;
use engine::prelude::*;
use engine::store::Store;
use models::fabric::{FabricConfig, FabricPlugin, SwitchConfig};
use models::nic::NicContractPlugin;
use models::topology::{StarTopology, TopologyConfig};
use roce_nic::{NicCounters, RoceNic, RoceNicConfig, RoceNicPlugin};
pub use testkit::fabric::run_for as run;
pub use testkit::nic_contract::driver::*;

/// Host link rate of the test stars.
pub const RATE: Rate = Rate::gbps(400);
/// Link delay (propagation) of the test stars.
pub const DELAY: SimTime = SimTime::from_us(1);

/// A star of `hosts` hosts (400 Gbps, 1 us links) with `switch`, the RoCE NIC with `nic`, the
/// driver with `driver` and `tap` on the hosts' ports.
pub fn star_app(hosts: u32, nic: RoceNicConfig, switch: SwitchConfig, driver: DriverConfig, tap: Tap) -> App {
    nic.validate().expect("test NIC config is valid");
    switch.validate(hosts as usize).expect("test switch config is valid");
    let mut app = App::new();
    app.insert_resource(FabricConfig {
        topology: TopologyConfig::Star(StarTopology {
            hosts,
            link_rate: RATE,
            link_delay: Duration(DELAY),
        }),
        switch,
        seed: 7,
    });
    app.insert_resource(tap);
    app.add_plugins(NicContractPlugin);
    app.add_plugins(FabricPlugin);
    app.add_plugins(RoceNicPlugin { config: nic });
    app.add_plugins(DriverPlugin(driver));
    app
}

/// The counters of `host`'s NIC.
pub fn nic_counters(world: &World, host: u32) -> NicCounters {
    world
        .resource::<Store<RoceNic>>()
        .get(host as usize)
        .expect("RoceNic")
        .counters
}
