//! The `rdma-perf` record: one row per completed WQE, written by the Initiator as the
//! completion arrives. The spec's columns in the spec's order, then ours: the Responder's node
//! id, the connection's index in its pair, the traffic class, and the latency breakdown
//! (doorbell, wait at the NIC, fetch, network, acknowledgment) whose parts add up to
//! `perf_metric_usec` exactly (all are printed with picosecond digits).

use crate::runtime::InitiatorInstance;
use bevy_ecs::prelude::*;
use engine::prelude::*;
use models::nic::Wqe;

/// The `rdma-perf` record's columns, in the spec's order.
pub const COLUMNS: [&str; 21] = [
    "job_id",
    "time_utc",
    "sim_time_sec",
    "metric_name",
    "perf_metric_usec",
    "transfer_size",
    "start_time_sec",
    "application_name",
    "node_id",
    "rdma_verb",
    "wqe_id",
    "num_wqe_sent",
    "num_wqe_complete",
    "responder_node_id",
    "connection_index",
    "traffic_class",
    "doorbell_usec",
    "nic_wait_usec",
    "fetch_usec",
    "network_usec",
    "ack_usec",
];

/// Upper bound on rdma-perf's rows: WQEs completed at `rate_bps` (summed over the Initiators'
/// links) for `span`, each at least `TRANSFER_SIZE_BYTES` of payload. Rounded up.
pub fn max_rows(rate_bps: u128, span: SimTime) -> u64 {
    let bits = rate_bps * span.0 as u128;
    let per_wqe = 8 * crate::config::TRANSFER_SIZE_BYTES as u128 * SimTime::PS_PER_SEC as u128;
    u64::try_from(bits.div_ceil(per_wqe)).unwrap_or(u64::MAX)
}

/// The open record.
#[derive(Resource)]
pub struct PerfRecord {
    /// The record's id in `Records`.
    pub id: RecordId,
    /// Shared, so taking it for a row is a reference count, not a copy.
    pub job_id: std::sync::Arc<str>,
}

impl PerfRecord {
    /// The record `id`, its rows stamped with `job_id`.
    pub fn new(id: RecordId, job_id: String) -> Self {
        PerfRecord {
            id,
            job_id: job_id.into(),
        }
    }
}

/// Writes the row of `wqe`, completed at `now` on `inst`'s connection, built in place.
pub fn write_row(records: &mut Records, id: RecordId, job_id: &str, now: SimTime, wqe: &Wqe, inst: &InitiatorInstance) {
    let t = &wqe.times;
    let b = t.breakdown();
    records.write_built(id, |r, clock| {
        r.str(job_id)
            .time_utc(clock)
            .secs(now)
            .str("RDMA-WRITE")
            .usec(t.latency())
            .u64(wqe.bytes)
            .secs(t.posted)
            .str(&inst.name)
            .u64(inst.node.into())
            .str("RDMA_VERB_POST_WRITE")
            .u64(wqe.number)
            .u64(inst.posted)
            .u64(inst.completed)
            .u64(inst.responder.into())
            .u64(inst.index.into())
            .u64(inst.class.into());
        for part in b {
            r.usec(part);
        }
    });
}

/// Opens the record (the `Start` phase). A file that cannot be created leaves the record closed;
/// `Records` keeps the error and the run reports it.
pub fn open(world: &mut World) {
    let job = world
        .get_resource::<RunInfo>()
        .map(|r| r.job_id.clone())
        .unwrap_or_default();
    let Some(mut records) = world.get_resource_mut::<Records>() else {
        return;
    };
    if let Ok(id) = records.register("rdma-perf", &COLUMNS) {
        world.insert_resource(PerfRecord::new(id, job));
    }
}
