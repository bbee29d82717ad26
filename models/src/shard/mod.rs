//! Shards: which shard runs each node (`Partition`), and what a shard's world knows of it
//! (`ShardPlan`). The engine runs the shards (`engine::shard`); the fabric moves the packets
//! that cross between them (`port`); applications start only the instances on their shard's
//! hosts (`ShardPlan::owns`).
//!
//! The partition keeps each host with its first switch, and whatever hangs below the top tier
//! of switches together (a leaf and its hosts, a fat tree's pod): it removes the switches
//! farthest from any host, takes the connected parts of what is left as units, and deals the
//! units to shards largest first, each to the shard with the fewest hosts so far; the top tier's
//! switches are dealt in turn. The lookahead is the smallest delay of a link between two shards.
//! A scenario may give its own partition instead (`Partition::given`): each shard's switches.

pub mod port;

use crate::topology::{NodeKind, Topology};
use bevy_ecs::prelude::*;
use engine::SimTime;
use engine::scenario::FieldError;
use std::sync::Arc;

/// Which shard runs each node, and the lookahead that follows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// Shards.
    pub shards: u32,
    /// `shard_of[node]`.
    pub shard_of: Vec<u32>,
    /// The smallest one-way delay of a link whose ends are in two shards (`SimTime::MAX` when
    /// none is).
    pub lookahead: SimTime,
}

/// Why a topology cannot be split as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PartitionError {
    /// No shards.
    #[error("--shards must be at least 1")]
    NoShards,
    /// A link between shards has no delay, so the shards could never run apart.
    #[error(
        "link {a} - {b} crosses shards {sa} and {sb} with zero delay: shards need a link delay above zero between them"
    )]
    ZeroDelay {
        /// One end's name.
        a: String,
        /// The other end's name.
        b: String,
        /// `a`'s shard.
        sa: u32,
        /// `b`'s shard.
        sb: u32,
    },
}

impl Partition {
    /// Splits `topology` over `shards` shards.
    pub fn compute(topology: &Topology, shards: u32) -> Result<Partition, PartitionError> {
        if shards == 0 {
            return Err(PartitionError::NoShards);
        }
        let depth = depth_from_hosts(topology);
        let top = depth.iter().copied().filter(|&d| d != u32::MAX).max().unwrap_or(0);
        // With switches two or more hops from any host, the farthest tier is cut away; else
        // (a star, a line of hosts' switches) nothing is, and the fabric is one unit.
        let cut = |n: usize| top >= 2 && depth[n] == top;
        let units = units_below(topology, &cut);
        let mut shard_of = vec![u32::MAX; topology.nodes.len()];
        let mut hosts = vec![0usize; shards as usize];
        let mut order: Vec<&Vec<u32>> = units.iter().collect();
        let host_count = |u: &Vec<u32>| u.iter().filter(|&&n| topology.is_host(n)).count();
        // Largest first, then by first node: the same split on every machine.
        order.sort_by_key(|u| (std::cmp::Reverse(host_count(u)), u[0]));
        for unit in order {
            let s = (0..shards as usize)
                .min_by_key(|&s| (hosts[s], s))
                .expect("shards >= 1");
            hosts[s] += host_count(unit);
            for &n in unit {
                shard_of[n as usize] = s as u32;
            }
        }
        let mut next = 0;
        for (n, s) in shard_of.iter_mut().enumerate() {
            if *s == u32::MAX {
                debug_assert!(cut(n) || depth[n] == u32::MAX);
                *s = next % shards;
                next += 1;
            }
        }
        Partition::with(topology, shards, shard_of)
    }

    /// The partition a scenario gives: `switches[s]` names shard `s`'s switches, every switch
    /// in exactly one; each host goes with its first switch. The error's field is relative to
    /// the list (`[1][2]`, or empty for the whole).
    pub fn given(topology: &Topology, switches: &[Vec<String>]) -> Result<Partition, FieldError> {
        let shards = switches.len() as u32;
        if shards == 0 {
            return Err(FieldError::new("", "a partition needs at least one shard"));
        }
        let mut shard_of = vec![u32::MAX; topology.nodes.len()];
        for (s, list) in switches.iter().enumerate() {
            if list.is_empty() {
                return Err(FieldError::new(format!("[{s}]"), "a shard needs at least one switch"));
            }
            for (i, name) in list.iter().enumerate() {
                let at = |msg: String| FieldError::new(format!("[{s}][{i}]"), msg);
                let n = topology
                    .find(name)
                    .ok_or_else(|| at(format!("no node of the topology is named `{name}`")))?;
                if !is_switch(topology, n) {
                    return Err(at(format!("`{name}` is a host: hosts go with their first switch")));
                }
                if shard_of[n as usize] != u32::MAX {
                    let first = shard_of[n as usize];
                    return Err(at(format!("`{name}` is already in shard {first}")));
                }
                shard_of[n as usize] = s as u32;
            }
        }
        if let Some(n) = (topology.num_hosts..topology.nodes.len()).find(|&n| shard_of[n] == u32::MAX) {
            let name = &topology.nodes[n].name;
            return Err(FieldError::new("", format!("switch `{name}` is in no shard")));
        }
        for h in 0..topology.num_hosts {
            shard_of[h] = shard_of[topology.port(h as u32, 0).peer_node as usize];
        }
        Partition::with(topology, shards, shard_of).map_err(|e| FieldError::new("", e.to_string()))
    }

    /// The partition `shard_of`, with its lookahead; refused if a zero-delay link crosses.
    fn with(topology: &Topology, shards: u32, shard_of: Vec<u32>) -> Result<Partition, PartitionError> {
        let mut lookahead = SimTime::MAX;
        for link in &topology.links {
            let (sa, sb) = (shard_of[link.a.0 as usize], shard_of[link.b.0 as usize]);
            if sa != sb {
                if link.delay.0 == SimTime::ZERO {
                    let name = |n: u32| topology.nodes[n as usize].name.clone();
                    return Err(PartitionError::ZeroDelay {
                        a: name(link.a.0),
                        b: name(link.b.0),
                        sa,
                        sb,
                    });
                }
                lookahead = lookahead.min(link.delay.0);
            }
        }
        Ok(Partition {
            shards,
            shard_of,
            lookahead,
        })
    }

    /// Hosts on each shard.
    pub fn hosts_per_shard(&self, topology: &Topology) -> Vec<usize> {
        let mut n = vec![0; self.shards as usize];
        for h in 0..topology.num_hosts {
            n[self.shard_of[h] as usize] += 1;
        }
        n
    }
}

/// Hops from each node to the nearest host (`u32::MAX` where none is reachable).
fn depth_from_hosts(t: &Topology) -> Vec<u32> {
    let mut depth = vec![u32::MAX; t.nodes.len()];
    let mut frontier: std::collections::VecDeque<u32> = (0..t.num_hosts as u32).collect();
    depth[..t.num_hosts].fill(0);
    while let Some(n) = frontier.pop_front() {
        for p in &t.nodes[n as usize].ports {
            if depth[p.peer_node as usize] == u32::MAX {
                depth[p.peer_node as usize] = depth[n as usize] + 1;
                frontier.push_back(p.peer_node);
            }
        }
    }
    depth
}

/// The connected parts of the fabric without the nodes `cut` names, each sorted, in order of
/// their first node; cut nodes belong to none.
fn units_below(t: &Topology, cut: &dyn Fn(usize) -> bool) -> Vec<Vec<u32>> {
    let mut seen = vec![false; t.nodes.len()];
    let mut units = Vec::new();
    for start in 0..t.nodes.len() {
        if seen[start] || cut(start) {
            continue;
        }
        let mut unit = vec![start as u32];
        seen[start] = true;
        let mut i = 0;
        while i < unit.len() {
            let n = unit[i] as usize;
            i += 1;
            for p in &t.nodes[n].ports {
                let m = p.peer_node as usize;
                if !seen[m] && !cut(m) {
                    seen[m] = true;
                    unit.push(m as u32);
                }
            }
        }
        unit.sort_unstable();
        units.push(unit);
    }
    units
}

/// This world's part of a sharded run: absent when the run is one world.
#[derive(Resource, Clone, Debug)]
pub struct ShardPlan {
    /// This world's shard.
    pub me: u32,
    /// The partition.
    pub partition: Arc<Partition>,
}

impl ShardPlan {
    /// Whether this shard runs node `node`.
    pub fn owns(&self, node: u32) -> bool {
        self.partition.shard_of[node as usize] == self.me
    }
}

/// Whether the world's shard runs host `node`: always, when the run is one world.
pub fn owns(world: &World, node: u32) -> bool {
    world.get_resource::<ShardPlan>().is_none_or(|p| p.owns(node))
}

/// Whether node `n` of `t` is a switch (for callers that print the partition).
pub fn is_switch(t: &Topology, n: u32) -> bool {
    t.nodes[n as usize].kind == NodeKind::Switch
}

#[cfg(test)]
mod tests;
