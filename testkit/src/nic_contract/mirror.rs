//! The entities a NIC stands behind are current between segments: at every pause the NIC
//! writes back each queue pair's progress and the stamps so far of the WQEs it holds
//! (`models::nic::write_back`). A beacon-tick system here copies the entities at each tick, and
//! `check_entities_current` compares the copies with what the run's log says had happened by
//! then.

use super::Outcome;
use super::driver::Completion;
use bevy_ecs::prelude::*;
use engine::prelude::*;
use models::nic::{QpRole, QueuePair, Wqe, WqeTimes};
use std::collections::BTreeMap;

/// The queue pair and WQE entities as one beacon tick found them.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The tick: every event before it had run.
    pub at: SimTime,
    /// Every queue pair entity as it stood then.
    pub qps: Vec<QueuePair>,
    /// Every WQE entity as it stood then, by entity.
    pub wqes: BTreeMap<Entity, Wqe>,
}

/// Every tick's snapshot, in time order.
#[derive(Resource, Default, Debug)]
pub struct Snapshots(pub Vec<Snapshot>);

/// `BeaconTick`: copies the entities.
pub fn take_snapshot(
    mut out: ResMut<Snapshots>,
    queue: Res<EventQueue>,
    qps: Query<&QueuePair>,
    wqes: Query<(Entity, &Wqe)>,
) {
    out.0.push(Snapshot {
        at: queue.now(),
        qps: qps.iter().cloned().collect(),
        wqes: wqes.iter().map(|(e, w)| (e, w.clone())).collect(),
    });
}

/// At each tick `t`, each WQE posted and not complete before `t` shows every stamp its NIC had
/// set by then (a stamp before `t` is final), and each Initiator queue pair's progress counts
/// its connection's WQEs completed before `t` and those at the NIC; a Responder never expects
/// a PSN its Initiator has not sent, and at the end both ends agree.
pub fn check_entities_current(o: &Outcome) {
    assert!(o.snapshots.len() > 2, "the suite takes snapshots mid-run");
    let done: BTreeMap<Entity, &Completion> = o.log.completions.iter().map(|c| (c.entity, c)).collect();
    let mut mid_run_stamps = 0;
    for s in &o.snapshots {
        for (e, w) in &s.wqes {
            let Some(c) = done.get(e) else { continue };
            if c.at < s.at {
                continue;
            }
            mid_run_stamps += check_stamps(s.at, &w.times, &c.times, w.connection, w.number);
        }
        for qp in s.qps.iter().filter(|q| q.role == QpRole::Initiator) {
            let of_conn = || done.values().filter(move |c| c.connection == qp.connection);
            let completed = of_conn().filter(|c| c.at < s.at).count() as u64;
            let at_nic = of_conn().filter(|c| c.times.at_nic < s.at && c.at >= s.at).count() as u32;
            let p = qp.progress;
            assert_eq!(
                (p.wqes_completed, p.wqes_at_nic),
                (completed, at_nic),
                "at {:?}, connection {}: the Initiator's queue pair says (completed, at the NIC) \
                 = {:?}, the log {:?}",
                s.at,
                qp.connection,
                (p.wqes_completed, p.wqes_at_nic),
                (completed, at_nic)
            );
            if let Some(r) = s
                .qps
                .iter()
                .find(|r| r.connection == qp.connection && r.role == QpRole::Responder)
            {
                assert!(
                    r.progress.psn <= p.psn,
                    "at {:?}, connection {}: the Responder expects PSN {} of {} sent",
                    s.at,
                    qp.connection,
                    r.progress.psn,
                    p.psn
                );
            }
        }
    }
    assert!(
        mid_run_stamps > 0,
        "no snapshot caught a WQE in flight: the check proves nothing"
    );
    let last = o.snapshots.last().expect("checked above");
    for qp in last.qps.iter().filter(|q| q.role == QpRole::Initiator) {
        let r = last
            .qps
            .iter()
            .find(|r| r.connection == qp.connection && r.role == QpRole::Responder)
            .expect("both ends exist");
        assert!(qp.progress.psn > 0, "connection {}: nothing sent", qp.connection);
        assert_eq!(
            r.progress.psn, qp.progress.psn,
            "connection {}: at the end the Responder has every packet",
            qp.connection
        );
        assert_eq!(qp.progress.wqes_at_nic, 0);
        assert_eq!(qp.progress.wqes_completed, o.cfg.wqe_bytes.len() as u64);
    }
}

/// One WQE's stamps at tick `at` against its final ones; counts the stamps set by then.
fn check_stamps(at: SimTime, seen: &WqeTimes, end: &WqeTimes, conn: u32, number: u64) -> u32 {
    let pairs = [
        ("at_nic", seen.at_nic, end.at_nic),
        ("started", seen.started, end.started),
        ("first_tx", seen.first_tx, end.first_tx),
    ];
    let mut set = 0;
    for (name, s, e) in pairs {
        if e < at {
            assert_eq!(
                s, e,
                "at {at:?}, connection {conn} WQE {number}: its entity's `{name}` is {s:?}, \
                 but the NIC had stamped {e:?} (a stale entity)"
            );
            set += 1;
        } else {
            assert!(
                s == e || s == SimTime::ZERO,
                "at {at:?}, connection {conn} WQE {number}: `{name}` {s:?} is neither unset nor \
                 its final {e:?}"
            );
        }
    }
    set
}
