//! The phase schedules. `Build` turns config resources into entities, `Start` schedules the first
//! events, `BeaconTick` runs every `BeaconReportInterval` before the beacon row is written,
//! `Sample` every `SampleInterval` when a plugin asked for one (telemetry), and `Finish` runs
//! once after the stop time (flushing records, final counters).

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
/// Runs every `SampleInterval` (a resource a telemetry plugin inserts; never without it), with
/// the handlers paused, so its systems read every model's state from the world. Events at
/// exactly a sample's time run after it, as at a beacon tick.
#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Sample;
/// Runs once after the stop time: final counters, flushing records.
#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Finish;
