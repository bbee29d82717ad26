//! The queue pair state the progress watchdog prints for a stalled connection
//! (`models::nic::QpDiagnostics`): both ends' queue pairs, read from `Store<RoceNic>` between
//! segments. Runs only when a connection is reported.

use crate::state::{Qp, RoceNic};
use bevy_ecs::prelude::*;
use engine::store::Store;
use models::nic::{ConnectionSpec, QpRole};
use std::fmt::Write;

/// "Initiator h3 QP 0: ...; Responder h15 QP 2: ...".
pub fn describe(world: &World, spec: &ConnectionSpec) -> String {
    let Some(nics) = world.get_resource::<Store<RoceNic>>() else {
        return "unknown (no RoCE NICs built)".into();
    };
    let mut out = String::new();
    for (role, host) in [(QpRole::Initiator, spec.initiator), (QpRole::Responder, spec.responder)] {
        let nic = nics.get(host as usize);
        let found = nic.and_then(|n| {
            n.qps
                .iter()
                .enumerate()
                .find(|(_, q)| q.connection == spec.id && q.role == role)
                .map(|(qpn, q)| (n, qpn, q))
        });
        if !out.is_empty() {
            out.push_str("; ");
        }
        let _ = write!(out, "{role:?} QP ");
        match found {
            Some((n, qpn, q)) => {
                let _ = write!(out, "{qpn}: {}", state(n, q));
            }
            None => out.push_str("not created"),
        }
    }
    out
}

fn state(nic: &RoceNic, q: &Qp) -> String {
    let c = q.class as usize;
    let mut s = String::new();
    match q.role {
        QpRole::Initiator => {
            let _ = write!(s, "ready {}, {} waiting", q.ready, q.waiting.len());
            match &q.active {
                Some(a) => {
                    let _ = write!(
                        s,
                        ", active WQE {} ({} packets: {} fetched, {} sent, acked to PSN {} of {}..{}), timer {}",
                        a.number,
                        a.packets,
                        a.fetched,
                        a.sent,
                        a.acked_upto,
                        a.first_psn,
                        a.first_psn + a.packets,
                        if a.rto_deadline == engine::SimTime::MAX {
                            "off".to_string()
                        } else {
                            format!("at {:.6} s", a.rto_deadline.as_secs_f64())
                        }
                    );
                }
                None => s.push_str(", no active WQE"),
            }
            let _ = write!(
                s,
                ", fetch_blocked {}, class {} paused {}, transmit pool {}/{} B",
                q.fetch_blocked, c, nic.class[c].paused, nic.class[c].egress_used, nic.class[c].egress_cap
            );
        }
        QpRole::Responder => {
            let _ = write!(
                s,
                "expected PSN {}, NAK sent {}, receive pool {}/{} B, paused upstream {}",
                q.expected_psn,
                q.nak_sent,
                nic.class[c].ingress_used,
                nic.class[c].ingress_cap,
                nic.class[c].upstream_paused
            );
        }
    }
    s
}
