//! The scenario's `switch` field: one set of settings shared by every switch of the fabric
//! (buffer, forwarding latency, which classes are lossless, PFC thresholds, drop-tail limit of
//! lossy classes, the egress scheduler and ECN marking). The spec says nothing about switches,
//! so every default here is ours; each field's doc line gives its unit, its default and why.
//!
//! ```text
//! switch: (
//!     BufferSize: "32MiB",
//!     Lossless: [true, true, false, false, false, false, false, false],
//!     Scheduler: Dwrr(weights: [1, 1, 2, 2, 4, 4, 8, 8]),
//!     Ecn: (Enabled: [false, true, false, false, false, false, false, false], Kmin: "100KiB", Kmax: "400KiB", Pmax: 0.2),
//! ),
//! ```
//!
//! `validate` checks the values against each other and against the largest switch of the
//! topology; the scenario loader calls it, and each message names the field as `switch.FIELD`.

use engine::scenario::FieldError;
use engine::units::{Duration, Size};
use serde::{Deserialize, Serialize};

/// Settings of every switch. All defaults are ours (the spec has no switch model).
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Shared packet buffer of one switch, in bytes. Default 32 MiB (ours: the class of a
    /// 400G-era datacenter switch's buffer per pipeline). Lossless classes get a fixed reservation
    /// of ports x lossless classes x (`PfcXoff` + `PfcHeadroom`) of it; lossy classes share the rest.
    pub BufferSize: Size,
    /// Time from a packet's last bit arriving to the switch being able to send it on. Default
    /// 500 ns (ours). Applied on arrival (folded into the incoming link's delay).
    pub ForwardingLatency: Duration,
    /// Which classes are lossless (PFC, never dropped) and which lossy (drop-tail). Default
    /// classes 0 and 1 lossless, the others lossy (ours: the NIC's default pools are 0 and 1).
    #[serde(with = "per_class")]
    pub Lossless: [bool; 8],
    /// PFC XOFF threshold per ingress port and lossless class, in bytes buffered: above it the
    /// switch sends PAUSE upstream. Default 256 KiB (ours).
    pub PfcXoff: Size,
    /// PFC XON threshold per ingress port and lossless class: at or below it a paused upstream
    /// gets RESUME. Must be below `PfcXoff`. Default 224 KiB (ours: above the ~133 KB that
    /// refill in one PAUSE/RESUME round trip at 400 Gbps, so a resumed port never runs dry).
    pub PfcXon: Size,
    /// Bytes an ingress port and lossless class may buffer above `PfcXoff` while the PAUSE takes
    /// effect. Default 160 KiB (ours). It must cover what arrives after the counter passes XOFF:
    /// the rest of the frame that passed it, a frame on our serializer ahead of the PAUSE, the
    /// PAUSE's trip (1 us), the frame on the upstream serializer when it arrives, and that
    /// frame's trip back (1 us) plus the forwarding latency it spends here (500 ns). At 400 Gbps
    /// (50 B/ns) that is 2.5 us x 50 B/ns + 3 x 4154 B = 137.5 KB (152.7 KB with 9216 B jumbo
    /// frames). 2 x BDP + 2 MTU alone, ~110 KB, forgets the forwarding latency and falls short.
    pub PfcHeadroom: Size,
    /// Drop-tail limit of one egress queue of a lossy class, in bytes. Default 1 MiB (ours).
    pub LossyQueueLimit: Size,
    /// How an egress port chooses between its classes. Default `StrictPriority` (class 7 first).
    pub Scheduler: Scheduler,
    /// ECN marking (RED on the egress class queue). Default off for every class.
    pub Ecn: EcnConfig,
}

/// The egress scheduler of every switch port.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Scheduler {
    /// The highest non-empty, unpaused class goes first; class 7 is the highest.
    #[default]
    StrictPriority,
    /// Deficit-weighted round robin: each class gets `weights[c]` quanta of
    /// `SwitchConfig::DWRR_QUANTUM_BYTES` per round. Every weight must be at least 1.
    Dwrr {
        /// Each class's weight, class 0 first.
        #[serde(with = "per_class")]
        weights: [u32; 8],
    },
}

/// RED marking of ECN-capable packets at enqueue, on the bytes already in the egress queue of
/// the packet's class: never at or below `Kmin`, always above `Kmax`, and in between with a
/// probability rising linearly from 0 to `Pmax`. Defaults (ours) are the DCQCN thresholds HPCC's
/// ns-3 scripts use at 25 Gbps (Li et al., SIGCOMM 2019: 100 x bw / 25 and 400 x bw / 25 KB):
/// scaled to 400 Gbps they would sit above this switch's PFC XOFF, so they are kept unscaled.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EcnConfig {
    /// Classes whose packets may be marked. Default none.
    #[serde(with = "per_class")]
    pub Enabled: [bool; 8],
    /// Queue bytes at or below which nothing is marked. Default 100 KiB.
    pub Kmin: Size,
    /// Queue bytes above which every packet is marked. Default 400 KiB.
    pub Kmax: Size,
    /// Marking probability just at `Kmax`, from 0 to 1. Default 0.2.
    pub Pmax: f64,
}

impl SwitchConfig {
    /// Default `BufferSize`: 32 MiB.
    pub const DEFAULT_BUFFER_BYTES: u64 = 32 << 20;
    /// Default `ForwardingLatency`: 500 ns.
    pub const DEFAULT_FORWARDING_LATENCY_NS: u64 = 500;
    /// Default `PfcXoff`: 256 KiB.
    pub const DEFAULT_PFC_XOFF_BYTES: u64 = 256 << 10;
    /// Default `PfcXon`: 224 KiB.
    pub const DEFAULT_PFC_XON_BYTES: u64 = 224 << 10;
    /// Default `PfcHeadroom`: 160 KiB.
    pub const DEFAULT_PFC_HEADROOM_BYTES: u64 = 160 << 10;
    /// Default `LossyQueueLimit`: 1 MiB.
    pub const DEFAULT_LOSSY_QUEUE_LIMIT_BYTES: u64 = 1 << 20;
    /// Bytes of one DWRR weight unit per round: a jumbo frame, so a class with weight 1 can
    /// always send at least one packet per round.
    pub const DWRR_QUANTUM_BYTES: u32 = 9216;

    /// Number of lossless classes.
    pub fn lossless_classes(&self) -> usize {
        self.Lossless.iter().filter(|&&l| l).count()
    }

    /// Buffer bytes reserved for lossless traffic on a switch of `ports` ports: every ingress port
    /// and lossless class may hold up to XOFF + headroom, and PFC keeps it within that.
    pub fn lossless_reserve(&self, ports: usize) -> u128 {
        ports as u128 * self.lossless_classes() as u128 * (self.PfcXoff.0 as u128 + self.PfcHeadroom.0 as u128)
    }

    /// Checks the settings against each other and against the largest switch of the topology
    /// (`max_ports` ports). The field is relative to `switch`.
    pub fn validate(&self, max_ports: usize) -> Result<(), FieldError> {
        let fail = |field: &str, message: String| Err(FieldError::new(field, message));
        if self.BufferSize.0 == 0 {
            return fail("BufferSize", "must be more than 0 B".into());
        }
        if self.PfcXoff.0 == 0 {
            return fail("PfcXoff", "must be more than 0 B".into());
        }
        if self.PfcXon.0 >= self.PfcXoff.0 {
            return fail(
                "PfcXon",
                format!(
                    "{} must be below PfcXoff ({}): a port must drain below the PAUSE threshold before it resumes",
                    self.PfcXon, self.PfcXoff
                ),
            );
        }
        if self.LossyQueueLimit.0 == 0 {
            return fail("LossyQueueLimit", "must be more than 0 B".into());
        }
        let reserve = self.lossless_reserve(max_ports);
        if reserve > self.BufferSize.0 as u128 {
            return fail(
                "BufferSize",
                format!(
                    "{} cannot hold the lossless reservation of {} ports x {} lossless classes x (PfcXoff {} + PfcHeadroom {}) = {} B; raise switch.BufferSize or lower switch.PfcXoff / switch.PfcHeadroom",
                    self.BufferSize,
                    max_ports,
                    self.lossless_classes(),
                    self.PfcXoff,
                    self.PfcHeadroom,
                    reserve
                ),
            );
        }
        if let Scheduler::Dwrr { weights } = &self.Scheduler
            && let Some(c) = weights.iter().position(|&w| w == 0)
        {
            return fail(
                &format!("Scheduler.weights[{c}]"),
                format!("the Dwrr weight of class {c} is 0; every weight must be at least 1"),
            );
        }
        let ecn = &self.Ecn;
        if ecn.Kmin > ecn.Kmax {
            return fail(
                "Ecn.Kmin",
                format!("{} must not be above Ecn.Kmax ({})", ecn.Kmin, ecn.Kmax),
            );
        }
        if !(0.0..=1.0).contains(&ecn.Pmax) {
            return fail("Ecn.Pmax", format!("{} must be a probability from 0 to 1", ecn.Pmax));
        }
        Ok(())
    }
}

impl Default for SwitchConfig {
    fn default() -> Self {
        let mut lossless = [false; 8];
        lossless[0] = true;
        lossless[1] = true;
        SwitchConfig {
            BufferSize: Size(Self::DEFAULT_BUFFER_BYTES),
            ForwardingLatency: Duration::from_ns(Self::DEFAULT_FORWARDING_LATENCY_NS),
            Lossless: lossless,
            PfcXoff: Size(Self::DEFAULT_PFC_XOFF_BYTES),
            PfcXon: Size(Self::DEFAULT_PFC_XON_BYTES),
            PfcHeadroom: Size(Self::DEFAULT_PFC_HEADROOM_BYTES),
            LossyQueueLimit: Size(Self::DEFAULT_LOSSY_QUEUE_LIMIT_BYTES),
            Scheduler: Scheduler::StrictPriority,
            Ecn: EcnConfig::default(),
        }
    }
}

impl EcnConfig {
    /// Default `Kmin`: 100 KiB.
    pub const DEFAULT_KMIN_BYTES: u64 = 100 << 10;
    /// Default `Kmax`: 400 KiB.
    pub const DEFAULT_KMAX_BYTES: u64 = 400 << 10;
    /// Default `Pmax`: 0.2.
    pub const DEFAULT_PMAX: f64 = 0.2;

    /// The marking probability of a packet that finds `queued` bytes ahead of it in its queue.
    #[inline]
    pub fn mark_probability(&self, queued: u64) -> f64 {
        let (kmin, kmax) = (self.Kmin.0, self.Kmax.0);
        if queued <= kmin {
            0.0
        } else if queued > kmax {
            1.0
        } else {
            // kmin < queued <= kmax, so kmax > kmin here.
            self.Pmax * (queued - kmin) as f64 / (kmax - kmin) as f64
        }
    }
}

impl Default for EcnConfig {
    fn default() -> Self {
        EcnConfig {
            Enabled: [false; 8],
            Kmin: Size(Self::DEFAULT_KMIN_BYTES),
            Kmax: Size(Self::DEFAULT_KMAX_BYTES),
            Pmax: Self::DEFAULT_PMAX,
        }
    }
}

/// Eight values, one per class, written as a RON list `[a, b, ...]` (serde's own form for an
/// array is a tuple, `(a, b, ...)`, which reads oddly for a per-class setting).
pub mod per_class {
    use serde::de::{Error, SeqAccess, Visitor};
    use serde::{Deserialize, Deserializer, Serializer};
    use std::fmt;
    use std::marker::PhantomData;

    /// Writes the eight values as a list.
    pub fn serialize<S: Serializer, T: serde::Serialize>(v: &[T; 8], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter())
    }

    /// Reads a list of exactly eight values.
    pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de> + Copy + Default>(
        d: D,
    ) -> Result<[T; 8], D::Error> {
        struct Eight<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Copy + Default> Visitor<'de> for Eight<T> {
            type Value = [T; 8];
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of 8 values, one per class 0 to 7")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<[T; 8], A::Error> {
                let mut out = [T::default(); 8];
                for (i, slot) in out.iter_mut().enumerate() {
                    *slot = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(i, &self))?;
                }
                if seq.next_element::<T>()?.is_some() {
                    return Err(A::Error::invalid_length(9, &self));
                }
                Ok(out)
            }
        }
        d.deserialize_seq(Eight(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<SwitchConfig, ron::error::SpannedError> {
        ron::from_str(s)
    }

    #[test]
    fn empty_ron_gives_the_defaults_and_they_validate() {
        let c = parse("()").unwrap();
        assert_eq!(c, SwitchConfig::default());
        assert_eq!(c.BufferSize.0, 33_554_432);
        assert_eq!(c.ForwardingLatency.time(), engine::SimTime::from_ns(500));
        assert_eq!(c.lossless_classes(), 2);
        // The largest default switch (a leaf of 4 hosts and 4 spines) fits, and so does a 32-port
        // one: 32 ports x 2 classes x 416 KiB = 26 MiB; 40 ports (32.5 MiB) do not.
        c.validate(8).unwrap();
        c.validate(32).unwrap();
        assert!(c.validate(40).is_err());
    }

    #[test]
    fn default_headroom_covers_the_pause_round_trip_at_400g() {
        // At 400 Gbps, 50 B a nanosecond. What arrives after XOFF is passed: 2 x 1 us of
        // propagation and the 500 ns forwarding latency at line rate, and three frames (the one
        // that passed XOFF, the one ahead of the PAUSE, the one upstream in service).
        let bytes_per_ns = 400e9 / 8.0 / 1e9;
        let needed = |frame: f64| bytes_per_ns * (2.0 * 1000.0 + 500.0) + 3.0 * frame;
        assert_eq!(needed(4154.0), 137_462.0);
        let c = SwitchConfig::default();
        assert!(c.PfcHeadroom.0 as f64 >= needed(9216.0), "jumbo frames too");
        // A RESUME's round trip refills 2 x 1 us + 500 ns + 2 frames: XON keeps that queued.
        assert!((c.PfcXon.0 as f64) >= bytes_per_ns * 2500.0 + 2.0 * 9216.0);
    }

    #[test]
    fn fields_read_from_ron_with_units() {
        let c = parse(
            r#"(BufferSize: "8MiB", ForwardingLatency: "1us", Lossless: [false, false, false, true, false, false, false, false],
                PfcXoff: 100000, PfcXon: 50000, PfcHeadroom: "100KiB", LossyQueueLimit: "64KiB",
                Scheduler: Dwrr(weights: [1, 2, 3, 4, 5, 6, 7, 8]),
                Ecn: (Enabled: [false, false, false, true, false, false, false, false], Kmin: "10KiB", Kmax: "20KiB", Pmax: 0.5))"#,
        )
        .unwrap();
        assert_eq!(c.BufferSize.0, 8 << 20);
        assert_eq!(c.ForwardingLatency.time(), engine::SimTime::from_us(1));
        assert_eq!(c.lossless_classes(), 1);
        assert_eq!((c.PfcXoff.0, c.PfcXon.0, c.PfcHeadroom.0), (100_000, 50_000, 102_400));
        assert_eq!(
            c.Scheduler,
            Scheduler::Dwrr {
                weights: [1, 2, 3, 4, 5, 6, 7, 8]
            }
        );
        assert!(c.Ecn.Enabled[3]);
        assert_eq!(c.Ecn.Pmax, 0.5);
        c.validate(16).unwrap();
    }

    #[test]
    fn per_class_lists_need_eight_values() {
        let e = parse("(Lossless: [true, false])").unwrap_err();
        assert!(e.to_string().contains("8 values"), "{e}");
        let e = parse("(Lossless: [true, false, true, false, true, false, true, false, true])").unwrap_err();
        assert!(e.to_string().contains("8 values"), "{e}");
        let c = SwitchConfig {
            Scheduler: Scheduler::Dwrr {
                weights: [1, 2, 3, 4, 5, 6, 7, 8],
            },
            ..Default::default()
        };
        assert_eq!(parse(&ron::to_string(&c).unwrap()).unwrap(), c, "round trip");
    }

    #[test]
    fn unknown_fields_are_refused() {
        let e = parse("(BufferSise: 1)").unwrap_err();
        assert!(e.to_string().contains("BufferSise"), "{e}");
        let e = parse("(Ecn: (Kmid: 1))").unwrap_err();
        assert!(e.to_string().contains("Kmid"), "{e}");
    }

    #[test]
    fn each_bad_value_names_its_field() {
        let bad = |f: &dyn Fn(&mut SwitchConfig), field: &str, ports: usize| {
            let mut c = SwitchConfig::default();
            f(&mut c);
            let e = c.validate(ports).unwrap_err();
            assert_eq!(format!("switch.{}", e.field), field, "{e}");
        };
        bad(&|c| c.PfcXon = c.PfcXoff, "switch.PfcXon", 8);
        bad(&|c| c.PfcXoff = Size(0), "switch.PfcXoff", 8);
        bad(&|c| c.BufferSize = Size(0), "switch.BufferSize", 8);
        bad(&|c| c.LossyQueueLimit = Size(0), "switch.LossyQueueLimit", 8);
        bad(&|c| c.Ecn.Kmin = Size(c.Ecn.Kmax.0 + 1), "switch.Ecn.Kmin", 8);
        bad(&|c| c.Ecn.Pmax = 1.5, "switch.Ecn.Pmax", 8);
        bad(&|c| c.Ecn.Pmax = f64::NAN, "switch.Ecn.Pmax", 8);
        bad(
            &|c| {
                c.Scheduler = Scheduler::Dwrr {
                    weights: [1, 1, 0, 1, 1, 1, 1, 1],
                }
            },
            "switch.Scheduler.weights[2]",
            8,
        );
        // 64 ports x 2 classes x 416 KiB = 52 MiB does not fit in 32 MiB.
        bad(&|_| {}, "switch.BufferSize", 64);
    }

    #[test]
    fn red_probability_is_zero_to_kmin_linear_to_pmax_then_one() {
        let e = EcnConfig {
            Enabled: [true; 8],
            Kmin: Size(1000),
            Kmax: Size(3000),
            Pmax: 0.4,
        };
        assert_eq!(e.mark_probability(0), 0.0);
        assert_eq!(e.mark_probability(1000), 0.0);
        assert_eq!(e.mark_probability(2000), 0.2);
        assert_eq!(e.mark_probability(3000), 0.4);
        assert_eq!(e.mark_probability(3001), 1.0);
        // Kmin = Kmax: a step.
        let step = EcnConfig {
            Kmin: Size(500),
            Kmax: Size(500),
            ..e
        };
        assert_eq!((step.mark_probability(500), step.mark_probability(501)), (0.0, 1.0));
    }
}
