//! Simulated time: an integer count of picoseconds.
//!
//! At 400 Gbps a byte takes exactly 20 ps, so serialization times stay exact integers. Floats appear
//! only at the edges: seconds in RON input (rounded to the nearest picosecond once, at load) and
//! seconds in CSV output.

use std::fmt;

/// A point in (or span of) simulated time, in picoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct SimTime(pub u64);

impl SimTime {
    /// The start of simulated time.
    pub const ZERO: SimTime = SimTime(0);
    /// The last representable instant (about 213 days): "never".
    pub const MAX: SimTime = SimTime(u64::MAX);
    /// Picoseconds in one second.
    pub const PS_PER_SEC: u64 = 1_000_000_000_000;

    /// `ps` picoseconds.
    pub const fn from_ps(ps: u64) -> Self {
        SimTime(ps)
    }
    /// `ns` nanoseconds.
    pub const fn from_ns(ns: u64) -> Self {
        SimTime(ns * 1_000)
    }
    /// `us` microseconds.
    pub const fn from_us(us: u64) -> Self {
        SimTime(us * 1_000_000)
    }
    /// In picoseconds.
    pub const fn ps(self) -> u64 {
        self.0
    }

    /// Seconds to picoseconds, rounded to the nearest picosecond. `None` for a negative, non-finite
    /// or too large value (more than about 213 days).
    pub fn from_secs_f64(secs: f64) -> Option<Self> {
        if !secs.is_finite() || secs < 0.0 {
            return None;
        }
        let ps = (secs * Self::PS_PER_SEC as f64).round();
        if ps >= u64::MAX as f64 {
            return None;
        }
        Some(SimTime(ps as u64))
    }

    /// In seconds, as precisely as an `f64` allows.
    pub fn as_secs_f64(self) -> f64 {
        // Split so that large values keep their picosecond digits as far as f64 allows.
        (self.0 / Self::PS_PER_SEC) as f64 + (self.0 % Self::PS_PER_SEC) as f64 / 1e12
    }
    /// In microseconds, as precisely as an `f64` allows.
    pub fn as_us_f64(self) -> f64 {
        (self.0 / 1_000_000) as f64 + (self.0 % 1_000_000) as f64 / 1e6
    }

    /// The sum, `None` on overflow.
    pub fn checked_add(self, rhs: SimTime) -> Option<SimTime> {
        self.0.checked_add(rhs.0).map(SimTime)
    }
    /// The difference, `None` if `rhs` is later.
    pub fn checked_sub(self, rhs: SimTime) -> Option<SimTime> {
        self.0.checked_sub(rhs.0).map(SimTime)
    }
    /// `self + rhs`, or `SimTime::MAX` where that overflows.
    pub fn saturating_add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
    /// The difference, zero if `rhs` is later.
    pub fn saturating_sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(rhs.0))
    }
}

/// Addition in the model's hot path. Overflow would need a run of more than 213 simulated days,
/// which the loader rejects, so it is a bug, not an input error: it panics in debug builds.
impl std::ops::Add for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, rhs: SimTime) -> SimTime {
        debug_assert!(self.0.checked_add(rhs.0).is_some(), "SimTime overflow");
        SimTime(self.0.wrapping_add(rhs.0))
    }
}
impl std::ops::AddAssign for SimTime {
    #[inline]
    fn add_assign(&mut self, rhs: SimTime) {
        *self = *self + rhs;
    }
}
/// Subtraction; panics in debug builds when it would go below zero (a bug in the caller).
impl std::ops::Sub for SimTime {
    type Output = SimTime;
    #[inline]
    fn sub(self, rhs: SimTime) -> SimTime {
        debug_assert!(self.0 >= rhs.0, "SimTime underflow");
        SimTime(self.0.wrapping_sub(rhs.0))
    }
}

impl fmt::Display for SimTime {
    /// Seconds with all twelve picosecond digits, trailing zeros trimmed: `0.000005071920`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0 / Self::PS_PER_SEC;
        let frac = self.0 % Self::PS_PER_SEC;
        if frac == 0 {
            write!(f, "{secs}s")
        } else {
            let digits = format!("{frac:012}");
            write!(f, "{secs}.{}s", digits.trim_end_matches('0'))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_round_to_nearest_picosecond() {
        assert_eq!(SimTime::from_secs_f64(0.001), Some(SimTime(1_000_000_000)));
        assert_eq!(SimTime::from_secs_f64(0.506), Some(SimTime(506_000_000_000)));
        assert_eq!(SimTime::from_secs_f64(1e-12 * 0.6), Some(SimTime(1)));
        assert_eq!(SimTime::from_secs_f64(-1.0), None);
        assert_eq!(SimTime::from_secs_f64(f64::NAN), None);
        assert_eq!(SimTime::from_secs_f64(1e300), None);
    }

    #[test]
    fn display_is_exact_seconds() {
        assert_eq!(SimTime(5_071_920).to_string(), "0.00000507192s");
        assert_eq!(SimTime(2 * SimTime::PS_PER_SEC).to_string(), "2s");
        assert_eq!(SimTime(0).to_string(), "0s");
    }

    #[test]
    fn checked_arithmetic() {
        assert_eq!(SimTime(1).checked_sub(SimTime(2)), None);
        assert_eq!(SimTime(u64::MAX).checked_add(SimTime(1)), None);
        assert_eq!(SimTime(3).checked_add(SimTime(4)), Some(SimTime(7)));
    }
}
