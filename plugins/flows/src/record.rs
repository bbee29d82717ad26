//! The `flow-fct` record: one row per finite flow, written when its last WRITE completes.
//! `fct_usec` is `finish_time_sec - start_time_sec`, from the flow's start time (as given) to
//! the completion of its last WRITE, printed with picosecond digits.

use crate::config::Flow;
use bevy_ecs::prelude::*;
use engine::prelude::*;

/// The `flow-fct` record's columns, in order.
pub const COLUMNS: [&str; 7] = [
    "flow_id",
    "src",
    "dst",
    "bytes",
    "start_time_sec",
    "finish_time_sec",
    "fct_usec",
];

/// The open record.
#[derive(Resource)]
pub struct FctRecord(pub RecordId);

/// Opens the record (the `Start` phase); a file that cannot be created leaves it closed and
/// `Records` reports the error.
pub fn open(world: &mut World) {
    let Some(mut records) = world.get_resource_mut::<Records>() else {
        return;
    };
    if let Ok(id) = records.register("flow-fct", &COLUMNS) {
        world.insert_resource(FctRecord(id));
    }
}

/// Writes `flow`'s row, finished at `now`.
pub fn write_row(world: &mut World, flow: &Flow, now: SimTime) {
    let Some(id) = world.get_resource::<FctRecord>().map(|r| r.0) else {
        return;
    };
    let Some(mut records) = world.get_resource_mut::<Records>() else {
        return;
    };
    records.write_built(id, |r, _| {
        r.u64(flow.id)
            .u64(flow.src.into())
            .u64(flow.dst.into())
            .u64(flow.bytes)
            .secs(flow.start)
            .secs(now)
            .usec(now - flow.start);
    });
}
