//! The entities a NIC's state stands behind. A NIC keeps its hot state in its own store while
//! events run; at every pause (each beacon tick, the end of the run) it writes back what that
//! state says of the queue pair and WQE entities, so between segments beacon columns, `Finish`
//! systems and tests read current entities, never stale copies.

use super::{QpRole, QueuePair, Wqe, WqeTimes};
use bevy_ecs::prelude::*;

/// What one end of a connection has done so far, as of the last pause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QpProgress {
    /// Initiator: the PSN of the next data packet it sends. Responder: the PSN it expects next.
    pub psn: u32,
    /// Initiator: WQEs at the NIC not yet complete (the one on the wire and those behind it).
    pub wqes_at_nic: u32,
    /// Initiator: WQEs completed on this end.
    pub wqes_completed: u64,
}

impl QpProgress {
    /// An Initiator's: the PSN of the next data packet it sends, the WQEs at its NIC (the one
    /// on the wire and those behind it), the WQEs completed.
    pub fn initiator(psn: u32, wqes_at_nic: usize, wqes_completed: u64) -> Self {
        QpProgress {
            psn,
            wqes_at_nic: wqes_at_nic as u32,
            wqes_completed,
        }
    }

    /// A Responder's: the PSN it expects next.
    pub fn responder(psn: u32) -> Self {
        QpProgress {
            psn,
            ..Default::default()
        }
    }
}

/// Writes a NIC's view back to the entities: `progress(host, qpn, role)` for each queue pair
/// entity (`None` leaves it as it is), and the stamps of each WQE the NIC holds. Call it from
/// the handler's `pause`, while the NIC still holds its rows.
pub fn write_back(
    world: &mut World,
    mut progress: impl FnMut(u32, u32, QpRole) -> Option<QpProgress>,
    wqes: impl IntoIterator<Item = (Entity, WqeTimes)>,
) {
    let mut qps = world.query::<&mut QueuePair>();
    for mut qp in qps.iter_mut(world) {
        if let Some(p) = progress(qp.host, qp.qpn, qp.role)
            && p != qp.progress
        {
            qp.progress = p;
        }
    }
    for (wqe, times) in wqes {
        if let Some(mut w) = world.get_mut::<Wqe>(wqe)
            && !w.completed
        {
            w.times = times;
        }
    }
}
