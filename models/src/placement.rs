//! Placement: how many hosts run each distribution entry (a component: the Scala RDMA
//! application's Initiator or Responder, another application's client or server) of each
//! application, and which hosts. The platform's rule, not one application's: the ratios of all
//! the applications of a scenario share one budget of hosts.
//!
//! The spec's rule: an entry with ratio r gets `floor(r x hosts)` hosts, at least 1; while the
//! counts add up to fewer than the hosts, the entries are visited in turn (application 0's
//! first entry, its second, application 1's first, ...) and each whose share `count / hosts` is
//! still below its ratio gets one more host. Every host ends up running exactly one component.
//! Which host runs what is not in the spec; ours is [`assign_hosts`]: node ids in order, entries
//! in the same order as the top-up. The ratios themselves, with the even split of what the
//! applications leave out, come from [`crate::application::split_ratios`].

use thiserror::Error;

/// One entry's distribution ratio: entry `entry` (0 the client, 1 the server, as the application
/// lists them) of application `app`, counting applications from 0 in configuration order.
/// `component` names it in messages (`Initiator`).
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct ComponentRatio {
    /// The application, from 0 in configuration order.
    pub app: usize,
    /// The entry, as the application lists them (0 the client, 1 the server).
    pub entry: usize,
    /// Its name in messages (`Initiator`).
    pub component: &'static str,
    /// Its share of the hosts, above 0 and at most 1.
    pub ratio: f64,
}

/// One host's role.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Placement {
    /// The host's node id.
    pub node_id: u32,
    /// The application it runs a component of.
    pub app: usize,
    /// Which of that application's entries.
    pub entry: usize,
}

/// Why the ratios cannot be placed on the hosts.
#[derive(Clone, PartialEq, Debug, Error)]
pub enum PlacementError {
    #[error(
        "application {app}'s {component} ratio is {ratio}: a ratio must be above 0 and at most 1 \
         (a ratio of 0 makes the configuration invalid)"
    )]
    /// A ratio not above 0 or above 1.
    InvalidRatio {
        /// The application.
        app: usize,
        /// The component.
        component: &'static str,
        /// The ratio given.
        ratio: f64,
    },
    /// A component's ratio given twice.
    #[error("application {app}'s {component} ratio is given twice")]
    DuplicateComponent {
        /// The application.
        app: usize,
        /// The component.
        component: &'static str,
    },
    #[error(
        "the distribution ratios of all the applications add up to {sum}, not 1: they share one \
         budget of hosts, so change them until they sum to 1"
    )]
    /// The ratios of all the applications do not sum to 1.
    RatiosDoNotSumToOne {
        /// What they sum to.
        sum: f64,
    },
    #[error(
        "{hosts} hosts cannot run {components} components: every component needs a host of its \
         own; add hosts or remove applications"
    )]
    /// Fewer hosts than components.
    TooFewHosts {
        /// Hosts in the topology.
        hosts: usize,
        /// Components to place.
        components: usize,
    },
    #[error(
        "the ratios need {needed} hosts but the topology has {hosts}: every component with a \
         ratio above 0 gets at least 1 host, on top of floor(ratio x hosts) for the others; raise \
         the small ratios or add hosts"
    )]
    /// The ratios' one-host minimums need more hosts than there are.
    TooManyHostsNeeded {
        /// Hosts the ratios need.
        needed: usize,
        /// Hosts in the topology.
        hosts: usize,
    },
}

/// Relative tolerance on the sum of the ratios: 0.1 + 0.2 + 0.7 is 1 for this purpose.
pub const RATIO_SUM_TOLERANCE: f64 = 1e-9;

/// Slack, in hosts, on `ratio x hosts`: a ratio typed as a decimal (0.29) is the nearest double,
/// a hair below or above the decimal, and `floor(0.29 x 100)` must still be 29, not 28.
const HOST_SLACK: f64 = 1e-9;

/// The number of hosts each component runs on, in the order of `ratios`.
///
/// The top-up visits the entries in (application, entry) order whatever
/// the order of `ratios`. If a full pass of the top-up adds no host while some remain (which
/// floating-point rounding could in principle cause, since the ratios need only sum to 1 within
/// [`RATIO_SUM_TOLERANCE`]), the remaining hosts go one each to the components in that same
/// order, starting from the first, so the function always ends with every host placed.
pub fn host_counts(ratios: &[ComponentRatio], hosts: usize) -> Result<Vec<usize>, PlacementError> {
    for r in ratios {
        if !(r.ratio > 0.0 && r.ratio <= 1.0) {
            return Err(PlacementError::InvalidRatio {
                app: r.app,
                component: r.component,
                ratio: r.ratio,
            });
        }
    }
    let order = top_up_order(ratios)?;
    let sum: f64 = ratios.iter().map(|r| r.ratio).sum();
    if (sum - 1.0).abs() > RATIO_SUM_TOLERANCE {
        return Err(PlacementError::RatiosDoNotSumToOne { sum });
    }
    if hosts < ratios.len() {
        return Err(PlacementError::TooFewHosts {
            hosts,
            components: ratios.len(),
        });
    }

    let h = hosts as f64;
    let mut counts: Vec<usize> = ratios
        .iter()
        .map(|r| ((r.ratio * h + HOST_SLACK).floor() as usize).max(1))
        .collect();
    let needed: usize = counts.iter().sum();
    if needed > hosts {
        return Err(PlacementError::TooManyHostsNeeded { needed, hosts });
    }

    top_up(&mut counts, ratios, &order, hosts);
    Ok(counts)
}

/// Gives the hosts left after the floors to the components still below their share, visiting
/// them in `order`, pass after pass; then, if a pass adds nothing, hands the rest out in turn.
fn top_up(counts: &mut [usize], ratios: &[ComponentRatio], order: &[usize], hosts: usize) {
    let h = hosts as f64;
    let mut placed: usize = counts.iter().sum();
    while placed < hosts {
        let before = placed;
        for &i in order {
            if placed == hosts {
                break;
            }
            // `count / hosts < ratio`, multiplied out, with the same slack as the floor.
            if (counts[i] as f64) < ratios[i].ratio * h - HOST_SLACK {
                counts[i] += 1;
                placed += 1;
            }
        }
        if placed == before {
            // Rounding left hosts that no component is short of: hand them out in turn.
            for &i in order.iter().cycle().take(hosts - placed) {
                counts[i] += 1;
            }
            placed = hosts;
        }
    }
}

/// Indices of `ratios` in top-up order: by application, then entry (the client first). Rejects an
/// entry listed twice.
fn top_up_order(ratios: &[ComponentRatio]) -> Result<Vec<usize>, PlacementError> {
    let mut order: Vec<usize> = (0..ratios.len()).collect();
    order.sort_by_key(|&i| (ratios[i].app, ratios[i].entry));
    for w in order.windows(2) {
        let (a, b) = (&ratios[w[0]], &ratios[w[1]]);
        if (a.app, a.entry) == (b.app, b.entry) {
            return Err(PlacementError::DuplicateComponent {
                app: a.app,
                component: a.component,
            });
        }
    }
    Ok(order)
}

/// The hosts each component runs on, given `counts` from [`host_counts`] (same order as
/// `ratios`). Ours, as the spec does not say: node ids from 0 in order, first application 0's
/// first entry (the Scala RDMA Initiators), then its second (the Responders), then application
/// 1's first, and so on. Returned in node-id order, one placement per host.
///
/// # Panics
/// If `counts` and `ratios` differ in length: `counts` must come from `host_counts(ratios, ..)`.
pub fn assign_hosts(counts: &[usize], ratios: &[ComponentRatio]) -> Vec<Placement> {
    assert_eq!(
        counts.len(),
        ratios.len(),
        "counts must come from host_counts(ratios, ..)"
    );
    let mut order: Vec<usize> = (0..ratios.len()).collect();
    order.sort_by_key(|&i| (ratios[i].app, ratios[i].entry));
    let mut placements = Vec::with_capacity(counts.iter().sum());
    let mut node_id = 0u32;
    for i in order {
        for _ in 0..counts[i] {
            placements.push(Placement {
                node_id,
                app: ratios[i].app,
                entry: ratios[i].entry,
            });
            node_id += 1;
        }
    }
    placements
}

/// The node ids running entry `entry` of application `app`, in node-id order.
pub fn nodes_of(placements: &[Placement], app: usize, entry: usize) -> Vec<u32> {
    let mut nodes: Vec<u32> = placements
        .iter()
        .filter(|p| p.app == app && p.entry == entry)
        .map(|p| p.node_id)
        .collect();
    nodes.sort_unstable();
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;
    const INITIATOR: (usize, &str) = (0, "Initiator");
    const RESPONDER: (usize, &str) = (1, "Responder");

    fn cr(app: usize, (entry, component): (usize, &'static str), ratio: f64) -> ComponentRatio {
        ComponentRatio {
            app,
            entry,
            component,
            ratio,
        }
    }

    fn one_app(initiator: f64, responder: f64) -> Vec<ComponentRatio> {
        vec![cr(0, INITIATOR, initiator), cr(0, RESPONDER, responder)]
    }

    #[test]
    fn even_split_on_16_hosts() {
        // floor(0.5 x 16) = 8 each, 16 in all: no top-up.
        assert_eq!(host_counts(&one_app(0.5, 0.5), 16), Ok(vec![8, 8]));
    }

    #[test]
    fn top_up_goes_to_the_initiator_first() {
        // floor(14.4) = 14 and floor(1.6) = 1 make 15; both are below their share (0.875 < 0.9,
        // 0.0625 < 0.1), the Initiator comes first and takes the last host.
        assert_eq!(host_counts(&one_app(0.9, 0.1), 16), Ok(vec![15, 1]));
    }

    #[test]
    fn quarter_and_three_quarters() {
        assert_eq!(host_counts(&one_app(0.25, 0.75), 16), Ok(vec![4, 12]));
    }

    #[test]
    fn three_tenths_tops_up_the_initiator() {
        // floor(4.8) = 4 and floor(11.2) = 11 make 15; 4 / 16 = 0.25 < 0.3: the Initiator gets 5.
        assert_eq!(host_counts(&one_app(0.3, 0.7), 16), Ok(vec![5, 11]));
    }

    #[test]
    fn decimal_ratios_floor_to_what_they_mean() {
        // 0.29 x 100 is 28.999999999999996 in doubles; the count meant is 29.
        assert_eq!(host_counts(&one_app(0.29, 0.71), 100), Ok(vec![29, 71]));
    }

    #[test]
    fn top_up_stops_when_every_host_runs_a_component() {
        // 10 hosts, five ratios 0.1, 0.19, 0.19, 0.26, 0.26: floors 1, 1, 1, 2, 2 = 7. The first
        // is at its share (1 / 10 = 0.1); the next three are below theirs and take the 3 hosts
        // left; the last, below its share too, finds none left.
        let ratios = vec![
            cr(0, INITIATOR, 0.1),
            cr(0, RESPONDER, 0.19),
            cr(1, INITIATOR, 0.19),
            cr(1, RESPONDER, 0.26),
            cr(2, INITIATOR, 0.26),
        ];
        assert_eq!(host_counts(&ratios, 10), Ok(vec![1, 2, 2, 3, 2]));
    }

    #[test]
    fn a_pass_that_adds_nothing_hands_out_the_rest_in_turn() {
        // Unreachable through host_counts short of ~1e9 hosts (the ratios sum to 1 within 1e-9),
        // so the guard is driven directly with ratios summing to 0.5: 2 + 2 of 8 hosts, nobody
        // below its share, the 4 left go Initiator, Responder, Initiator, Responder.
        let ratios = one_app(0.25, 0.25);
        let mut counts = vec![2, 2];
        top_up(&mut counts, &ratios, &[0, 1], 8);
        assert_eq!(counts, vec![4, 4]);
        let mut counts = vec![2, 2];
        top_up(&mut counts, &ratios, &[0, 1], 7);
        assert_eq!(counts, vec![4, 3]);
    }

    #[test]
    fn two_applications_share_the_budget() {
        let ratios: Vec<ComponentRatio> = [(0, INITIATOR), (0, RESPONDER), (1, INITIATOR), (1, RESPONDER)]
            .into_iter()
            .map(|(app, c)| cr(app, c, 0.25))
            .collect();
        let counts = host_counts(&ratios, 16).unwrap();
        assert_eq!(counts, vec![4, 4, 4, 4]);
        let placed = assign_hosts(&counts, &ratios);
        assert_eq!(placed.len(), 16);
        assert_eq!(nodes_of(&placed, 0, 0), vec![0, 1, 2, 3]);
        assert_eq!(nodes_of(&placed, 0, 1), vec![4, 5, 6, 7]);
        assert_eq!(nodes_of(&placed, 1, 0), vec![8, 9, 10, 11]);
        assert_eq!(nodes_of(&placed, 1, 1), vec![12, 13, 14, 15]);
    }

    #[test]
    fn order_of_the_ratios_does_not_change_the_result() {
        // Responder listed first: the top-up still favours the Initiator, and the Initiators
        // still take the first node ids.
        let ratios = vec![cr(0, RESPONDER, 0.1), cr(0, INITIATOR, 0.9)];
        let counts = host_counts(&ratios, 16).unwrap();
        assert_eq!(counts, vec![1, 15]);
        let placed = assign_hosts(&counts, &ratios);
        assert_eq!(nodes_of(&placed, 0, 0), (0..15).collect::<Vec<u32>>());
        assert_eq!(nodes_of(&placed, 0, 1), vec![15]);
    }

    #[test]
    fn every_host_runs_one_component() {
        for hosts in 2..=64 {
            for &(i, r) in &[(0.5, 0.5), (0.9, 0.1), (0.3, 0.7), (0.01, 0.99), (0.66, 0.34)] {
                let ratios = one_app(i, r);
                let Ok(counts) = host_counts(&ratios, hosts) else {
                    continue;
                };
                assert_eq!(counts.iter().sum::<usize>(), hosts, "{i}/{r} on {hosts}");
                let placed = assign_hosts(&counts, &ratios);
                let ids: Vec<u32> = placed.iter().map(|p| p.node_id).collect();
                assert_eq!(ids, (0..hosts as u32).collect::<Vec<u32>>());
            }
        }
    }

    #[test]
    fn bad_ratios_are_rejected() {
        for bad in [0.0, -0.1, 1.5, f64::NAN] {
            let err = host_counts(&one_app(bad, 0.5), 16).unwrap_err();
            assert!(
                matches!(
                    err,
                    PlacementError::InvalidRatio {
                        app: 0,
                        component: "Initiator",
                        ..
                    }
                ),
                "{err}"
            );
        }
        let err = host_counts(&one_app(0.5, 0.0), 16).unwrap_err();
        assert!(
            err.to_string().contains("application 0's Responder ratio is 0"),
            "{err}"
        );
        assert!(
            err.to_string().contains("a ratio of 0 makes the configuration invalid"),
            "{err}"
        );
    }

    #[test]
    fn ratios_must_sum_to_one() {
        let err = host_counts(&one_app(0.5, 0.6), 16).unwrap_err();
        assert_eq!(err, PlacementError::RatiosDoNotSumToOne { sum: 1.1 });
        assert!(err.to_string().contains("add up to 1.1"), "{err}");
        // Within the tolerance: 0.1 + 0.2 is 0.30000000000000004.
        let ratios = vec![cr(0, INITIATOR, 0.1 + 0.2), cr(0, RESPONDER, 0.7)];
        assert_eq!(host_counts(&ratios, 10), Ok(vec![3, 7]));
    }

    #[test]
    fn too_few_hosts() {
        let err = host_counts(&one_app(0.5, 0.5), 1).unwrap_err();
        assert_eq!(
            err,
            PlacementError::TooFewHosts {
                hosts: 1,
                components: 2
            }
        );
    }

    #[test]
    fn at_least_one_can_overflow_the_hosts() {
        // 10 hosts: floor(9.8) = 9, then 1 and 1 for the two 0.01 ratios: 11 > 10.
        let ratios = vec![cr(0, INITIATOR, 0.98), cr(0, RESPONDER, 0.01), cr(1, INITIATOR, 0.01)];
        let err = host_counts(&ratios, 10).unwrap_err();
        assert_eq!(err, PlacementError::TooManyHostsNeeded { needed: 11, hosts: 10 });
        assert!(err.to_string().contains("at least 1 host"), "{err}");
    }

    #[test]
    fn duplicate_components_are_rejected() {
        let mut ratios = one_app(0.25, 0.5);
        ratios.push(cr(0, INITIATOR, 0.25));
        let err = host_counts(&ratios, 16).unwrap_err();
        assert_eq!(
            err,
            PlacementError::DuplicateComponent {
                app: 0,
                component: "Initiator"
            }
        );
    }
}
