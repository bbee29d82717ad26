//! `Hpcc((...))`: HPCC's parameters, named as in the authors' ns-3 code and the paper.

use engine::prelude::*;
use engine::scenario::FieldError;
use serde::{Deserialize, Serialize};

/// `Hpcc((UTarget: 0.95, MaxStage: 5, RateAI: "160Mbps", ...))`; every field has a default.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HpccConfig {
    /// Target utilisation eta (paper η; ns-3 `U_TARGET`, `m_targetUtil`): the window shrinks
    /// when the measured utilisation passes it. Default 0.95 (paper §5, ns-3 run.py
    /// `--utgt 95`); in (0, 1].
    pub UTarget: f64,
    /// Additive increases before a multiplicative one is forced (paper maxStage; ns-3
    /// `MI_THRESH`, `m_miThresh`). Default 5 (paper §5).
    pub MaxStage: u32,
    /// The additive increase as a rate (ns-3 `RATE_AI`, `m_rai`); the paper's W_AI is
    /// `RateAI x BaseRtt` bytes. Default 160 Mbps: ns-3 run.py's `ai = 10 * bw / 25` Mbps at
    /// 400 Gbps.
    pub RateAI: Rate,
    /// The least rate a queue pair is held to (ns-3 `MIN_RATE`, `m_minRate`). Default
    /// 100 Mbps (ns-3 mix/config.txt).
    pub MinRate: Rate,
    /// The base round trip T (paper T; ns-3 `m_baseRtt`, computed there per host pair from the
    /// topology): the window is `rate x T`, the utilisation EWMA's horizon. Default 11.4 us:
    /// the default scenario's leaf-spine across leaves (8 x 1 us of links, 6 x 0.5 us of
    /// forwarding latency, 4 x 84 ns of data serialization); more than 0, at most 1 s.
    pub BaseRtt: Duration,
    /// React to every ACK with the reference window kept (ns-3 `FAST_REACT`, on in its HPCC
    /// runs; the paper's Algorithm 1 `NewAck` without update); off: react once per RTT only.
    /// Default true.
    pub FastReact: bool,
}

impl HpccConfig {
    /// Default `UTarget` (eta).
    pub const DEFAULT_U_TARGET: f64 = 0.95;
    /// Default `MaxStage`.
    pub const DEFAULT_MAX_STAGE: u32 = 5;
    /// Default `RateAI`, in bits/s.
    pub const DEFAULT_RATE_AI_BPS: u64 = 160_000_000;
    /// Default `MinRate`, in bits/s.
    pub const DEFAULT_MIN_RATE_BPS: u64 = 100_000_000;
    /// Default `BaseRtt`, in ns.
    pub const DEFAULT_BASE_RTT_NS: u64 = 11_400;

    /// Checks the fields; the error names the field.
    pub fn validate(&self) -> Result<(), FieldError> {
        if !(self.UTarget > 0.0 && self.UTarget <= 1.0) {
            return Err(FieldError::new(
                "UTarget",
                format!("must be in (0, 1], got {}", self.UTarget),
            ));
        }
        if self.RateAI.bps() == 0 {
            return Err(FieldError::new("RateAI", "must be more than 0 bit/s"));
        }
        if self.MinRate.bps() == 0 {
            return Err(FieldError::new("MinRate", "must be more than 0 bit/s"));
        }
        let t = self.BaseRtt.time();
        if t == SimTime::ZERO || t > SimTime::from_secs_f64(1.0).unwrap_or(SimTime::MAX) {
            return Err(FieldError::new(
                "BaseRtt",
                format!("must be more than 0 and at most 1 s, got {t}"),
            ));
        }
        Ok(())
    }
}

impl Default for HpccConfig {
    fn default() -> Self {
        HpccConfig {
            UTarget: Self::DEFAULT_U_TARGET,
            MaxStage: Self::DEFAULT_MAX_STAGE,
            RateAI: Rate(Self::DEFAULT_RATE_AI_BPS),
            MinRate: Rate(Self::DEFAULT_MIN_RATE_BPS),
            BaseRtt: Duration::from_ns(Self::DEFAULT_BASE_RTT_NS),
            FastReact: true,
        }
    }
}
