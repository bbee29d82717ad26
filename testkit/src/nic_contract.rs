//! The NIC contract suite: one scenario and one set of checks that run unchanged on any NIC
//! plugin. A NIC passes if, with the driver application of `driver` on top of it (which speaks
//! only `models::nic`):
//!
//! - every connection is set up once, the Responder's queue pair created before the
//!   Initiator's, which is created by the time `established` is reported;
//! - every posted WQE completes exactly once, with its `Wqe` marked completed and its
//!   `completed` stamp equal to the time of the `wqe_completed` event;
//! - completions of a connection come in post order, and a WQE starts only after the one ahead
//!   of it completed (one WQE of a connection on the wire at a time);
//! - the payload that reached each responder from each initiator, counted by a tap on the host
//!   ports (NIC-independent: it reads only `Packet::kind` and `Packet::payload`), equals the bytes
//!   posted on that pair: nothing lost, nothing duplicated (the suite's class is lossless, so no
//!   NIC should resend);
//! - the stamps never go backwards (`WqeTimes::monotonic`);
//! - nothing completes before its last byte arrives: when a WQE completes the tap has seen all
//!   of it (and of the WQEs completed before it on that pair) delivered, its `last_rx` is no
//!   earlier than its first bit plus its payload's serialization at the host link rate plus the
//!   path's delays, and its completion no earlier than `last_rx` plus the path back;
//! - the entities are current between segments: at each beacon tick every WQE shows the stamps
//!   its NIC had set, and each queue pair's progress counts what its connection had done;
//! - PFC from the switch is obeyed: the scenario makes the switch pause senders, and the
//!   switch drops nothing (a NIC that sent through a PAUSE would overrun the headroom).
//!
//! The scenario: a star of 4 hosts (400 Gbps, 1 us links, the default switch), six connections
//! on class 0 (host 0 to two responders, so its queue pairs share its port; two connections on
//! one pair; three connections from two hosts into host 3, so the switch's port to host 3 is
//! oversubscribed 2:1 and, with the default thresholds, the switch pauses hosts 1 and 2 with PFC),
//! each posting five WQEs of different sizes (the spec's 250 kB, one byte, one packet, one byte
//! over, 1 MB) at once when established. Instantiate it for a NIC with
//! `nic_contract_suite!(module, |app| ...)` (one test per property), or call `run_contract_suite`.

pub mod driver;
pub mod mirror;

use crate::fabric::switch_totals;
use bevy_ecs::prelude::*;
use driver::{DriverConfig, DriverLog, DriverPlugin, Tap};
use engine::prelude::*;
use models::fabric::switch::SwitchCounters;
use models::fabric::{FabricConfig, FabricPlugin, SwitchConfig};
use models::nic::{NicContractPlugin, NicPools, QpRole, QueuePair};
use models::topology::{StarTopology, TopologyConfig};
use std::collections::BTreeMap;

const HOSTS: u32 = 4;
const RATE: Rate = Rate::gbps(400);
const DELAY: SimTime = SimTime::from_us(1);
const STOP: SimTime = SimTime::from_us(400);
/// Beacon ticks, where `mirror` copies the entities (the 1 MB WRITEs take 20 us each).
const TICK: SimTime = SimTime::from_us(10);
const CLASS: u8 = 0;

fn driver_config() -> DriverConfig {
    DriverConfig {
        connections: vec![(0, 1), (0, 2), (2, 3), (3, 0), (1, 3), (1, 3)],
        wqe_bytes: vec![250_000, 1, 4096, 4097, 1_000_000],
        class: CLASS,
        closed_loop: false,
    }
}

/// What a run left behind, for the checks.
#[derive(Debug)]
pub struct Outcome {
    /// What the driver was told to do.
    pub cfg: DriverConfig,
    /// What the driver saw.
    pub log: DriverLog,
    /// What the tap on the hosts' ports counted.
    pub delivered: Tap,
    /// Every queue pair the NIC made, as it was at the end.
    pub qps: Vec<QueuePair>,
    /// The NIC's pools, if it inserted them.
    pub pools: Option<NicPools>,
    /// The switch's forwarding latency.
    pub forwarding: SimTime,
    /// The switch's counters at the end.
    pub switch: SwitchCounters,
    /// The entities at each beacon tick.
    pub snapshots: Vec<mirror::Snapshot>,
}

/// Runs the suite's scenario with the NIC that `add_nic` adds (between the fabric and the
/// driver application).
pub fn run_contract(add_nic: &dyn Fn(&mut App)) -> Outcome {
    let switch = SwitchConfig::default();
    let forwarding = switch.ForwardingLatency.0;
    let mut app = App::new();
    app.insert_resource(FabricConfig {
        topology: TopologyConfig::Star(StarTopology {
            hosts: HOSTS,
            link_rate: RATE,
            link_delay: Duration(DELAY),
        }),
        switch,
        seed: 11,
    });
    app.add_plugins(NicContractPlugin);
    app.add_plugins(FabricPlugin);
    add_nic(&mut app);
    app.add_plugins(DriverPlugin(driver_config()));
    app.insert_resource(mirror::Snapshots::default());
    app.add_systems(BeaconTick, mirror::take_snapshot);
    app.run(RunOptions {
        stop: STOP,
        beacon_interval: TICK,
        progress: None,
    });
    let qps = app.world.query::<&QueuePair>().iter(&app.world).cloned().collect();
    Outcome {
        cfg: driver_config(),
        log: app.world.remove_resource::<DriverLog>().expect("driver log"),
        delivered: app.world.remove_resource::<Tap>().expect("tap counts"),
        qps,
        pools: app.world.get_resource::<NicPools>().copied(),
        forwarding,
        switch: switch_totals(&app.world),
        snapshots: app.world.remove_resource::<mirror::Snapshots>().expect("snapshots").0,
    }
}

/// Runs the scenario and every check: the one-call form of the suite.
pub fn run_contract_suite(add_nic: impl Fn(&mut App)) {
    let o = run_contract(&add_nic);
    check_setup(&o);
    check_every_wqe_completes_once(&o);
    check_post_order(&o);
    check_one_wqe_on_the_wire(&o);
    check_bytes_delivered(&o);
    check_monotonic(&o);
    check_nothing_completes_early(&o);
    check_pfc_obeyed(&o);
    mirror::check_entities_current(&o);
}

/// Every connection set up once, the Responder's end before the Initiator's, both on time.
pub fn check_setup(o: &Outcome) {
    let pools = o.pools.expect("the NIC inserts NicPools");
    let c = CLASS as usize;
    assert!(
        pools.egress[c] && pools.ingress[c],
        "the suite's class {CLASS} needs pools on the NIC"
    );
    let mut established: Vec<u32> = o.log.established.iter().map(|e| e.0).collect();
    established.sort();
    let all: Vec<u32> = (0..o.cfg.connections.len() as u32).collect();
    assert_eq!(established, all, "every connection established exactly once");
    for &(conn, at) in &o.log.established {
        let (initiator, responder) = o.cfg.connections[conn as usize];
        let ends: Vec<&QueuePair> = o.qps.iter().filter(|q| q.connection == conn).collect();
        assert_eq!(ends.len(), 2, "connection {conn}: one queue pair per end, got {ends:?}");
        let resp = ends
            .iter()
            .find(|q| q.role == QpRole::Responder)
            .expect("a Responder end");
        let init = ends
            .iter()
            .find(|q| q.role == QpRole::Initiator)
            .expect("an Initiator end");
        assert_eq!(
            (init.host, resp.host),
            (initiator, responder),
            "connection {conn}: ends on the right hosts"
        );
        // Each end is created when a setup message arrives: at least one crossing apart.
        let crossing = DELAY + DELAY + o.forwarding;
        assert!(
            resp.created_at >= crossing,
            "connection {conn}: the Responder's end before a request could arrive"
        );
        assert!(
            init.created_at >= resp.created_at + crossing,
            "connection {conn}: the Initiator's end before the response"
        );
        assert!(
            init.created_at <= at,
            "connection {conn}: established before the Initiator's end exists"
        );
    }
}

/// Every posted WQE completes exactly once, marked completed, stamped with the event's time.
pub fn check_every_wqe_completes_once(o: &Outcome) {
    let mut seen: BTreeMap<Entity, u32> = BTreeMap::new();
    for c in &o.log.completions {
        *seen.entry(c.entity).or_default() += 1;
        assert!(
            c.completed_flag,
            "WQE {:?}: wqe_completed before its Wqe was marked completed",
            c.entity
        );
        assert_eq!(
            c.times.completed, c.at,
            "WQE {:?}: its completed stamp is the event's time",
            c.entity
        );
    }
    let expected = o.cfg.connections.len() * o.cfg.wqe_bytes.len();
    assert_eq!(o.log.posted.len(), expected, "every connection posted its WQEs");
    for p in &o.log.posted {
        assert_eq!(
            seen.get(&p.entity),
            Some(&1),
            "WQE {} of connection {} completes exactly once",
            p.number,
            p.connection
        );
    }
    assert_eq!(
        o.log.completions.len(),
        expected,
        "no completion of a WQE nobody posted"
    );
}

/// Completions of each connection, in the order they came.
fn by_connection(o: &Outcome) -> BTreeMap<u32, Vec<&driver::Completion>> {
    let mut m: BTreeMap<u32, Vec<&driver::Completion>> = BTreeMap::new();
    for c in &o.log.completions {
        m.entry(c.connection).or_default().push(c);
    }
    m
}

/// Completions of a connection come in post order.
pub fn check_post_order(o: &Outcome) {
    for (conn, cs) in by_connection(o) {
        let numbers: Vec<u64> = cs.iter().map(|c| c.number).collect();
        let posted: Vec<u64> = (1..=o.cfg.wqe_bytes.len() as u64).collect();
        assert_eq!(numbers, posted, "connection {conn}: completions in post order");
    }
}

/// A WQE starts, and goes on the wire, only after the one ahead of it completed.
pub fn check_one_wqe_on_the_wire(o: &Outcome) {
    for (conn, cs) in by_connection(o) {
        for w in cs.windows(2) {
            let (ahead, next) = (w[0].times, w[1].times);
            assert!(
                next.started >= ahead.completed,
                "connection {conn}: WQE {} started before WQE {} completed",
                w[1].number,
                w[0].number
            );
            assert!(
                next.first_tx >= ahead.completed,
                "connection {conn}: WQE {} on the wire with WQE {}",
                w[1].number,
                w[0].number
            );
        }
    }
}

/// The payload the tap saw delivered per pair equals the bytes posted on it.
pub fn check_bytes_delivered(o: &Outcome) {
    let mut posted: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    for p in &o.log.posted {
        *posted.entry(o.cfg.connections[p.connection as usize]).or_default() += p.bytes;
    }
    assert_eq!(
        o.delivered.payload, posted,
        "payload delivered per (initiator, responder) equals bytes posted"
    );
}

/// The NIC keeps the posted stamp and the stamps never go backwards.
pub fn check_monotonic(o: &Outcome) {
    for c in &o.log.completions {
        let posted = o
            .log
            .posted
            .iter()
            .find(|p| p.entity == c.entity)
            .expect("completed WQE was posted");
        assert_eq!(
            c.times.posted, posted.at,
            "the NIC keeps the application's posted stamp"
        );
        assert!(
            c.times.monotonic(),
            "WQE {} of connection {}: stamps go backwards: {:?}",
            c.number,
            c.connection,
            c.times
        );
    }
}

/// Nothing completes before its last byte could arrive and an acknowledgment return.
pub fn check_nothing_completes_early(o: &Outcome) {
    // Host to host on the star: two links and one switch, each way.
    let path = DELAY + o.forwarding + DELAY;
    let mut done: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    for c in &o.log.completions {
        let pair = o.cfg.connections[c.connection as usize];
        let total = done.entry(pair).or_default();
        *total += c.bytes;
        let what = format!("WQE {} of connection {}", c.number, c.connection);
        assert!(
            c.delivered_then >= *total,
            "{what} completed with {} of {} B on its pair delivered",
            c.delivered_then,
            total
        );
        let t = c.times;
        assert!(
            t.last_rx >= t.first_tx + RATE.serialization_time(c.bytes) + path,
            "{what}: last byte in faster than the wire: {t:?}"
        );
        assert!(
            t.completed >= t.last_rx + path,
            "{what}: completed before an acknowledgment could return: {t:?}"
        );
    }
}

/// The switch paused senders, lifted every PAUSE, and dropped nothing.
pub fn check_pfc_obeyed(o: &Outcome) {
    let sw = &o.switch;
    // The scenario is built to make the switch pause the senders into host 3; a NIC that kept
    // sending through a PAUSE would overrun the headroom and lose packets of a lossless class.
    assert!(
        sw.pfc_pause_sent > 0,
        "the scenario no longer makes the switch send PFC: {sw:?}"
    );
    assert_eq!(sw.pfc_resume_sent, sw.pfc_pause_sent, "every PAUSE was lifted: {sw:?}");
    assert_eq!(
        (sw.drops, sw.headroom_drops),
        (0, 0),
        "nothing dropped on the lossless class: {sw:?}"
    );
}

/// The suite as one test module per NIC: `nic_contract_suite!(name, |app: &mut App| { ... })`
/// runs the scenario once and checks each property in its own test.
#[macro_export]
macro_rules! nic_contract_suite {
    ($name:ident, $add_nic:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            use std::sync::OnceLock;
            use $crate::nic_contract::*;

            fn outcome() -> &'static Outcome {
                static OUTCOME: OnceLock<Outcome> = OnceLock::new();
                OUTCOME.get_or_init(|| run_contract(&$add_nic))
            }

            #[test]
            fn connections_are_set_up_in_the_specs_order() {
                check_setup(outcome());
            }
            #[test]
            fn every_posted_wqe_completes_exactly_once() {
                check_every_wqe_completes_once(outcome());
            }
            #[test]
            fn completions_per_connection_come_in_post_order() {
                check_post_order(outcome());
            }
            #[test]
            fn one_wqe_of_a_connection_on_the_wire_at_a_time() {
                check_one_wqe_on_the_wire(outcome());
            }
            #[test]
            fn bytes_sent_equal_bytes_delivered() {
                check_bytes_delivered(outcome());
            }
            #[test]
            fn timestamps_never_go_backwards() {
                check_monotonic(outcome());
            }
            #[test]
            fn nothing_completes_before_its_last_byte_arrives() {
                check_nothing_completes_early(outcome());
            }
            #[test]
            fn pfc_from_the_switch_is_obeyed() {
                check_pfc_obeyed(outcome());
            }
            #[test]
            fn entities_are_current_between_segments() {
                mirror::check_entities_current(outcome());
            }
        }
    };
}
