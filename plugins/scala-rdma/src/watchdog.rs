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

/// What one look found about a connection.
enum Finding {
    /// A reported connection (its index in the report) completed a WQE again.
    Resumed { report: usize },
    Stalled {
        conn: usize,
        inst: InitiatorInstance,
        unanswered: bool,
        since: SimTime,
    },
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
        // Another shard runs it (and watches it).
        if !models::shard::owns(world, inst.node) {
            continue;
        }
        let look = &mut watch.looks[conn];
        let outstanding = inst.posted > inst.completed;
        let unanswered = inst.established_at.is_none() && inst.requested_at <= now;
        if unanswered {
            // Charged from the request: nothing can have answered it before it went out.
            look.since = inst.requested_at;
        } else if inst.completed != look.completed || !outstanding || !look.outstanding {
            if let (Some(report), true) = (look.reported, inst.completed != look.completed) {
                found.push(Finding::Resumed { report });
            }
            look.since = now;
        }
        look.completed = inst.completed;
        look.outstanding = outstanding;
        if (unanswered || outstanding) && look.reported.is_none() && now - look.since >= timeout {
            found.push(Finding::Stalled {
                conn,
                inst: inst.clone(),
                unanswered,
                since: look.since,
            });
        }
    }
    if found.is_empty() {
        world.insert_resource(watch);
        return;
    }
    let diag = world.get_resource::<QpDiagnostics>().copied().unwrap_or_default();
    let fabric = world.resource::<models::fabric::Fabric>().0.clone();
    let name = |n: u32| fabric.topology.nodes[n as usize].name.clone();
    let mut stalls = Vec::new();
    for f in &found {
        if let Finding::Stalled {
            conn,
            inst,
            unanswered,
            since,
        } = f
        {
            let spec = world.resource::<Connections>().list[*conn].clone();
            stalls.push(StalledConnection {
                connection: *conn as u32,
                initiator: inst.node,
                initiator_name: name(inst.node),
                responder: inst.responder,
                responder_name: name(inst.responder),
                index: inst.index,
                class: inst.class,
                phase: if *unanswered { "setup" } else { "data" }.to_string(),
                posted: inst.posted,
                completed: inst.completed,
                since_sec: since.as_secs_f64(),
                detected_sec: now.as_secs_f64(),
                resumed_sec: None,
                qp_state: (diag.0)(world, &spec),
            });
        }
    }
    let mut report = world.get_resource_or_insert_with(WatchdogReport::default);
    for f in &found {
        if let Finding::Resumed { report: i } = f
            && let Some(r) = report.stalls.get_mut(*i)
        {
            r.resumed_sec.get_or_insert(now.as_secs_f64());
        }
    }
    for (f, s) in found
        .iter()
        .filter(|f| matches!(f, Finding::Stalled { .. }))
        .zip(stalls)
    {
        if let Finding::Stalled { conn, .. } = f {
            watch.looks[*conn].reported = Some(report.stalls.len());
            report.stalls.push(s);
        }
    }
    world.insert_resource(watch);
}
