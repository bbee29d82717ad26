//! The scenario's `faults: [...]`: what to break, where and when, and the checks that name the
//! bad entry's field (`faults[2].link`).

use crate::topology::Topology;
use bevy_ecs::prelude::*;
use engine::SimTime;
use engine::units::Rate;
use serde::Deserialize;

/// One injected fault. A link is named by the two nodes it joins, in either order; every link
/// between them is affected, in both directions.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub enum Fault {
    /// Each packet crossing the link is lost with probability `rate`, drawn from a stream seeded
    /// by `simulation.RandomSeed` and the link direction (the same seed loses the same packets).
    /// `classes`: the traffic classes it applies to (default all). PFC frames are exempt.
    Loss {
        /// The link, by its two nodes' names.
        link: (String, String),
        /// The probability a packet is lost, from 0 to 1.
        rate: f64,
        /// The classes it applies to; all by default.
        #[serde(default)]
        classes: Option<Vec<u8>>,
    },
    /// The link goes down at `at` seconds and, with `up: Some(s)`, comes back at `s`. A packet
    /// that reaches the far end while it is down, or that was launched before `up`, is lost;
    /// between switches the routes avoid it while it is down. PFC frames are exempt.
    LinkDown {
        /// The link, by its two nodes' names.
        link: (String, String),
        /// When it goes down, in simulated seconds.
        at: f64,
        /// When it comes back up, if it does.
        #[serde(default)]
        up: Option<f64>,
    },
    /// Host `host`'s NIC drains its receive pool into host memory at `rate` (at most; the PCIe
    /// write may be slower), so the pool fills and the NIC sends PFC PAUSE upstream.
    SlowReceiver {
        /// The slow host's node id.
        host: u32,
        /// The rate its NIC drains received data at most.
        rate: Rate,
    },
}

impl Fault {
    /// The link it names (`None` for a slow receiver).
    pub fn link(&self) -> Option<&(String, String)> {
        match self {
            Fault::Loss { link, .. } | Fault::LinkDown { link, .. } => Some(link),
            Fault::SlowReceiver { .. } => None,
        }
    }

    /// The receive pool drain rate of `host`'s NIC the faults set, if any (the last wins).
    pub fn slow_receiver(faults: &[Fault], host: u32) -> Option<Rate> {
        faults.iter().rev().find_map(|f| match f {
            Fault::SlowReceiver { host: h, rate } if *h == host => Some(*rate),
            _ => None,
        })
    }
}

/// The scenario's faults, as a resource (absent or empty: nothing is injected and the fabric's
/// hot path sees one `None`).
#[derive(Resource, Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(transparent)]
pub struct FaultConfig(pub Vec<Fault>);

/// A bad entry: the field path (from the scenario's top, `faults[2].rate`) and what is wrong.
pub type FaultError = engine::scenario::FieldError;

impl FaultConfig {
    /// The ids of the links `f` names (every link between its two nodes).
    pub fn links(topo: &Topology, f: &Fault) -> Vec<u32> {
        let Some((a, b)) = f.link() else {
            return Vec::new();
        };
        let (Some(a), Some(b)) = (topo.find(a), topo.find(b)) else {
            return Vec::new();
        };
        (0..topo.links.len() as u32)
            .filter(|&l| {
                let k = &topo.links[l as usize];
                (k.a.0, k.b.0) == (a, b) || (k.a.0, k.b.0) == (b, a)
            })
            .collect()
    }

    /// Checks every entry against the topology: known, linked nodes, a rate in [0, 1], classes
    /// 0-7, times that fit the clock and an `up` after `at`.
    pub fn validate(&self, topo: &Topology) -> Result<(), FaultError> {
        for (i, f) in self.0.iter().enumerate() {
            let err = |field: &str, message: String| FaultError {
                field: format!("faults[{i}].{field}"),
                message,
            };
            if let Some((a, b)) = f.link() {
                for n in [a, b] {
                    if topo.find(n).is_none() {
                        return Err(err("link", format!("no node is named {n:?}")));
                    }
                }
                if Self::links(topo, f).is_empty() {
                    return Err(err("link", format!("no link joins {a:?} and {b:?}")));
                }
            }
            let time = |field: &str, secs: f64| match SimTime::from_secs_f64(secs) {
                Some(_) if secs >= 0.0 => Ok(()),
                _ => Err(err(
                    field,
                    format!("{secs} is not a time in seconds the clock can hold (0 to 1.8e7)"),
                )),
            };
            match f {
                Fault::Loss { rate, classes, .. } => {
                    if !(0.0..=1.0).contains(rate) {
                        return Err(err("rate", format!("{rate} is not a probability in [0, 1]")));
                    }
                    if let Some(c) = classes.iter().flatten().find(|&&c| c > 7) {
                        return Err(err("classes", format!("{c} is not a traffic class (0-7)")));
                    }
                }
                Fault::SlowReceiver { host, .. } => {
                    if *host as usize >= topo.num_hosts {
                        return Err(err(
                            "host",
                            format!("host {host} does not exist (the topology has {} hosts)", topo.num_hosts),
                        ));
                    }
                }
                Fault::LinkDown { at, up, .. } => {
                    time("at", *at)?;
                    if let Some(up) = up {
                        time("up", *up)?;
                        if up <= at {
                            return Err(err(
                                "up",
                                format!("the link comes up at {up} s, not after it goes down at {at} s"),
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}
