//! The PFC deadlock watchdog: at every beacon tick and at the end of the run, a wait-for graph
//! of the switches, and any cycle in it held past `WatchdogConfig::PfcDeadlockTimeout`.
//!
//! Switch S waits for node T in class c when S's egress port toward T is paused for c (T sent
//! PAUSE) and has a packet of c queued. An edge counts as held when it was seen at every look
//! since it first was, with the same packet at the head of the queue: so nothing of that class
//! left the port in between, whatever PAUSE/RESUME pairs a sampled look could miss. A cycle of
//! held edges in one class, every one of them for the timeout, is a deadlock: each switch's
//! buffer waits on the next one's, and none can drain. Only switches take part (a host's NIC
//! drains to host memory, so it waits for nobody). Between looks nothing is done: the cost is
//! ports x 8 classes per tick, none per packet.

use super::Fabric;
use super::switch::Switch;
use crate::watchdog::{PausedPort, PfcDeadlock, WatchdogConfig, WatchdogReport};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::IntoScheduleConfigs;
use engine::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// The phase systems of the watchdogs; the application's run after the fabric's (both write
/// `WatchdogReport`).
#[derive(SystemSet, Clone, Debug, PartialEq, Eq, Hash)]
pub enum WatchdogSystems {
    /// The fabric's PFC deadlock check.
    Fabric,
    /// The applications' stall checks.
    Application,
}

/// Adds the PFC deadlock check to `BeaconTick` and `Finish`. It reads `WatchdogConfig` (the
/// defaults when absent) and writes `WatchdogReport`.
pub struct PfcDeadlockPlugin;

impl Plugin for PfcDeadlockPlugin {
    fn build(&self, app: &mut App) {
        if app.world.get_resource::<WatchdogReport>().is_none() {
            app.insert_resource(WatchdogReport::default());
        }
        app.insert_resource(DeadlockWatch::default());
        app.add_systems(BeaconTick, check_pfc_deadlock.in_set(WatchdogSystems::Fabric));
        app.add_systems(Finish, check_pfc_deadlock.in_set(WatchdogSystems::Fabric));
    }
}

/// An edge of the wait-for graph: (switch node, egress port, class).
type Edge = (u32, u16, u8);

/// Identifies a packet instance: its sender, PSN and when it was first sent.
type Head = (u32, u32, SimTime);

/// The edges seen at the last look, and the cycles already reported.
#[derive(Resource, Default, Debug)]
pub struct DeadlockWatch {
    held: BTreeMap<Edge, (SimTime, Head)>,
    reported: BTreeSet<Vec<Edge>>,
}

/// Looks at every switch's paused ports and reports a new cycle held past the timeout.
pub fn check_pfc_deadlock(
    fabric: Res<Fabric>,
    queue: Res<EventQueue>,
    cfg: Option<Res<WatchdogConfig>>,
    switches: Option<Res<engine::store::Store<Switch>>>,
    mut watch: ResMut<DeadlockWatch>,
    mut report: ResMut<WatchdogReport>,
) {
    // Only the shared-buffer switch has PFC: with another model there is nothing to look at.
    let Some(switches) = switches else { return };
    let timeout = cfg
        .map_or_else(
            || WatchdogConfig::default().PfcDeadlockTimeout,
            |c| c.PfcDeadlockTimeout,
        )
        .0
        .0;
    let now = queue.now();
    let f = &*fabric.0;
    let num_hosts = f.topology.num_hosts as u32;
    let mut held = BTreeMap::new();
    for sw in switches.rows() {
        for port in 0..sw.ports() as u16 {
            for class in 0..8u8 {
                if !sw.egress_paused(port, class) {
                    continue;
                }
                let Some(p) = sw.queue_head(port, class) else { continue };
                let head = (p.src, p.psn, p.sent_at);
                let key = (sw.node, port, class);
                let since = match watch.held.get(&key) {
                    Some(&(since, h)) if h == head => since,
                    _ => now,
                };
                held.insert(key, (since, head));
            }
        }
    }
    watch.held = held;
    let toward = |&(node, port, _): &Edge| f.dir_to[f.egress[node as usize][port as usize] as usize].0;
    // The held edges between switches, by class and switch.
    let mut graph: BTreeMap<(u8, u32), Vec<Edge>> = BTreeMap::new();
    for (edge, &(since, _)) in &watch.held {
        if now - since >= timeout && toward(edge) >= num_hosts {
            graph.entry((edge.2, edge.0)).or_default().push(*edge);
        }
    }
    for cycle in find_cycles(&graph, toward) {
        if !watch.reported.insert(cycle.clone()) {
            continue;
        }
        let since = cycle.iter().map(|e| watch.held[e].0).max().unwrap_or(now);
        let name = |n: u32| f.topology.nodes[n as usize].name.clone();
        report.deadlocks.push(PfcDeadlock {
            class: cycle[0].2,
            since_sec: since.as_secs_f64(),
            detected_sec: now.as_secs_f64(),
            cycle: cycle
                .iter()
                .map(|e| PausedPort {
                    switch: name(e.0),
                    node: e.0,
                    port: e.1,
                    toward: name(toward(e)),
                })
                .collect(),
        });
    }
}

/// The cycles of the wait-for graph (one per back edge of a depth-first search, in node order),
/// each rotated to start at its smallest edge so that the same cycle is the same list.
fn find_cycles(graph: &BTreeMap<(u8, u32), Vec<Edge>>, toward: impl Fn(&Edge) -> u32) -> Vec<Vec<Edge>> {
    let mut cycles = Vec::new();
    let mut done: BTreeSet<(u8, u32)> = BTreeSet::new();
    for &start in graph.keys() {
        if done.contains(&start) {
            continue;
        }
        // Iterative DFS: the path of edges taken, and for each node on it the next edge to try.
        let mut on_path: Vec<(u8, u32)> = vec![start];
        let mut next: Vec<usize> = vec![0];
        let mut path: Vec<Edge> = Vec::new();
        while let Some(&node) = on_path.last() {
            let i = *next.last().expect("one cursor per node");
            let out = graph.get(&node).map_or(&[][..], Vec::as_slice);
            if i == out.len() {
                done.insert(node);
                on_path.pop();
                next.pop();
                path.pop();
                continue;
            }
            *next.last_mut().expect("one cursor per node") += 1;
            let edge = out[i];
            let to = (node.0, toward(&edge));
            if let Some(at) = on_path.iter().position(|&n| n == to) {
                let mut cycle: Vec<Edge> = path[at..].to_vec();
                cycle.push(edge);
                let min = (0..cycle.len()).min_by_key(|&k| cycle[k]).unwrap_or(0);
                cycle.rotate_left(min);
                cycles.push(cycle);
            } else if !done.contains(&to) && graph.contains_key(&to) {
                on_path.push(to);
                next.push(0);
                path.push(edge);
            }
        }
    }
    cycles
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_is_one_cycle_and_a_chain_none() {
        // Switches 10..14 in a ring (10 -> 11 -> ... -> 14 -> 10), each through its port 1, class 3;
        // 20 -> 21 -> 22 a chain in class 3, and 30 <-> 31 a 2-cycle in class 4.
        let mut to: BTreeMap<Edge, u32> = BTreeMap::new();
        for n in 10..15u32 {
            to.insert((n, 1, 3), if n == 14 { 10 } else { n + 1 });
        }
        to.insert((20, 1, 3), 21);
        to.insert((21, 1, 3), 22);
        to.insert((30, 2, 4), 31);
        to.insert((31, 5, 4), 30);
        let mut graph: BTreeMap<(u8, u32), Vec<Edge>> = BTreeMap::new();
        for e in to.keys() {
            graph.entry((e.2, e.0)).or_default().push(*e);
        }
        let cycles = find_cycles(&graph, |e| to[e]);
        assert_eq!(
            cycles,
            vec![
                (10..15).map(|n| (n, 1, 3)).collect::<Vec<_>>(),
                vec![(30, 2, 4), (31, 5, 4)],
            ]
        );
    }
}
