//! The engine's ownership model on the real fabric: while events run the fabric's handler holds
//! the switches and the test kit (standing in for a NIC) holds the hosts' ports, and any other
//! look at them panics; between segments both stores are readable and hold what the run did.

use crate::star;
use bevy_ecs::prelude::*;
use engine::prelude::*;
use engine::store::Store;
use models::fabric::SwitchConfig;
use models::fabric::switch::Switch;
use models::nic::HostPort;
use testkit::fabric::{Offer, fabric_app, run_for};

fn offer() -> Offer {
    Offer {
        host: 0,
        dst: 1,
        class: 1,
        packet_bytes: 1000,
        rate: Rate::gbps(400),
        start: SimTime::ZERO,
        count: 10,
    }
}

/// An app whose handler of one event at 5 us, after the first packets crossed the switch, runs
/// `look` on the world.
fn app_looking_at(look: fn(&World)) -> App {
    let mut app = fabric_app(star(2), SwitchConfig::default(), vec![offer()]);
    let kind = app.add_handler("look", move |world: &mut World, _: &mut EventQueue, _: SimEvent| {
        look(world)
    });
    let source = app.queue().add_source();
    app.queue().schedule(SimTime::from_us(5), source, kind, 0, 0);
    app
}

#[test]
#[should_panic(expected = "is held by `the fabric's handler` while events run")]
fn a_handler_looking_at_the_switches_mid_run_is_stopped() {
    let mut app = app_looking_at(|w| {
        w.resource::<Store<Switch>>().rows();
    });
    run_for(&mut app, SimTime::from_us(10));
}

#[test]
#[should_panic(expected = "is held by `the test kit` while events run")]
fn a_handler_looking_at_the_host_ports_mid_run_is_stopped() {
    let mut app = app_looking_at(|w| {
        w.resource::<Store<HostPort>>().get(0);
    });
    run_for(&mut app, SimTime::from_us(10));
}

#[test]
fn between_segments_the_stores_hold_what_the_run_did() {
    let mut app = fabric_app(star(2), SwitchConfig::default(), vec![offer()]);
    run_for(&mut app, SimTime::from_us(10));
    let ports = app.world.resource::<Store<HostPort>>();
    assert_eq!(ports.held_by(), None);
    // Host 0 launched the 10 packets of 1000 B; host 1 sent nothing.
    let sent: Vec<_> = ports.rows().iter().map(|p| (p.wire.packets, p.wire.bytes)).collect();
    assert_eq!(sent, vec![(10, 10_000), (0, 0)]);
    // The one switch forwarded all of them, and its row belongs to its node's entity.
    let switches = app.world.resource::<Store<Switch>>();
    let (e, sw) = switches.iter().next().expect("one switch");
    assert_eq!(sw.counters.packets, 10);
    let node = app
        .world
        .get::<models::fabric::Node>(e)
        .expect("a switch is a Node entity");
    assert_eq!((node.id, node.index), (2, 0));
}
