//! The stall watchdog: a connection that completes no WQE for `WatchdogConfig::StallTimeout`
//! while it has WQEs outstanding, or whose connection request stays unanswered that long, is
//! reported in `WatchdogReport` with its queue pairs' state from the NIC (`QpDiagnostics`).
//!
//! It looks at every beacon tick and at the end of the run and compares each connection's
//! completion count with the last look's: nothing runs per event. A connection's clock restarts
//! at every look that finds it progressed, idle or just given work, so the time it is charged
//! with is never more than the time it truly went without completing (the report comes at most
//! one `BeaconReportInterval` late, never early).

use crate::runtime::{InitiatorInstance, ScalaRdma};
use bevy_ecs::prelude::*;
use engine::prelude::*;
use models::nic::{Connections, QpDiagnostics};
use models::watchdog::{StalledConnection, WatchdogConfig, WatchdogReport};

/// Each connection's count at the last look, since when it has made no progress, and whether it
/// has been reported (its index in the report).
#[derive(Resource, Default, Debug)]
pub struct StallWatch {
    looks: Vec<Look>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Look {
    completed: u64,
    outstanding: bool,
    since: SimTime,
    reported: Option<usize>,
}

/// The check, a `BeaconTick` and `Finish` system.
pub fn check_stalls(world: &mut World) {
    let now = world.resource::<EventQueue>().now();
    let timeout = world
        .get_resource::<WatchdogConfig>()
        .map_or_else(|| WatchdogConfig::default().StallTimeout, |c| c.StallTimeout)
        .0
        .0;
    let Some(initiators) = world.get_resource::<ScalaRdma>().map(|a| a.initiators.clone()) else {
        return;
    };
    let mut watch = world.remove_resource::<StallWatch>().unwrap_or_default();
    watch.looks.resize(initiators.len(), Look::default());
    let mut found = Vec::new();
    for (conn, &e) in initiators.iter().enumerate() {
        let Some(inst) = world.get::<InitiatorInstance>(e) else {
            continue;
        };
        let look = &mut watch.looks[conn];
        let outstanding = inst.posted > inst.completed;
        let unanswered = inst.established_at.is_none() && inst.requested_at <= now;
        if unanswered {
            // Charged from the request: nothing can have answered it before it went out.
            look.since = inst.requested_at;
        } else if inst.completed != look.completed || !outstanding || !look.outstanding {
            if let (Some(i), true) = (look.reported, inst.completed != look.completed) {
                found.push((i, None, now));
            }
            look.since = now;
        }
        look.completed = inst.completed;
        look.outstanding = outstanding;
        let stuck = unanswered || outstanding;
        if stuck && look.reported.is_none() && now - look.since >= timeout {
            found.push((usize::MAX, Some((conn, inst.clone(), unanswered)), look.since));
        }
    }
    let diag = world.get_resource::<QpDiagnostics>().copied().unwrap_or_default();
    let fabric = world.resource::<models::fabric::Fabric>().0.clone();
    let name = |n: u32| fabric.topology.nodes[n as usize].name.clone();
    let mut new = Vec::new();
    for (i, stalled, at) in found {
        match stalled {
            None => new.push((i, None, at)),
            Some((conn, inst, unanswered)) => {
                let spec = world.resource::<Connections>().list[conn].clone();
                let s = StalledConnection {
                    connection: conn as u32,
                    initiator: inst.node,
                    initiator_name: name(inst.node),
                    responder: inst.responder,
                    responder_name: name(inst.responder),
                    index: inst.index,
                    class: inst.class,
                    phase: if unanswered { "setup" } else { "data" },
                    posted: inst.posted,
                    completed: inst.completed,
                    since_sec: at.as_secs_f64(),
                    detected_sec: now.as_secs_f64(),
                    resumed_sec: None,
                    qp_state: (diag.0)(world, &spec),
                };
                new.push((conn, Some(s), at));
            }
        }
    }
    let mut report = world.get_resource_or_insert_with(WatchdogReport::default);
    for (i, s, at) in new {
        match s {
            None => {
                if let Some(r) = report.stalls.get_mut(i) {
                    r.resumed_sec.get_or_insert(at.as_secs_f64());
                }
            }
            Some(s) => {
                watch.looks[i].reported = Some(report.stalls.len());
                report.stalls.push(s);
            }
        }
    }
    world.insert_resource(watch);
}
