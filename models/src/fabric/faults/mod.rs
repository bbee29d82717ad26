//! Fault injection: links that lose packets at random or go down for a while. The fabric's
//! handler asks `FaultState::lose` at each arrival, only when the scenario has faults (else its
//! `Option` is `None`: one predictable branch per hop). A lost packet was counted as sent and
//! in flight while on the wire; its loss is counted here (data per class into
//! `conservation::FaultDrops`), so the run's balance still holds.
//!
//! PFC frames are never lost: the model's PAUSE has no quanta timer and is not refreshed, so a
//! lost RESUME would hold a port paused for good, which real links avoid by re-sending PAUSE
//! state on a timer.

pub mod config;

use super::link::Tally;
use super::{FabricIndex, conservation::FaultDrops};
use crate::packet::{Packet, PacketKind};
use crate::topology::{NodeKind, Routes, Topology};
use bevy_ecs::prelude::*;
pub use config::{Fault, FaultConfig, FaultError};
use engine::prelude::*;
use engine::rng::{SimRng, stream, unit_f64};
use serde::Serialize;

/// What the injected faults dropped, published whenever the event loop pauses.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct FaultCounters {
    /// RDMA data packets lost, per traffic class (also `FaultDrops`, for the balance).
    pub data: [Tally; 8],
    /// Every other packet lost: ACKs, NAKs, connection setup frames.
    pub other: Tally,
    /// Packets (data or not) each `faults` entry dropped, in scenario order.
    pub by_fault: Vec<u64>,
}

/// A random loss on one link direction.
#[derive(Debug)]
struct Loss {
    fault: usize,
    rate: f64,
    /// Bit c: class c is affected.
    classes: u8,
    rng: SimRng,
}

/// A window of arrival times at the far end in which every packet is lost.
#[derive(Clone, Copy, Debug)]
struct Down {
    fault: usize,
    from: SimTime,
    until: SimTime,
}

/// A link's down window as routing sees it: `[at, up)`.
#[derive(Clone, Copy, Debug)]
struct RouteChange {
    link: u32,
    at: SimTime,
    up: SimTime,
}

#[derive(Debug, Default)]
struct DirFaults {
    losses: Vec<Loss>,
    downs: Vec<Down>,
}

/// Which owner's faults: the fabric's handler applies those on links into switches, the NIC's
/// arrival step (`models::nic::HostIngress`) those on links into hosts. Each publishes its part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultPart {
    /// Faults on links into switches (the fabric's handler).
    Switches = 0,
    /// Faults on links into hosts (the NIC's arrival step).
    Hosts = 1,
}

/// The faults on links into hosts, left by the fabric's build for the NIC's arrival step.
#[derive(Resource, Debug, Default)]
pub struct HostFaults(pub Option<FaultState>);

/// Each part's counters; `FaultCounters` and `FaultDrops` are their sum.
#[derive(Resource, Debug, Default)]
struct FaultParts([FaultCounters; 2]);

/// The faults of a run on the link directions of one part (the others have none here).
#[derive(Resource, Debug)]
pub struct FaultState {
    /// Per link direction id.
    dirs: Vec<DirFaults>,
    /// Links between switches that go down: the routes change when one does.
    routing: Vec<RouteChange>,
    /// What this part's faults dropped so far.
    pub counters: FaultCounters,
}

impl FaultState {
    /// The state for `cfg` on the fabric just built (`delays[d]`: direction `d`'s delay, with the
    /// receiving switch's forwarding latency), on the directions into `part`'s nodes. `None`
    /// when there is nothing to inject there. Each direction's random stream is its own, so the
    /// split changes no draw.
    pub fn new(
        cfg: &FaultConfig,
        topo: &Topology,
        delays: &[SimTime],
        seed: u64,
        part: FaultPart,
    ) -> Option<FaultState> {
        if cfg.0.is_empty() {
            return None;
        }
        let into = |d: u32| {
            let l = &topo.links[(d / 2) as usize];
            let to = if d.is_multiple_of(2) { l.b.0 } else { l.a.0 };
            match topo.nodes[to as usize].kind {
                NodeKind::Switch => FaultPart::Switches,
                NodeKind::Host => FaultPart::Hosts,
            }
        };
        let mut dirs: Vec<DirFaults> = (0..delays.len()).map(|_| DirFaults::default()).collect();
        let mut routing = Vec::new();
        for (i, f) in cfg.0.iter().enumerate() {
            for l in FaultConfig::links(topo, f) {
                for d in [2 * l, 2 * l + 1].into_iter().filter(|&d| into(d) == part) {
                    let df = &mut dirs[d as usize];
                    match f {
                        Fault::Loss { rate, classes, .. } => df.losses.push(Loss {
                            fault: i,
                            rate: *rate,
                            classes: classes
                                .as_ref()
                                .map_or(0xFF, |cs| cs.iter().fold(0, |m, &c| m | 1 << c)),
                            rng: stream(seed, "fault-loss", (i as u64) << 32 | d as u64),
                        }),
                        Fault::SlowReceiver { .. } => {}
                        Fault::LinkDown { at, up, .. } => {
                            let (at, up) = times(*at, *up);
                            // Arrivals while down, and of packets launched before `up`.
                            let until = up.checked_add(delays[d as usize]).unwrap_or(SimTime::MAX);
                            df.downs.push(Down {
                                fault: i,
                                from: at,
                                until,
                            });
                        }
                    }
                }
                if let Fault::LinkDown { at, up, .. } = f
                    && part == FaultPart::Switches
                {
                    let k = &topo.links[l as usize];
                    let switch = |n: u32| topo.nodes[n as usize].kind == NodeKind::Switch;
                    if switch(k.a.0) && switch(k.b.0) {
                        let (at, up) = times(*at, *up);
                        routing.push(RouteChange { link: l, at, up });
                    }
                }
            }
        }
        if routing.is_empty() && dirs.iter().all(|d| d.losses.is_empty() && d.downs.is_empty()) {
            // Only slow receivers (the NIC's business): the fabric's hot path stays as without.
            return None;
        }
        Some(FaultState {
            dirs,
            routing,
            counters: FaultCounters {
                by_fault: vec![0; cfg.0.len()],
                ..Default::default()
            },
        })
    }

    /// Times at which the routes must be recomputed (a switch-to-switch link goes down or up).
    pub fn route_changes(&self) -> Vec<SimTime> {
        let mut t: Vec<SimTime> = self
            .routing
            .iter()
            .flat_map(|r| [r.at, r.up])
            .filter(|&t| t != SimTime::MAX)
            .collect();
        t.sort();
        t.dedup();
        t
    }

    /// The routes at `now`: over the links not down.
    pub fn routes_at(&self, topo: &Topology, now: SimTime) -> Routes {
        let mut down = vec![false; topo.links.len()];
        for r in &self.routing {
            if r.at <= now && now < r.up {
                down[r.link as usize] = true;
            }
        }
        Routes::compute_avoiding(topo, &down)
    }

    /// Takes the packet at the head of direction `dir`'s channel out of the fabric if a fault
    /// loses it (counted), and says so. Out of line and looking at the packet in place, so the
    /// fault-free arrival path still moves the packet straight from the channel to its receiver.
    #[cold]
    #[inline(never)]
    pub fn drop_head(&mut self, q: &mut EventQueue, channel: ChannelKey<Packet>, dir: u32) -> bool {
        let Some(&pkt) = q.channel_values(channel, dir).next() else {
            return false;
        };
        let lost = self.lose(dir, q.now(), &pkt);
        if lost {
            q.receive(channel, dir);
        }
        lost
    }

    /// Is `pkt`, arriving at the far end of direction `dir` at `now`, lost? Counts it if so.
    #[inline]
    pub fn lose(&mut self, dir: u32, now: SimTime, pkt: &Packet) -> bool {
        if pkt.kind == PacketKind::Pfc {
            return false;
        }
        let df = &mut self.dirs[dir as usize];
        let class_bit = 1u8 << (pkt.class & 7);
        let fault = df
            .downs
            .iter()
            .find(|w| w.from <= now && now < w.until)
            .map(|w| w.fault)
            .or_else(|| {
                let mut hit = None;
                for l in df.losses.iter_mut().filter(|l| l.classes & class_bit != 0) {
                    if unit_f64(&mut l.rng) < l.rate {
                        hit = Some(l.fault);
                        break;
                    }
                }
                hit
            });
        let Some(fault) = fault else {
            return false;
        };
        let c = &mut self.counters;
        c.by_fault[fault] += 1;
        if pkt.kind == PacketKind::Data {
            c.data[(pkt.class & 7) as usize].add(pkt.bytes as u64);
        } else {
            c.other.add(pkt.bytes as u64);
        }
        true
    }

    /// Publishes `part`'s counters (the loop paused), and the sum of both parts as
    /// `FaultCounters` and `FaultDrops`.
    pub fn publish(&self, world: &mut World, part: FaultPart) {
        let mut parts = world.remove_resource::<FaultParts>().unwrap_or_default();
        parts.0[part as usize] = self.counters.clone();
        let mut sum = FaultCounters {
            by_fault: vec![0; self.counters.by_fault.len()],
            ..Default::default()
        };
        for p in &parts.0 {
            for (c, &d) in sum.data.iter_mut().zip(&p.data) {
                *c += d;
            }
            sum.other += p.other;
            for (s, &n) in sum.by_fault.iter_mut().zip(&p.by_fault) {
                *s += n;
            }
        }
        world.insert_resource(FaultDrops(sum.data));
        world.insert_resource(sum);
        world.insert_resource(parts);
    }
}

/// A `LinkDown`'s times; `up` is `SimTime::MAX` when the link stays down.
fn times(at: f64, up: Option<f64>) -> (SimTime, SimTime) {
    // Validated at load: both fit the clock.
    let t = |s: f64| SimTime::from_secs_f64(s).unwrap_or(SimTime::MAX);
    (t(at), up.map_or(SimTime::MAX, t))
}

/// The fabric index with the routes of `now` (a rare event: a link between switches went down
/// or came up).
pub fn reroute(fabric: &FabricIndex, faults: &FaultState, now: SimTime) -> FabricIndex {
    FabricIndex {
        topology: fabric.topology.clone(),
        routes: faults.routes_at(&fabric.topology, now),
        kinds: fabric.kinds,
        nodes: fabric.nodes.clone(),
        dirs: fabric.dirs.clone(),
        dir_to: fabric.dir_to.clone(),
        egress: fabric.egress.clone(),
        salts: fabric.salts.clone(),
        int: fabric.int.clone(),
    }
}
