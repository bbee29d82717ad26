//! The application's part of the plan: its hosts (from the shared placement), its pairs and its
//! connections. `rdmasim plan --format json` prints the whole plan; the runtime builds its
//! instances from this part.

use crate::config::ScalaRdmaConfig;
use crate::pairing::pair;
use models::application::{AppPlacement, ConnectionPlan, DistributionEntry, HostPlan, PairPlan, Plan};

/// The two components, in the order placement visits them (the spec's top-up starts with the
/// Initiator).
pub const INITIATOR: usize = 0;
/// The Responder's component index.
pub const RESPONDER: usize = 1;
/// Their names in the plan.
pub const COMPONENTS: [&str; 2] = ["initiator", "responder"];

/// The application's distribution entries: Initiator, then Responder.
pub fn distribution(cfg: &ScalaRdmaConfig) -> Vec<DistributionEntry> {
    vec![
        DistributionEntry {
            field: "prScalaRdmaInitiator",
            component: COMPONENTS[INITIATOR],
            ratio: cfg.pr_scala_rdma_initiator.map(|r| r.get()),
        },
        DistributionEntry {
            field: "prScalaRdmaResponder",
            component: COMPONENTS[RESPONDER],
            ratio: cfg.pr_scala_rdma_responder.map(|r| r.get()),
        },
    ]
}

/// Pairs the placed Initiators and Responders (from the stream `("pairing", application index)`)
/// and lists the connections by pair, then index within the pair; ids from 0.
pub fn plan_of(cfg: &ScalaRdmaConfig, placed: &AppPlacement, seed: u64) -> Plan {
    let empty = Vec::new();
    let initiators = placed.hosts.get(INITIATOR).unwrap_or(&empty);
    let responders = placed.hosts.get(RESPONDER).unwrap_or(&empty);
    let mut hosts: Vec<HostPlan> = [INITIATOR, RESPONDER]
        .into_iter()
        .flat_map(|k| {
            placed.hosts.get(k).into_iter().flatten().map(move |&node_id| HostPlan {
                node_id,
                application: cfg.name.clone(),
                component: COMPONENTS[k],
            })
        })
        .collect();
    hosts.sort_by_key(|h| h.node_id);
    let mut pairs = Vec::new();
    let mut connections = Vec::new();
    let mut rng = engine::rng::stream(seed, "pairing", placed.index as u64);
    for (i, r) in pair(initiators, responders, &mut rng) {
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
                app: placed.index,
                traffic_class: cfg.rdma_data_packet_tc.get(),
            });
        }
    }
    Plan {
        hosts,
        pairs,
        connections,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use models::placement::{ComponentRatio, assign_hosts, host_counts, nodes_of};

    fn app(i: f64, r: f64) -> ScalaRdmaConfig {
        engine::scenario::ron_options()
            .from_str(&format!("(prScalaRdmaInitiator: {i}, prScalaRdmaResponder: {r})"))
            .unwrap()
    }

    /// One application alone on `hosts`, placed by the shared rule.
    fn placed(cfg: &ScalaRdmaConfig, hosts: usize) -> AppPlacement {
        let ratios: Vec<ComponentRatio> = distribution(cfg)
            .iter()
            .enumerate()
            .map(|(entry, e)| ComponentRatio {
                app: 0,
                entry,
                component: e.component,
                ratio: e.ratio.unwrap_or(0.5),
            })
            .collect();
        let counts = host_counts(&ratios, hosts).unwrap();
        let p = assign_hosts(&counts, &ratios);
        AppPlacement {
            index: 0,
            ratios: ratios.iter().map(|r| r.ratio).collect(),
            hosts: vec![nodes_of(&p, 0, INITIATOR), nodes_of(&p, 0, RESPONDER)],
        }
    }

    fn plan(cfg: &ScalaRdmaConfig, hosts: usize, seed: u64) -> Plan {
        plan_of(cfg, &placed(cfg, hosts), seed)
    }

    #[test]
    fn worked_examples_on_16_hosts() {
        // (ratios, initiators, responders, pairs) from the spec's worked example.
        for (i, r, ni, nr, np) in [(0.5, 0.5, 8, 8, 8), (0.9, 0.1, 15, 1, 15), (0.25, 0.75, 4, 12, 12)] {
            let plan = plan(&app(i, r), 16, 18760);
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
        let plan = plan(&cfg, 16, 1);
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
        let a = plan(&app(0.5, 0.5), 16, 18760);
        let b = plan(&app(0.5, 0.5), 16, 18760);
        let c = plan(&app(0.5, 0.5), 16, 18761);
        assert_eq!(a, b);
        assert_ne!(a.pairs, c.pairs);
    }
}
