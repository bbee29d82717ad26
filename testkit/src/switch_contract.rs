//! The switch contract suite: checks that run unchanged on any switch model
//! (`models::switch::SwitchModel`), each a function of the model's config, on the test kit's
//! hosts (`crate::fabric`, which stand in for NICs). A model passes if:
//!
//! - one packet through a 2-host star takes, from first principles, two serializations at the
//!   link rate, two propagation delays and one forwarding latency, and back-to-back packets
//!   arrive one serialization apart (the switch sends at line rate);
//! - every packet reaches its destination along the route: on a leaf-spine, each host receives
//!   exactly what was sent to it, and the switches forward each packet once per hop;
//! - an egress port is FIFO and work-conserving: with two hosts sending into a third at line
//!   rate, the third receives packets in the order they reached the switch, back to back;
//! - packets are conserved: at any stop, what the hosts sent is what they received plus what
//!   waits in the switches plus what is on the links.
//!
//! `switch_contract_suite!(module, model)` makes one test per check for a model (any
//! `SwitchModelConfig` value, such as its default config); the offered loads stay under the
//! shared-buffer switch's PFC and ECN thresholds, so the models must agree.

use crate::fabric::{Arrival, Offer, TestKit, TestKitPlugin, fabric_app_for, run_for, switch_totals};
use bevy_ecs::world::World;
use engine::prelude::*;
use models::fabric::Fabric;
use models::registry::SwitchModelConfig;
use models::switch::Switches;
use models::topology::{LeafSpineTopology, StarTopology, TopologyConfig};

const RATE: Rate = Rate::gbps(400);
const DELAY: SimTime = SimTime::from_us(1);
/// A full data frame: 4096 B of payload and 58 B of headers.
const FRAME: u32 = 4154;

fn star(hosts: u32) -> TopologyConfig {
    TopologyConfig::Star(StarTopology {
        hosts,
        link_rate: RATE,
        link_delay: Duration(DELAY),
    })
}

fn offer(host: u32, dst: u32, count: u64) -> Offer {
    Offer {
        host,
        dst,
        class: 1,
        packet_bytes: FRAME,
        rate: RATE,
        start: SimTime::ZERO,
        count,
    }
}

fn app(model: &dyn SwitchModelConfig, topology: TopologyConfig, offers: Vec<Offer>) -> App {
    let kit = TestKitPlugin {
        offers,
        trace: true,
        ..Default::default()
    };
    fabric_app_for(topology, model, kit)
}

/// Serialization + propagation + forwarding latency, exactly, and line rate back to back.
pub fn one_packet_timing(model: &dyn SwitchModelConfig) {
    let ser = RATE.serialization_time(FRAME as u64);
    assert_eq!(ser, SimTime(83_080), "4154 B at 400 Gbps: 4154 x 20 ps");
    let first = ser + DELAY + model.forwarding_latency() + ser + DELAY;
    let mut a = app(model, star(2), vec![offer(0, 1, 10)]);
    run_for(&mut a, SimTime::from_us(20));
    let s = &a.world.resource::<TestKit>().sinks[1];
    assert_eq!(s.packets, 10);
    assert_eq!((s.min_latency, s.max_latency), (first, first), "no packet waits");
    assert_eq!(s.first_arrival, Some(first));
    assert_eq!(s.last_arrival, first + SimTime(9 * ser.0), "one serialization apart");
    assert_eq!(switch_totals(&a.world).packets, 10);
}

/// Every host gets what was sent to it; each packet is forwarded once per switch on its path.
pub fn forwards_along_the_route(model: &dyn SwitchModelConfig) {
    let topology = TopologyConfig::LeafSpine(LeafSpineTopology {
        leaves: 2,
        spines: 2,
        hosts_per_leaf: 2,
        link_rate: RATE,
        link_delay: Duration(DELAY),
        host_link: None,
        spine_link: None,
    });
    // Each host sends 5 packets to every other host at a tenth of the line rate.
    let mut offers = Vec::new();
    for h in 0..4 {
        for d in (0..4).filter(|&d| d != h) {
            offers.push(Offer {
                rate: Rate::gbps(40),
                start: SimTime::from_ns(100 * (4 * h + d) as u64),
                ..offer(h, d, 5)
            });
        }
    }
    let mut a = app(model, topology, offers);
    run_for(&mut a, SimTime::from_us(60));
    let kit = a.world.resource::<TestKit>();
    for (h, s) in kit.sinks.iter().enumerate() {
        assert_eq!(s.packets, 15, "host {h} gets 5 packets from each of 3 hosts");
        for src in (0..4).filter(|&src| src != h as u32) {
            let from: Vec<u32> = kit
                .trace
                .iter()
                .filter(|x| x.host == h as u32 && x.src == src)
                .map(|x| x.psn)
                .collect();
            assert_eq!(from.len(), 5, "host {h} from {src}");
        }
    }
    // Hosts 0 and 1 share leaf 0, 2 and 3 leaf 1: of each host's 15 packets, 5 stay on its leaf
    // (one switch) and 10 cross a spine (three switches).
    assert_eq!(switch_totals(&a.world).packets, 4 * (5 + 10 * 3));
}

/// Two senders into one port at line rate: the port sends in arrival order, back to back.
pub fn egress_is_fifo_and_work_conserving(model: &dyn SwitchModelConfig) {
    // 2 x 40 frames: at most 20 frames (83 KB) queue, under the shared-buffer switch's XOFF.
    let n = 40;
    let mut a = app(model, star(3), vec![offer(0, 2, n), offer(1, 2, n)]);
    run_for(&mut a, SimTime::from_us(40));
    let kit = a.world.resource::<TestKit>();
    let ser = RATE.serialization_time(FRAME as u64);
    let trace: Vec<_> = kit.trace.iter().filter(|x| x.host == 2).collect();
    assert_eq!(trace.len(), 2 * n as usize);
    // A packet reached the switch at its send time plus a serialization, the delay and the
    // forwarding latency: the latency, less what it spent after the switch, less the wait.
    let at_switch = |x: &&Arrival| x.time - x.latency + ser + DELAY + model.forwarding_latency();
    for w in trace.windows(2) {
        assert!(at_switch(&w[0]) <= at_switch(&w[1]), "out of order: {:?}", w);
        assert_eq!(w[1].time, w[0].time + ser, "back to back at line rate");
    }
    for src in [0, 1] {
        let psns: Vec<u32> = trace.iter().filter(|x| x.src == src).map(|x| x.psn).collect();
        assert!(psns.windows(2).all(|w| w[0] < w[1]), "host {src}'s packets in order");
    }
    let sw = switch_totals(&a.world);
    assert_eq!((sw.drops, sw.headroom_drops, sw.pfc_pause_sent), (0, 0, 0));
}

/// Sent = received + waiting in switches + on links, mid-run and at the end.
pub fn conserves_packets(model: &dyn SwitchModelConfig) {
    let offers = vec![offer(0, 3, 30), offer(1, 3, 30), offer(2, 0, 30)];
    // Mid-run (a run builds its app once, so two apps): the port toward host 3 has a queue and
    // packets are on the links.
    let mut a = app(model, star(4), offers.clone());
    run_for(&mut a, SimTime::from_us(5));
    let (sent, delivered, queued, on_links) = balance(&a.world);
    assert!(queued > 0 && on_links > 0, "{queued} queued, {on_links} on links");
    assert_eq!(sent, delivered + queued + on_links);
    let mut a = app(model, star(4), offers);
    run_for(&mut a, SimTime::from_us(40));
    let (sent, delivered, queued, on_links) = balance(&a.world);
    assert_eq!((sent, delivered, queued, on_links), (90, 90, 0, 0));
}

/// (sent, delivered, waiting in switches, on links) of the kit's packets.
fn balance(world: &World) -> (u64, u64, u64, u64) {
    let kit = world.resource::<TestKit>();
    let (sent, delivered) = (kit.sent(), kit.delivered());
    let mut queued = 0;
    Switches::for_each_queued(world, &mut |_| queued += 1);
    let fabric = world.resource::<Fabric>().0.clone();
    let q = world.resource::<EventQueue>();
    let on_links = (0..fabric.dir_to.len() as u32)
        .map(|d| q.channel_values(fabric.kinds.packet, d).count() as u64)
        .sum();
    (sent, delivered, queued, on_links)
}

/// The suite as one test module per switch model: `switch_contract_suite!(name, config)`, where
/// `config` is the model's `SwitchModelConfig` (`SwitchConfig::default()`, say), makes one test
/// per check.
#[macro_export]
macro_rules! switch_contract_suite {
    ($module:ident, $model:expr) => {
        mod $module {
            #[allow(unused_imports)]
            use super::*;
            #[test]
            fn one_packet_timing() {
                $crate::switch_contract::one_packet_timing(&$model);
            }
            #[test]
            fn forwards_along_the_route() {
                $crate::switch_contract::forwards_along_the_route(&$model);
            }
            #[test]
            fn egress_is_fifo_and_work_conserving() {
                $crate::switch_contract::egress_is_fifo_and_work_conserving(&$model);
            }
            #[test]
            fn conserves_packets() {
                $crate::switch_contract::conserves_packets(&$model);
            }
        }
    };
}
