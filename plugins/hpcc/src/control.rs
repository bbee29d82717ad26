//! One queue pair's HPCC state and its update (paper Algorithm 1; ns-3 `RdmaHw::UpdateRateHp`).

use crate::HpccConfig;
use engine::prelude::*;
use models::cc::{CongestionControl, Gate, IntEcho, Sent};
use models::int::{Hops, IntHop};

/// One queue pair's HPCC controller.
///
/// On every ACK echoing INT (`on_int`), for each hop i of the path, from this echo's record and
/// the previous one of the same hop: `txRate = (txBytes - txBytes') / (ts - ts')` and
/// `u_i = min(qlen, qlen') / (B_i x T) + txRate / B_i`. The largest `u_i`, with its `tau = ts - ts'`
/// (at most T), enters the EWMA `U = (1 - tau/T) U + (tau/T) u`. Then, with `W_c` the reference
/// window: `W = W_c / (U / eta) + W_AI` if `U >= eta` or `incStage >= maxStage`, else
/// `W = W_c + W_AI`, clamped to [`MinRate x T`, `B x T`]. Once per round trip (the first ACK of
/// a packet sent after the last such update) `W_c = W` and `incStage` restarts at 0 (after a
/// decrease) or counts one more (after an increase); other ACKs change `W` only (fast react).
/// The gate: window `W`, each packet paced at `R = W / T`.
#[derive(Debug)]
pub struct Hpcc {
    eta: f64,
    max_stage: u32,
    /// W_AI in bytes: `RateAI x T`.
    w_ai: f64,
    /// T in picoseconds.
    t_ps: f64,
    /// `B x T` and `MinRate x T`, bytes: the window's bounds.
    w_max: f64,
    w_min: f64,
    fast_react: bool,
    /// The window W, bytes (headers included, as the NIC counts bytes in flight).
    pub w: f64,
    /// The reference window W_c, bytes.
    pub wc: f64,
    /// The utilisation estimate U (1 at the start, as ns-3's `hp.u`).
    pub u: f64,
    /// Additive increases since the last multiplicative decrease.
    pub inc_stage: u32,
    /// The PSN an ACK must reach for the next per-RTT update (`None` before the first ACK).
    last_update: Option<u32>,
    /// The lowest PSN not sent yet (snd_nxt).
    snd_nxt: u32,
    /// The previous record of each hop.
    prev: Hops,
}

impl Hpcc {
    /// A queue pair's controller on a port of `line_rate`: window `B x T`, rate `B`.
    pub fn new(cfg: &HpccConfig, line_rate: Rate) -> Hpcc {
        let t = cfg.BaseRtt.time();
        let bdp = bytes_in(line_rate, t);
        Hpcc {
            eta: cfg.UTarget,
            max_stage: cfg.MaxStage,
            w_ai: bytes_in(cfg.RateAI, t),
            t_ps: t.0 as f64,
            w_max: bdp,
            w_min: bytes_in(cfg.MinRate, t).min(bdp),
            fast_react: cfg.FastReact,
            w: bdp,
            wc: bdp,
            u: 1.0,
            inc_stage: 0,
            last_update: None,
            snd_nxt: 0,
            prev: Hops::default(),
        }
    }

    /// The window the gate holds, in whole bytes (at least 1).
    pub fn window_bytes(&self) -> u64 {
        (self.w.ceil() as u64).max(1)
    }

    /// The pacing rate `W / T`.
    pub fn rate_bps(&self) -> f64 {
        self.w * 8.0 / (self.t_ps * 1e-12)
    }

    /// The largest per-hop utilisation of `hops` against the previous records, with the time
    /// between the two records of that hop (ps); `None` if no hop has an earlier record. The
    /// previous records become `hops`.
    pub fn measure(&mut self, hops: &[IntHop]) -> Option<(f64, f64)> {
        let mut best: Option<(f64, f64)> = None;
        for (i, hop) in hops.iter().enumerate() {
            let Some(prev) = self.prev.as_slice().get(i) else { break };
            let tau = hop.time.0.saturating_sub(prev.time.0) as f64;
            // The same record twice (no packet between): it says nothing about a rate.
            if tau <= 0.0 {
                continue;
            }
            let b = hop.rate.bps() as f64 / 8.0; // bytes per second
            let tx_rate = hop.tx_bytes.saturating_sub(prev.tx_bytes) as f64 / (tau * 1e-12);
            let qlen = hop.qlen.min(prev.qlen) as f64;
            let u = qlen / (b * self.t_ps * 1e-12) + tx_rate / b;
            if best.is_none_or(|(bu, _)| u > bu) {
                best = Some((u, tau));
            }
        }
        self.prev = hops.iter().collect();
        best
    }

    /// The utilisation EWMA over the base RTT: `U = (1 - tau/T) U + (tau/T) u`, tau at most T.
    pub fn fold(&mut self, u: f64, tau_ps: f64) {
        let tau = tau_ps.min(self.t_ps);
        self.u = (self.u * (self.t_ps - tau) + u * tau) / self.t_ps;
    }

    /// The window from `W_c` and `U` (ComputeWind); with `update`, `W_c` and `incStage` move too.
    pub fn compute_window(&mut self, update: bool) -> f64 {
        let ratio = self.u / self.eta;
        let (w, stage) = if ratio >= 1.0 || self.inc_stage >= self.max_stage {
            (self.wc / ratio + self.w_ai, 0)
        } else {
            (self.wc + self.w_ai, self.inc_stage + 1)
        };
        let w = w.clamp(self.w_min, self.w_max);
        self.w = w;
        if update {
            self.wc = w;
            self.inc_stage = stage;
        }
        w
    }

    /// One ACK's echo (NewAck): the per-RTT update if it answers a packet sent after the last
    /// one, else the fast reaction.
    pub fn on_echo(&mut self, psn: u32, hops: &[IntHop]) {
        let Some(mark) = self.last_update else {
            // The first ACK: records to measure the next against.
            self.prev = hops.iter().collect();
            self.last_update = Some(self.snd_nxt);
            return;
        };
        let update = psn >= mark;
        if !update && !self.fast_react {
            return;
        }
        if let Some((u, tau)) = self.measure(hops) {
            self.fold(u, tau);
            self.compute_window(update);
        }
        if update {
            self.last_update = Some(self.snd_nxt.max(mark));
        }
    }
}

/// Bytes `rate` carries in `t`, exact in integers before the one rounding to f64.
fn bytes_in(rate: Rate, t: SimTime) -> f64 {
    (rate.bps() as u128 * t.0 as u128) as f64 / 8e12
}

impl CongestionControl for Hpcc {
    fn on_send(&mut self, _now: SimTime, gate: &mut Gate, sent: &Sent) {
        self.snd_nxt = self.snd_nxt.max(sent.psn + 1);
        // Paced at W / T: this packet's bytes take bytes x T / W.
        let gap = (sent.bytes as f64 * self.t_ps / self.w).ceil() as u64;
        gate.next_send = sent.at + SimTime(gap);
    }
    fn on_int(&mut self, _now: SimTime, gate: &mut Gate, echo: &IntEcho) {
        self.on_echo(echo.psn, echo.hops);
        gate.window = self.window_bytes();
    }
    fn rate(&self) -> Option<Rate> {
        Some(Rate(self.rate_bps().round().max(1.0) as u64))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
