//! The phase schedules. `Build` turns config resources into entities, `Start` schedules the first
//! events, `BeaconTick` runs every `BeaconReportInterval` before the beacon row is written, and
//! `Finish` runs once after the stop time (flushing records, final counters).

use bevy_ecs::schedule::ScheduleLabel;

/// Turns config resources into entities, once, before the first event.
#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Build;
/// Schedules the first events, once, after `Build`.
#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Start;
/// Runs every `BeaconReportInterval`, before the beacon row is written.
#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
pub struct BeaconTick;
/// Runs once after the stop time: final counters, flushing records.
#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Finish;
