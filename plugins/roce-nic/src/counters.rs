//! The NIC's beacon columns: running totals over every host's NIC.

use crate::state::{NicCounters, RoceNic};
use bevy_ecs::prelude::*;
use engine::prelude::*;

/// Sums `f` over every NIC in the world.
pub fn total(world: &World, f: impl Fn(&NicCounters) -> u64) -> u64 {
    world
        .get_resource::<engine::store::Store<RoceNic>>()
        .map_or(0, |s| s.rows().iter().map(|n| f(&n.counters)).sum())
}

/// The columns; with a controller that asks for CNPs, also the CNPs sent and received (only
/// then, so a run without congestion control writes the same beacon record as before).
pub fn register_beacon_columns(app: &mut App, feedback: models::cc::Feedback) {
    app.add_beacon_column("nic_data_packets", |w| total(w, |c| c.data_packets_sent));
    app.add_beacon_column("nic_data_bytes", |w| total(w, |c| c.data_bytes_sent));
    app.add_beacon_column("nic_pfc_pause_sent", |w| total(w, |c| c.pfc_pause_sent));
    app.add_beacon_column("nic_pfc_pause_received", |w| total(w, |c| c.pfc_pause_received));
    app.add_beacon_column("nic_pfc_resume_sent", |w| total(w, |c| c.pfc_resume_sent));
    app.add_beacon_column("nic_retransmitted", |w| total(w, |c| c.retransmitted_packets));
    app.add_beacon_column("nic_timeouts", |w| total(w, |c| c.timeouts));
    app.add_beacon_column("nic_rx_drops", |w| total(w, |c| c.ingress_drops));
    if feedback.cnp {
        app.add_beacon_column("nic_cnp_sent", |w| total(w, |c| c.cnps_sent));
        app.add_beacon_column("nic_cnp_received", |w| total(w, |c| c.cnps_received));
    }
}
