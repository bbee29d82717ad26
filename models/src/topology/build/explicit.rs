//! Explicit topologies: node names resolved, hosts numbered first, and the checks a generated
//! shape passes by construction (unique names, one link per host, no self-loops or parallel
//! links, a connected fabric) done on the user's lists, each error naming the list entry.

use super::super::config::{ExplicitTopology, NodeSpec};
use super::super::{NodeKind, Topology, TopologyError};
use super::{Builder, check_rate, check_size};
use std::collections::{HashMap, VecDeque};

pub(super) fn explicit(e: &ExplicitTopology) -> Result<Topology, TopologyError> {
    check_size(e.nodes.len() as u128, "topology.nodes")?;
    let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(e.nodes.len());
    for (i, n) in e.nodes.iter().enumerate() {
        let name = n.name();
        if name.is_empty() {
            return Err(TopologyError::EmptyName {
                field: format!("topology.nodes[{i}]"),
            });
        }
        if let Some(&first) = by_name.get(name) {
            return Err(TopologyError::DuplicateName {
                field: format!("topology.nodes[{i}]"),
                name: name.into(),
                first,
            });
        }
        by_name.insert(name, i);
    }
    let num_hosts = e.nodes.iter().filter(|n| matches!(n, NodeSpec::Host(_))).count();
    if num_hosts < 2 {
        return Err(TopologyError::TooFewHosts {
            field: "topology.nodes".into(),
            found: num_hosts as u64,
        });
    }
    check_rate(e.link_rate, "topology.link_rate")?;

    // Node ids: hosts in the order listed, then switches in the order listed.
    let mut b = Builder::with_capacity(e.nodes.len(), e.links.len());
    let mut id_of = vec![0u32; e.nodes.len()];
    for host in [true, false] {
        for (i, n) in e.nodes.iter().enumerate() {
            if matches!(n, NodeSpec::Host(_)) == host {
                let kind = if host { NodeKind::Host } else { NodeKind::Switch };
                id_of[i] = b.node(n.name().to_owned(), kind);
            }
        }
    }

    let mut pairs: HashMap<(u32, u32), usize> = HashMap::with_capacity(e.links.len());
    let mut host_link: Vec<Option<usize>> = vec![None; num_hosts];
    for (j, l) in e.links.iter().enumerate() {
        let end = |name: &str, side: &str| {
            by_name
                .get(name)
                .map(|&i| id_of[i])
                .ok_or_else(|| TopologyError::UnknownNode {
                    field: format!("topology.links[{j}].{side}"),
                    name: name.into(),
                })
        };
        let (a, b_id) = (end(&l.a, "a")?, end(&l.b, "b")?);
        let field = format!("topology.links[{j}]");
        if a == b_id {
            return Err(TopologyError::SelfLoop {
                field,
                name: l.a.clone(),
            });
        }
        if let Some(&first) = pairs.get(&(a.min(b_id), a.max(b_id))) {
            return Err(TopologyError::DuplicateLink {
                field,
                a: l.a.clone(),
                b: l.b.clone(),
                first,
            });
        }
        pairs.insert((a.min(b_id), a.max(b_id)), j);
        for (node, name) in [(a, &l.a), (b_id, &l.b)] {
            if let Some(slot) = host_link.get_mut(node as usize) {
                if let Some(first) = *slot {
                    return Err(TopologyError::HostWithSecondLink {
                        field,
                        name: name.clone(),
                        first,
                    });
                }
                *slot = Some(j);
            }
        }
        let rate = l.rate.unwrap_or(e.link_rate);
        check_rate(rate, &format!("topology.links[{j}].rate"))?;
        b.link(a, b_id, rate, l.delay.unwrap_or(e.link_delay), &field)?;
    }
    if let Some(h) = host_link.iter().position(Option::is_none) {
        let i = id_of.iter().position(|&id| id as usize == h).unwrap_or(h);
        return Err(TopologyError::HostWithoutLink {
            field: format!("topology.nodes[{i}]"),
            name: b.nodes[h].name.clone(),
        });
    }
    check_connected(&b)?;
    Ok(b.finish())
}

/// Breadth-first search from node 0; names the first node (by id) it cannot reach.
fn check_connected(b: &Builder) -> Result<(), TopologyError> {
    let mut seen = vec![false; b.nodes.len()];
    let mut queue = VecDeque::from([0u32]);
    seen[0] = true;
    while let Some(n) = queue.pop_front() {
        for p in &b.nodes[n as usize].ports {
            if !std::mem::replace(&mut seen[p.peer_node as usize], true) {
                queue.push_back(p.peer_node);
            }
        }
    }
    match seen.iter().position(|s| !s) {
        None => Ok(()),
        Some(n) => Err(TopologyError::Disconnected {
            field: "topology.links".into(),
            from: b.nodes[0].name.clone(),
            to: b.nodes[n].name.clone(),
        }),
    }
}
