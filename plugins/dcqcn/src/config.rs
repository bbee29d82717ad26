//! `Dcqcn((...))`: the reaction point's parameters, named as ns-3's DCQCN (`RateAI`,
//! `AlphaResumInterval`, ...) names them, with their checks. Defaults are the paper's where it
//! gives one (Zhu et al., SIGCOMM 2015), its rate steps scaled from 40 to 400 Gbps;
//! `scenarios/README.md` lists each with its ns-3 and mlx5 counterpart.

use engine::SimTime;
use engine::scenario::FieldError;
use engine::units::{Duration, Rate, Size};
use serde::{Deserialize, Serialize};

/// DCQCN's reaction-point settings, shared by every queue pair of the NIC.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DcqcnConfig {
    /// g, the gain of alpha's EWMA: on a CNP alpha = (1 - g) alpha + g, and alpha = (1 - g) alpha
    /// for each `AlphaResumInterval` without one. Default 1/256 (the paper); more than 0, at most 1.
    pub EwmaGain: f64,
    /// K: alpha decays once per this span without a CNP. Default 55 us (the paper, ns-3).
    pub AlphaResumInterval: Duration,
    /// The least time between two rate cuts; a CNP sooner updates alpha only. Default 4 us (ns-3,
    /// mlx5 `rate_reduce_monitor_period`).
    pub RateDecreaseInterval: Duration,
    /// T: the rate-increase timer, restarted by each cut. Default 55 us (the paper).
    pub RpTimer: Duration,
    /// B: bytes sent (on the wire) per byte-counter increase event. Default 10 MB (the paper).
    pub ByteCounter: Size,
    /// F: increase events of fast recovery, and the stage count past which the additive and the
    /// hyper increase begin. Default 5 (the paper, ns-3).
    pub FastRecoveryTimes: u32,
    /// R_AI: the target rate's step in additive increase. Default 400 Mbps: the paper's 40 Mbps
    /// at 40 Gbps, scaled to 400 Gbps (HPCC's ns-3 scripts scale it with the link rate too).
    pub RateAI: Rate,
    /// R_HAI: the target rate's step (times i) in hyper increase. Default 4 Gbps (ours: 10 x
    /// `RateAI`, the ratio of ns-3's and mlx5's defaults).
    pub RateHAI: Rate,
    /// The rate no cut goes below. Default 100 Mbps (ns-3).
    pub MinRate: Rate,
    /// On a queue pair's first CNP, the current and target rates are first set to this fraction
    /// of the current rate, then cut. Default 1 (ns-3: no change); more than 0, at most 1.
    pub RateOnFirstCnp: f64,
    /// alpha before the first CNP. Default 1 (the paper; mlx5 `initial_alpha_value` 1023/1024).
    pub InitialAlpha: f64,
}

impl DcqcnConfig {
    /// Default `EwmaGain`: 1/256.
    pub const DEFAULT_EWMA_GAIN: f64 = 1.0 / 256.0;
    /// Default `AlphaResumInterval`, in microseconds.
    pub const DEFAULT_ALPHA_RESUME_INTERVAL_US: u64 = 55;
    /// Default `RateDecreaseInterval`, in microseconds.
    pub const DEFAULT_RATE_DECREASE_INTERVAL_US: u64 = 4;
    /// Default `RpTimer`, in microseconds.
    pub const DEFAULT_RP_TIMER_US: u64 = 55;
    /// Default `ByteCounter`, in bytes: 10 MB.
    pub const DEFAULT_BYTE_COUNTER_BYTES: u64 = 10_000_000;
    /// Default `FastRecoveryTimes`.
    pub const DEFAULT_FAST_RECOVERY_TIMES: u32 = 5;
    /// Default `RateAI`, in bits per second: 400 Mbps.
    pub const DEFAULT_RATE_AI_BPS: u64 = 400_000_000;
    /// Default `RateHAI`, in bits per second: 4 Gbps.
    pub const DEFAULT_RATE_HAI_BPS: u64 = 4_000_000_000;
    /// Default `MinRate`, in bits per second: 100 Mbps.
    pub const DEFAULT_MIN_RATE_BPS: u64 = 100_000_000;

    /// Checks each field; the error names it (relative to the selection: `EwmaGain`).
    pub fn check(&self) -> Result<(), FieldError> {
        let unit = |field: &str, v: f64, zero_ok: bool| {
            let low_ok = if zero_ok { v >= 0.0 } else { v > 0.0 };
            if v.is_finite() && low_ok && v <= 1.0 {
                Ok(())
            } else {
                let low = if zero_ok { "from 0" } else { "more than 0" };
                Err(FieldError::new(field, format!("{v} must be {low} and at most 1")))
            }
        };
        unit("EwmaGain", self.EwmaGain, false)?;
        unit("RateOnFirstCnp", self.RateOnFirstCnp, false)?;
        unit("InitialAlpha", self.InitialAlpha, true)?;
        // Zero spans would make a timer fire at the time it is set, forever.
        for (field, d) in [
            ("AlphaResumInterval", self.AlphaResumInterval),
            ("RpTimer", self.RpTimer),
        ] {
            if d.0 == SimTime::ZERO {
                return Err(FieldError::new(field, "must be more than 0 s"));
            }
        }
        if self.ByteCounter.0 == 0 {
            return Err(FieldError::new("ByteCounter", "must be more than 0 B"));
        }
        for (field, r) in [
            ("RateAI", self.RateAI),
            ("RateHAI", self.RateHAI),
            ("MinRate", self.MinRate),
        ] {
            if r.bps() == 0 {
                return Err(FieldError::new(field, "must be more than 0 bit/s"));
            }
        }
        Ok(())
    }
}

impl Default for DcqcnConfig {
    fn default() -> Self {
        DcqcnConfig {
            EwmaGain: Self::DEFAULT_EWMA_GAIN,
            AlphaResumInterval: Duration::from_us(Self::DEFAULT_ALPHA_RESUME_INTERVAL_US),
            RateDecreaseInterval: Duration::from_us(Self::DEFAULT_RATE_DECREASE_INTERVAL_US),
            RpTimer: Duration::from_us(Self::DEFAULT_RP_TIMER_US),
            ByteCounter: Size(Self::DEFAULT_BYTE_COUNTER_BYTES),
            FastRecoveryTimes: Self::DEFAULT_FAST_RECOVERY_TIMES,
            RateAI: Rate(Self::DEFAULT_RATE_AI_BPS),
            RateHAI: Rate(Self::DEFAULT_RATE_HAI_BPS),
            MinRate: Rate(Self::DEFAULT_MIN_RATE_BPS),
            RateOnFirstCnp: 1.0,
            InitialAlpha: 1.0,
        }
    }
}
