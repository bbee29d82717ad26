//! The plan: which host runs which component, the pairs, and the connections, computed before
//! the simulation starts from the applications' ratios, the host count and `RandomSeed`.
//! `rdmasim plan --format json` prints it; the runtime builds its instances from it.
//!
//! The ratios of every application in the scenario share one budget (the spec), so one plan
//! covers all the Scala RDMA applications of a scenario.

use crate::config::ScalaRdmaConfig;
use crate::pairing::pair;
use crate::placement::{Component, ComponentRatio, PlacementError, assign_hosts, host_counts, nodes_of};
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostPlan {
    pub node_id: u32,
    /// The application's `name`.
    pub application: String,
    /// `initiator` or `responder`.
    pub component: &'static str,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairPlan {
    pub initiator: u32,
    pub responder: u32,
    pub application: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConnectionPlan {
    /// The connection's id: its position in this list.
    pub id: u32,
    pub initiator: u32,
    pub responder: u32,
    /// Index of the connection within its pair, from 0 to `NumConnections - 1`.
    pub index: u32,
    /// The Initiator instance's name (`application_name` in rdma-perf).
    pub application_name: String,
    /// Which application (position in `applications`) it belongs to.
    #[serde(skip)]
    pub app: usize,
    pub traffic_class: u8,
}

/// Placement, pairing and connections.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plan {
    pub hosts: Vec<HostPlan>,
    pub pairs: Vec<PairPlan>,
    pub connections: Vec<ConnectionPlan>,
}

/// The component ratios of `apps`, in the order the placement rules go through them.
pub fn ratios(apps: &[ScalaRdmaConfig]) -> Vec<ComponentRatio> {
    apps.iter()
        .enumerate()
        .flat_map(|(app, c)| {
            [
                ComponentRatio {
                    app,
                    component: Component::Initiator,
                    ratio: c.pr_scala_rdma_initiator.get(),
                },
                ComponentRatio {
                    app,
                    component: Component::Responder,
                    ratio: c.pr_scala_rdma_responder.get(),
                },
            ]
        })
        .collect()
}

impl Plan {
    /// Places, pairs (each application from its own stream `("pairing", app index)`) and lists
    /// the connections: by application, then pair, then index within the pair.
    pub fn compute(apps: &[ScalaRdmaConfig], num_hosts: usize, seed: u64) -> Result<Plan, PlacementError> {
        let ratios = ratios(apps);
        let counts = host_counts(&ratios, num_hosts)?;
        let placements = assign_hosts(&counts, &ratios);
        let hosts = placements
            .iter()
            .map(|p| HostPlan {
                node_id: p.node_id,
                application: apps[p.app].name.clone(),
                component: match p.component {
                    Component::Initiator => "initiator",
                    Component::Responder => "responder",
                },
            })
            .collect();
        let mut pairs = Vec::new();
        let mut connections = Vec::new();
        for (a, cfg) in apps.iter().enumerate() {
            let initiators = nodes_of(&placements, a, Component::Initiator);
            let responders = nodes_of(&placements, a, Component::Responder);
            let mut rng = engine::rng::stream(seed, "pairing", a as u64);
            for (i, r) in pair(&initiators, &responders, &mut rng) {
                pairs.push(PairPlan {
                    initiator: i,
                    responder: r,
                    application: cfg.name.clone(),
                });
                for index in 0..cfg.num_connections.get() {
                    connections.push(ConnectionPlan {
                        id: connections.len() as u32,
                        initiator: i,
                        responder: r,
                        index,
                        application_name: cfg.instance_name(i, r, index),
                        app: a,
                        traffic_class: cfg.rdma_data_packet_tc.get(),
                    });
                }
            }
        }
        Ok(Plan {
            hosts,
            pairs,
            connections,
        })
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a plan always serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(i: f64, r: f64) -> ScalaRdmaConfig {
        ron::from_str(&format!("(prScalaRdmaInitiator: {i}, prScalaRdmaResponder: {r})")).unwrap()
    }

    #[test]
    fn worked_examples_on_16_hosts() {
        // (ratios, initiators, responders, pairs) from the spec's worked example.
        for (i, r, ni, nr, np) in [(0.5, 0.5, 8, 8, 8), (0.9, 0.1, 15, 1, 15), (0.25, 0.75, 4, 12, 12)] {
            let plan = Plan::compute(&[app(i, r)], 16, 18760).unwrap();
            let count = |c| plan.hosts.iter().filter(|h| h.component == c).count();
            assert_eq!((count("initiator"), count("responder")), (ni, nr), "{i}/{r}");
            assert_eq!(plan.pairs.len(), np);
            assert_eq!(plan.connections.len(), np);
            for p in &plan.pairs {
                assert_ne!(p.initiator, p.responder);
            }
        }
    }

    #[test]
    fn connections_per_pair_and_names() {
        let mut cfg = app(0.5, 0.5);
        cfg.num_connections = crate::config::NumConnections::new(4).unwrap();
        let plan = Plan::compute(&[cfg], 16, 1).unwrap();
        assert_eq!(plan.connections.len(), 8 * 4);
        let c = &plan.connections[5];
        assert_eq!(c.id, 5);
        assert_eq!(c.index, 1);
        assert_eq!(
            c.application_name,
            format!("scala-rdma-initiator-{}-{}-1", c.initiator, c.responder)
        );
        let json: serde_json::Value = serde_json::from_str(&plan.to_json()).unwrap();
        assert_eq!(json["connections"].as_array().unwrap().len(), 32);
        assert_eq!(json["hosts"][0]["component"], "initiator");
    }

    #[test]
    fn seed_sets_the_pairs() {
        let a = Plan::compute(&[app(0.5, 0.5)], 16, 18760).unwrap();
        let b = Plan::compute(&[app(0.5, 0.5)], 16, 18760).unwrap();
        let c = Plan::compute(&[app(0.5, 0.5)], 16, 18761).unwrap();
        assert_eq!(a, b);
        assert_ne!(a.pairs, c.pairs);
    }
}
