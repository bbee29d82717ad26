//! Forwarding: at every switch, for every destination host, the egress ports on shortest paths
//! (hop count), and the ECMP hash that picks one of them for a flow.
//!
//! A host has exactly one link, so every shortest path to a host passes through the node that host
//! hangs off (its *attachment*, an edge or leaf switch). Routes are therefore computed by one
//! breadth-first search per attachment rather than per host, and stored per (switch, attachment):
//! a fat tree with k = 16 has 1,024 hosts but 128 attachments. Each entry names an interned port
//! group, because most entries repeat a few groups ("any uplink", "the port to that leaf"). At the
//! attachment itself the answer is the one port to the host, kept per host.
//!
//! ECMP: a flow's 5-tuple (here the two hosts and UDP ports; the protocol is always UDP) hashes to
//! `flow_hash`, and each switch mixes it with its own salt (`switch_salt`) before reducing it to an
//! index. Without a per-switch salt every tier would make the same choice for the same flow and
//! only a fraction of the paths would ever carry traffic (hash polarization).

use super::Topology;
use engine::rng::{splitmix64, stream};
use rand_core::Rng;
use std::collections::{HashMap, VecDeque};

/// Where a host hangs off the fabric.
#[derive(Clone, Copy, Debug)]
struct Attached {
    /// Index of its attachment in `attachment_node` (`u32::MAX`: the host has no link).
    attachment: u32,
    /// The attachment's node id.
    node: u32,
    /// The port of the attachment node that leads to the host.
    port: u16,
}

/// Shortest-path next hops from every switch to every host.
///
/// A lookup runs at every switch hop, and each load in it waits for the one before, so the
/// tables are laid out for few of them: the host's attachment in one record, and each (switch,
/// attachment) entry holding its port group's bounds rather than the group's number (three
/// dependent loads with the `ports` read, where there were five).
#[derive(Clone, Debug)]
pub struct Routes {
    num_hosts: usize,
    attachments: usize,
    hosts: Vec<Attached>,
    /// `group[(switch - num_hosts) * attachments + a]`: the bounds in `ports` of the port group
    /// from that switch towards attachment `a`.
    group: Vec<(u32, u32)>,
    /// Number of distinct groups.
    groups: usize,
    ports: Vec<u16>,
}

impl Routes {
    /// Computes next hops for every (switch, host) pair by breadth-first search (hop count).
    pub fn compute(topo: &Topology) -> Routes {
        Self::compute_avoiding(topo, &[])
    }

    /// As `compute`, on the links not marked in `down` (by link id; missing ids are up). A
    /// switch that has no surviving path to an attachment keeps its shortest paths over every
    /// link: its packets then die at the down link (counted as fault drops) rather than for want
    /// of a route (which a lossless class must never see).
    pub fn compute_avoiding(topo: &Topology, down: &[bool]) -> Routes {
        let is_down = |p: &super::PortRef| down.get(p.link as usize).copied().unwrap_or(false);
        let num_hosts = topo.num_hosts;
        let mut attachment_of_node: HashMap<u32, u32> = HashMap::new();
        let mut attachment_node = Vec::new();
        let (mut host_attachment, mut host_port) = (Vec::with_capacity(num_hosts), Vec::with_capacity(num_hosts));
        for h in 0..num_hosts {
            // A built topology gives every host one port; a hand-made one without is unreachable.
            let Some(nic) = topo.nodes[h].ports.first() else {
                host_attachment.push(u32::MAX);
                host_port.push(0);
                continue;
            };
            let a = *attachment_of_node.entry(nic.peer_node).or_insert_with(|| {
                attachment_node.push(nic.peer_node);
                (attachment_node.len() - 1) as u32
            });
            host_attachment.push(a);
            host_port.push(nic.peer_port);
        }

        let num_switches = topo.num_switches();
        let attachments = attachment_node.len();
        let mut group = vec![(0, 0); num_switches * attachments];
        let mut interned: HashMap<Vec<u16>, u32> = HashMap::new();
        let (mut group_start, mut ports) = (vec![0u32], Vec::new());
        let mut scratch = Vec::new();
        // Each switch's ports towards switches: a port to a host is never a step towards an
        // attachment (the host's distance is its switch's plus one).
        let towards_switches: Vec<Vec<u16>> = (0..num_switches)
            .map(|s| {
                let node = &topo.nodes[num_hosts + s];
                let far = node
                    .ports
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.peer_node as usize >= num_hosts);
                far.map(|(i, _)| i as u16).collect()
            })
            .collect();
        let any_down = down.contains(&true);
        let mut last_group = vec![u32::MAX; num_switches];
        // The searches' buffers, reused from one attachment to the next (at `k: 64`, 2,048
        // searches over 70,656 nodes).
        let (mut full, mut up, mut queue) = (Vec::new(), Vec::new(), VecDeque::new());
        for (a, &target) in attachment_node.iter().enumerate() {
            hop_counts_into(topo, target, |_| true, &mut full, &mut queue);
            if any_down {
                hop_counts_into(topo, target, |p| !is_down(p), &mut up, &mut queue);
            }
            let up = if any_down { &up } else { &full };
            for (s, far) in towards_switches.iter().enumerate() {
                let node = &topo.nodes[num_hosts + s];
                // The surviving links' distances where they reach, else every link's.
                let (dist, avoid) = match up[num_hosts + s] {
                    u32::MAX => (&full, false),
                    _ => (up, true),
                };
                let d = dist[num_hosts + s];
                scratch.clear();
                if d != u32::MAX && d > 0 {
                    // Ports are visited in order, so the group comes out sorted.
                    let closer = far.iter().filter(|&&i| {
                        let p = &node.ports[i as usize];
                        dist[p.peer_node as usize] == d - 1 && !(avoid && is_down(p))
                    });
                    scratch.extend(closer);
                }
                // Most switches give most attachments the group they gave the one before ("any
                // uplink"): compared first, without hashing.
                let last = last_group[s];
                let same = last != u32::MAX
                    && ports[group_start[last as usize] as usize..group_start[last as usize + 1] as usize]
                        == scratch[..];
                let g = if same {
                    last
                } else if let Some(&g) = interned.get(scratch.as_slice()) {
                    g
                } else {
                    ports.extend_from_slice(&scratch);
                    group_start.push(ports.len() as u32);
                    let g = (group_start.len() - 2) as u32;
                    interned.insert(scratch.clone(), g);
                    g
                };
                last_group[s] = g;
                group[s * attachments + a] = (group_start[g as usize], group_start[g as usize + 1]);
            }
        }
        let hosts = (0..num_hosts)
            .map(|h| {
                let a = host_attachment[h];
                Attached {
                    attachment: a,
                    node: attachment_node.get(a as usize).copied().unwrap_or(u32::MAX),
                    port: host_port[h],
                }
            })
            .collect();
        Routes {
            num_hosts,
            attachments,
            hosts,
            group,
            groups: group_start.len() - 1,
            ports,
        }
    }

    /// The egress ports of `switch` (a node id) on shortest paths to `dst_host`, sorted. Empty if
    /// the host cannot be reached. `switch` must be a switch and `dst_host` a host of the topology
    /// the routes were computed from.
    #[inline]
    pub fn next_hops(&self, switch: u32, dst_host: u32) -> &[u16] {
        debug_assert!(
            switch as usize >= self.num_hosts,
            "next_hops: node {switch} is a host, not a switch"
        );
        let h = &self.hosts[dst_host as usize];
        if h.attachment == u32::MAX {
            return &[];
        }
        if h.node == switch {
            return std::slice::from_ref(&h.port);
        }
        let row = (switch as usize - self.num_hosts) * self.attachments + h.attachment as usize;
        let (start, end) = self.group[row];
        &self.ports[start as usize..end as usize]
    }

    /// Starts loading the entry `next_hops(switch, dst_host)` reads (warming an event ahead).
    #[inline]
    pub fn prefetch(&self, switch: u32, dst_host: u32) {
        let Some(h) = self.hosts.get(dst_host as usize) else {
            return;
        };
        let row = (switch as usize).wrapping_sub(self.num_hosts) * self.attachments + h.attachment as usize;
        if let Some(g) = self.group.get(row) {
            engine::prefetch::prefetch(g);
        }
    }

    /// Number of distinct port groups the table holds (a measure of its size).
    pub fn num_groups(&self) -> usize {
        self.groups
    }
}

/// Hop counts from `from` to every node (`u32::MAX` where unreachable), by breadth-first search.
pub fn hop_counts(topo: &Topology, from: u32) -> Vec<u32> {
    hop_counts_where(topo, from, |_| true)
}

/// As `hop_counts`, over the ports `usable` accepts.
fn hop_counts_where(topo: &Topology, from: u32, usable: impl Fn(&super::PortRef) -> bool) -> Vec<u32> {
    let mut dist = Vec::new();
    hop_counts_into(topo, from, usable, &mut dist, &mut VecDeque::new());
    dist
}

/// As `hop_counts_where`, into `dist`, with `queue` as scratch. A host other than `from` is not
/// searched from: its one link leads back to the node it was reached from.
fn hop_counts_into(
    topo: &Topology,
    from: u32,
    usable: impl Fn(&super::PortRef) -> bool,
    dist: &mut Vec<u32>,
    queue: &mut VecDeque<u32>,
) {
    dist.clear();
    dist.resize(topo.nodes.len(), u32::MAX);
    queue.clear();
    queue.push_back(from);
    dist[from as usize] = 0;
    while let Some(n) = queue.pop_front() {
        let d = dist[n as usize] + 1;
        for p in topo.nodes[n as usize].ports.iter().filter(|p| usable(p)) {
            let slot = &mut dist[p.peer_node as usize];
            if *slot == u32::MAX {
                *slot = d;
                if p.peer_node as usize >= topo.num_hosts {
                    queue.push_back(p.peer_node);
                }
            }
        }
    }
}

/// A stable 64-bit hash of a flow's addresses and UDP ports (the protocol is always UDP, so the
/// 5-tuple reduces to these four). The same flow hashes the same on every platform and build.
#[inline]
pub fn flow_hash(src_host: u32, dst_host: u32, udp_src_port: u16, udp_dst_port: u16) -> u64 {
    let hosts = (src_host as u64) << 32 | dst_host as u64;
    let ports = (udp_src_port as u64) << 16 | udp_dst_port as u64;
    splitmix64(splitmix64(hosts) ^ ports)
}

/// Which of `n` equal-cost ports a switch with salt `salt` gives the flow hashing to `flow`: the
/// salted hash, remixed, scaled onto `0..n` (multiply-shift, no modulo bias to speak of). Returns
/// 0 when `n` is 0 or 1.
#[inline]
pub fn ecmp_choice(salt: u64, flow: u64, n: usize) -> usize {
    ((splitmix64(flow ^ salt) as u128 * n as u128) >> 64) as usize
}

/// The ECMP salt of `switch_node` under `seed`: the first draw of the `("ecmp-salt", node)` stream.
pub fn switch_salt(seed: u64, switch_node: u32) -> u64 {
    stream(seed, "ecmp-salt", switch_node as u64).next_u64()
}

#[cfg(test)]
mod tests;
