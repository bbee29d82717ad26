//! The reaction point: one queue pair's DCQCN state machine (Zhu et al., SIGCOMM 2015, §3.2).
//! A CNP cuts the current rate Rc and remembers it as the target Rt; the rate-increase timer and
//! the byte counter then raise Rc back towards Rt (fast recovery), and Rt itself (additive, then
//! hyper increase). Rates are kept as f64 bits/s, as the paper writes its equations; the NIC is
//! paced at Rc rounded to a whole bit/s.

use crate::config::DcqcnConfig;
use engine::SimTime;
use engine::units::Rate;
use models::cc::{CongestionControl, Gate, Sent, paced_next_send};

/// The increase stage an increase event applied, from the two stage counts and F.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Both counts at most F: Rc = (Rt + Rc) / 2.
    FastRecovery,
    /// One count past F: Rt += R_AI, then Rc = (Rt + Rc) / 2.
    Additive,
    /// Both past F: Rt += i R_HAI with i = min(T, BC) - F, then Rc = (Rt + Rc) / 2.
    Hyper(u32),
}

impl Stage {
    /// The stage for timer count `t` and byte count `bc` (each counting the event being applied).
    pub fn of(t: u32, bc: u32, f: u32) -> Stage {
        if t.max(bc) <= f {
            Stage::FastRecovery
        } else if t.min(bc) <= f {
            Stage::Additive
        } else {
            Stage::Hyper(t.min(bc) - f)
        }
    }
}

/// One queue pair's reaction point.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    cfg: DcqcnConfig,
    /// The port's rate, the ceiling of Rc and Rt, in bits/s.
    line: f64,
    /// Rc, the current rate, in bits/s.
    pub rc: f64,
    /// Rt, the target rate, in bits/s.
    pub rt: f64,
    /// alpha as of `alpha_since`: it decays lazily, once per `AlphaResumInterval` since then.
    alpha: f64,
    alpha_since: SimTime,
    /// T: increase events of the timer since the last cut.
    pub timer_stage: u32,
    /// BC: increase events of the byte counter since the last cut.
    pub byte_stage: u32,
    /// Bytes left until the byte counter's next event.
    bytes_left: u64,
    /// When the rate-increase timer fires next (`SimTime::MAX`: stopped).
    increase_at: SimTime,
    last_cut: Option<SimTime>,
    /// CNPs received.
    pub cnps: u64,
    /// Rate cuts made.
    pub cuts: u64,
}

impl Dcqcn {
    /// A reaction point at line rate `port`, not yet reacting (no CNP seen).
    pub fn new(cfg: &DcqcnConfig, port: Rate) -> Dcqcn {
        let line = port.bps() as f64;
        Dcqcn {
            cfg: cfg.clone(),
            line,
            rc: line,
            rt: line,
            alpha: cfg.InitialAlpha,
            alpha_since: SimTime::ZERO,
            timer_stage: 0,
            byte_stage: 0,
            bytes_left: cfg.ByteCounter.0,
            increase_at: SimTime::MAX,
            last_cut: None,
            cnps: 0,
            cuts: 0,
        }
    }

    /// alpha at `now`: the value after the last CNP, times (1 - g) for each whole
    /// `AlphaResumInterval` since (the paper's alpha timer, restarted by each CNP).
    pub fn alpha(&self, now: SimTime) -> f64 {
        if self.cnps == 0 {
            return self.alpha;
        }
        let k = self.cfg.AlphaResumInterval.0.ps();
        let periods = (now.saturating_sub(self.alpha_since).ps() / k).min(i32::MAX as u64);
        self.alpha * (1.0 - self.cfg.EwmaGain).powi(periods as i32)
    }

    /// Rc as the NIC paces it.
    pub fn current_rate(&self) -> Rate {
        Rate((self.rc.round() as u64).max(1))
    }

    /// When the rate-increase timer fires next (`SimTime::MAX`: stopped).
    pub fn increase_at(&self) -> SimTime {
        self.increase_at
    }

    /// A CNP at `now`: the first one sets the rates to `RateOnFirstCnp` of Rc; then, unless the
    /// last cut was less than `RateDecreaseInterval` ago, Rt = Rc, Rc = max(MinRate,
    /// Rc (1 - alpha / 2)), the stages and the byte counter reset and the timer restarts; in any
    /// case alpha = (1 - g) alpha + g, from which it decays again.
    pub fn cnp(&mut self, now: SimTime) {
        let alpha = self.alpha(now);
        if self.cnps == 0 {
            self.rc = (self.rc * self.cfg.RateOnFirstCnp).max(self.min_rate());
            self.rt = self.rc;
        }
        self.cnps += 1;
        let cut = self
            .last_cut
            .is_none_or(|t| now >= t.saturating_add(self.cfg.RateDecreaseInterval.0));
        if cut {
            self.cuts += 1;
            self.last_cut = Some(now);
            self.rt = self.rc;
            self.rc = (self.rc * (1.0 - alpha / 2.0)).max(self.min_rate());
            self.timer_stage = 0;
            self.byte_stage = 0;
            self.bytes_left = self.cfg.ByteCounter.0;
            self.increase_at = now.saturating_add(self.cfg.RpTimer.0);
        }
        self.alpha = (1.0 - self.cfg.EwmaGain) * alpha + self.cfg.EwmaGain;
        self.alpha_since = now;
    }

    /// The rate-increase timer at `now`, if due: T += 1 and an increase; it restarts unless Rc
    /// and Rt are both at line rate (nothing left to increase until the next cut).
    pub fn timer(&mut self, now: SimTime) {
        if now < self.increase_at {
            return;
        }
        self.timer_stage = self.timer_stage.saturating_add(1);
        self.increase();
        self.increase_at = if self.at_line() {
            SimTime::MAX
        } else {
            now.saturating_add(self.cfg.RpTimer.0)
        };
    }

    /// `bytes` went on the wire: every `ByteCounter` bytes, BC += 1 and an increase.
    pub fn sent(&mut self, bytes: u64) {
        if self.cuts == 0 || self.at_line() {
            return;
        }
        if bytes < self.bytes_left {
            self.bytes_left -= bytes;
            return;
        }
        self.bytes_left = self.cfg.ByteCounter.0;
        self.byte_stage = self.byte_stage.saturating_add(1);
        self.increase();
    }

    /// One increase event (the stage counts already counting it); returns the stage applied.
    pub fn increase(&mut self) -> Stage {
        let stage = Stage::of(self.timer_stage, self.byte_stage, self.cfg.FastRecoveryTimes);
        match stage {
            Stage::FastRecovery => {}
            Stage::Additive => self.rt += self.cfg.RateAI.bps() as f64,
            Stage::Hyper(i) => self.rt += i as f64 * self.cfg.RateHAI.bps() as f64,
        }
        self.rt = self.rt.min(self.line);
        self.rc = ((self.rt + self.rc) / 2.0).min(self.line);
        stage
    }

    fn at_line(&self) -> bool {
        self.rc >= self.line && self.rt >= self.line
    }

    fn min_rate(&self) -> f64 {
        (self.cfg.MinRate.bps() as f64).min(self.line)
    }

    /// The NIC's timer: the rate-increase timer, or never.
    fn wake(&self, gate: &mut Gate) {
        gate.wake_at = self.increase_at;
    }
}

impl CongestionControl for Dcqcn {
    fn on_send(&mut self, _now: SimTime, gate: &mut Gate, sent: &Sent) {
        // Before the first cut, and once back at line rate, nothing to pace or count: the port
        // is the only limit, and the queue pair costs one branch a packet.
        if self.cuts == 0 || self.at_line() {
            return;
        }
        self.sent(sent.bytes as u64);
        gate.next_send = paced_next_send(self.current_rate(), sent);
        self.wake(gate);
    }
    fn on_cnp(&mut self, now: SimTime, gate: &mut Gate) {
        self.cnp(now);
        self.wake(gate);
    }
    fn on_timer(&mut self, now: SimTime, gate: &mut Gate) {
        self.timer(now);
        self.wake(gate);
    }
    fn rate(&self) -> Option<Rate> {
        Some(self.current_rate())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
