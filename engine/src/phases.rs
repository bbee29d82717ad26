//! The phase schedules. `Build` turns config resources into entities, `Start` schedules the first
//! events, `BeaconTick` runs every `BeaconReportInterval` before the beacon row is written, and
//! `Finish` runs once after the stop time (flushing records, final counters).

use bevy_ecs::schedule::ScheduleLabel;

#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Build;
#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Start;
#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
pub struct BeaconTick;
#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Finish;
