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
    /// The default `RandomSeed`, 18760 (spec).
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
    /// `StartTime`: the Responders listen.
    pub responders_start: SimTime,
    /// The client start window opens (`StartTime + ClientStartOffset`).
    pub client_window_start: SimTime,
    /// The client start window closes (its start plus `ClientStartInterval`).
    pub client_window_end: SimTime,
    /// The recording window opens (the window's end plus `WarmUp`).
    pub recording_start: SimTime,
    /// The recording window closes (its start plus `RunTime`).
    pub recording_end: SimTime,
    /// The run stops (the recording end plus `CoolDown`).
    pub stop: SimTime,
    /// `BeaconReportInterval`.
    pub beacon_interval: SimTime,
}

/// A timeline past the engine's clock (a `u64` of picoseconds, 18,446,744.07 s): `field` is the
/// one whose addition overflowed, `secs` where the timeline would have ended.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error(
    "simulation.{field}: the timeline reaches {secs} s of simulated time there, past the engine's clock (2^64 - 1 ps, about 18446744.07 s)"
)]
pub struct TimelineOverflow {
    /// The `simulation` field whose addition overflowed.
    pub field: &'static str,
    /// Where the timeline would have ended, in seconds.
    pub secs: f64,
}

impl Timeline {
    /// Adds the durations in timeline order with checked arithmetic, then checks that the first
    /// beacon tick past the stop time still fits (the beacon loop computes it).
    pub fn from_params(p: &SimulationParameters) -> Result<Self, TimelineOverflow> {
        let add = |a: SimTime, b: Duration, field: &'static str| {
            a.checked_add(b.0).ok_or(TimelineOverflow {
                field,
                // Summed exactly in u128: the f64 seconds of two huge times lose the last digits.
                secs: (a.0 as u128 + b.0.0 as u128) as f64 / SimTime::PS_PER_SEC as f64,
            })
        };
        let responders_start = p.StartTime.0;
        let client_window_start = add(responders_start, p.ClientStartOffset, "ClientStartOffset")?;
        let client_window_end = add(client_window_start, p.ClientStartInterval, "ClientStartInterval")?;
        let recording_start = add(client_window_end, p.WarmUp, "WarmUp")?;
        let recording_end = add(recording_start, p.RunTime.0, "RunTime")?;
        let stop = add(recording_end, p.CoolDown, "CoolDown")?;
        let interval = p.BeaconReportInterval.0;
        let last_tick = SimTime(stop.0 - stop.0 % interval.0.0.max(1));
        add(last_tick, interval, "BeaconReportInterval")?;
        Ok(Timeline {
            responders_start,
            client_window_start,
            client_window_end,
            recording_start,
            recording_end,
            stop,
            beacon_interval: interval.0,
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

    #[test]
    fn overflow_names_the_field_whose_sum_passes_the_clock() {
        // The clock holds 2^64 - 1 ps = 18,446,744.073709551615 s.
        let s = |secs: f64| Duration(SimTime::from_secs_f64(secs).unwrap());
        let base = SimulationParameters {
            StartTime: s(18_446_744.0),
            ClientStartOffset: s(0.0),
            ClientStartInterval: s(0.0),
            WarmUp: s(0.0),
            RunTime: PositiveDuration(s(0.01)),
            CoolDown: s(0.0),
            // 1 ps: the tick after the stop is the stop + 1 ps, which fits.
            BeaconReportInterval: PositiveDuration(Duration::from_ps(1)),
            ..SimulationParameters::default()
        };
        let t = Timeline::from_params(&base).unwrap();
        assert_eq!(t.stop, SimTime(18_446_744_010_000_000_000));
        // Each field in turn takes the stop 0.1 s further: past the 0.0737 s left.
        for field in [
            "ClientStartOffset",
            "ClientStartInterval",
            "WarmUp",
            "RunTime",
            "CoolDown",
        ] {
            let mut p = base.clone();
            let d = s(0.1);
            match field {
                "ClientStartOffset" => p.ClientStartOffset = d,
                "ClientStartInterval" => p.ClientStartInterval = d,
                "WarmUp" => p.WarmUp = d,
                "RunTime" => p.RunTime = PositiveDuration(s(0.11)),
                _ => p.CoolDown = d,
            }
            let e = Timeline::from_params(&p).unwrap_err();
            assert_eq!(e.field, field);
            assert!(e.to_string().starts_with(&format!("simulation.{field}: ")), "{e}");
        }
        // A 1 s beacon: the last tick at or before the stop is 18,446,744 s, the next one
        // (18,446,745 s) does not fit, and the beacon loop would wrap around to 0.
        let p = SimulationParameters {
            BeaconReportInterval: PositiveDuration(s(1.0)),
            ..base
        };
        assert_eq!(Timeline::from_params(&p).unwrap_err().field, "BeaconReportInterval");
    }
}
