//! The global simulation parameters (the spec's `SimulationParameters`) and the run timeline
//! derived from them.
//!
//! ```text
//! Responders start    StartTime
//! client start window StartTime + ClientStartOffset, lasting ClientStartInterval
//! recording window    end of the client start window + WarmUp, lasting RunTime
//! stop time           end of the recording window + CoolDown
//! ```

use crate::time::SimTime;
use crate::units::Duration;
use bevy_ecs::prelude::Resource;
use serde::{Deserialize, Serialize};

/// A duration that must be above zero (`RunTime`, `BeaconReportInterval`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(try_from = "Duration", into = "Duration")]
pub struct PositiveDuration(pub Duration);

impl TryFrom<Duration> for PositiveDuration {
    type Error = String;
    fn try_from(d: Duration) -> Result<Self, String> {
        if d.0 == SimTime::ZERO {
            Err("must be greater than 0".into())
        } else {
            Ok(PositiveDuration(d))
        }
    }
}
impl From<PositiveDuration> for Duration {
    fn from(p: PositiveDuration) -> Duration {
        p.0
    }
}

/// The spec's six timeline parameters plus `RandomSeed` and `BeaconReportInterval`, with the
/// spec's names and defaults. Times are seconds (or strings with a unit); none may be negative.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Resource)]
#[serde(deny_unknown_fields, default)]
pub struct SimulationParameters {
    /// When the Responders start listening. Default 0.001 s (spec).
    pub StartTime: Duration,
    /// From `StartTime` to the client start window. Default 0.001 s (spec).
    pub ClientStartOffset: Duration,
    /// Length of the client start window. Default 0.001 s (spec).
    pub ClientStartInterval: Duration,
    /// From the end of the client start window to the recording window. Default 0.002 s (spec).
    pub WarmUp: Duration,
    /// Length of the recording window; above 0. Default 0.5 s (spec).
    pub RunTime: PositiveDuration,
    /// From the end of the recording window to the stop time. Default 0.001 s (spec).
    pub CoolDown: Duration,
    /// Seeds every random stream. Default 18760 (spec).
    pub RandomSeed: u64,
    /// Beacon period; above 0. Default 0.001 s (spec).
    pub BeaconReportInterval: PositiveDuration,
}

impl SimulationParameters {
    pub const DEFAULT_RANDOM_SEED: u64 = 18760;
}

impl Default for SimulationParameters {
    fn default() -> Self {
        let ms = |n: u64| Duration(SimTime(n * 1_000_000_000));
        SimulationParameters {
            StartTime: ms(1),
            ClientStartOffset: ms(1),
            ClientStartInterval: ms(1),
            WarmUp: ms(2),
            RunTime: PositiveDuration(ms(500)),
            CoolDown: ms(1),
            RandomSeed: Self::DEFAULT_RANDOM_SEED,
            BeaconReportInterval: PositiveDuration(ms(1)),
        }
    }
}

/// The derived timeline, in simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Resource)]
pub struct Timeline {
    pub responders_start: SimTime,
    pub client_window_start: SimTime,
    pub client_window_end: SimTime,
    pub recording_start: SimTime,
    pub recording_end: SimTime,
    pub stop: SimTime,
    pub beacon_interval: SimTime,
}

#[derive(Debug, thiserror::Error, PartialEq)]
#[error(
    "simulation: the timeline ends after {0} seconds of simulated time, past what the engine holds (about 1.8e7 s)"
)]
pub struct TimelineOverflow(pub f64);

impl Timeline {
    pub fn from_params(p: &SimulationParameters) -> Result<Self, TimelineOverflow> {
        let add = |a: SimTime, b: Duration| {
            a.checked_add(b.0)
                .ok_or(TimelineOverflow(a.as_secs_f64() + b.as_secs_f64()))
        };
        let responders_start = p.StartTime.0;
        let client_window_start = add(responders_start, p.ClientStartOffset)?;
        let client_window_end = add(client_window_start, p.ClientStartInterval)?;
        let recording_start = add(client_window_end, p.WarmUp)?;
        let recording_end = add(recording_start, p.RunTime.0)?;
        let stop = add(recording_end, p.CoolDown)?;
        Ok(Timeline {
            responders_start,
            client_window_start,
            client_window_end,
            recording_start,
            recording_end,
            stop,
            beacon_interval: p.BeaconReportInterval.0.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(t: SimTime) -> f64 {
        t.as_secs_f64()
    }

    #[test]
    fn spec_default_timeline() {
        // The spec's worked example: responders 0.001 s, client window 0.002-0.003 s,
        // recording 0.005-0.505 s, stop 0.506 s.
        let t = Timeline::from_params(&SimulationParameters::default()).unwrap();
        assert_eq!(t.responders_start, SimTime(1_000_000_000));
        assert_eq!(t.client_window_start, SimTime(2_000_000_000));
        assert_eq!(t.client_window_end, SimTime(3_000_000_000));
        assert_eq!(t.recording_start, SimTime(5_000_000_000));
        assert_eq!(t.recording_end, SimTime(505_000_000_000));
        assert_eq!(t.stop, SimTime(506_000_000_000));
        assert_eq!(secs(t.stop), 0.506);
    }

    #[test]
    fn parses_spec_names_and_rejects_bad_values() {
        let p: SimulationParameters = ron::from_str("(RunTime: 0.01, RandomSeed: 7)").unwrap();
        assert_eq!(p.RunTime.0.0, SimTime(10_000_000_000));
        assert_eq!(p.RandomSeed, 7);
        assert_eq!(p.StartTime, SimulationParameters::default().StartTime);
        let e = ron::from_str::<SimulationParameters>("(RunTime: 0)")
            .unwrap_err()
            .to_string();
        assert!(e.contains("greater than 0"), "{e}");
        let e = ron::from_str::<SimulationParameters>("(WarmUp: -0.1)")
            .unwrap_err()
            .to_string();
        assert!(e.contains("negative"), "{e}");
        let e = ron::from_str::<SimulationParameters>("(BeaconReportInterval: 0.0)")
            .unwrap_err()
            .to_string();
        assert!(e.contains("greater than 0"), "{e}");
        let e = ron::from_str::<SimulationParameters>("(RunTimes: 1)")
            .unwrap_err()
            .to_string();
        assert!(e.contains("RunTimes"), "{e}");
    }
}
