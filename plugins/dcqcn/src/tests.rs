//! The reaction point against the paper's equations, each figure derived by hand. The settings
//! are chosen so that every value is exact in binary: g = 1/4, F = 2, R_AI = 1 Gbps,
//! R_HAI = 10 Gbps, a 400 Gbps port.

use super::*;
use engine::SimTime;
use engine::units::{Duration, Rate, Size};
use models::cc::Sent;

const G: u64 = 1_000_000_000;

fn cfg() -> DcqcnConfig {
    DcqcnConfig {
        EwmaGain: 0.25,
        AlphaResumInterval: Duration::from_us(50),
        RateDecreaseInterval: Duration::from_us(4),
        RpTimer: Duration::from_us(100),
        ByteCounter: Size(100_000),
        FastRecoveryTimes: 2,
        RateAI: Rate(G),
        RateHAI: Rate(10 * G),
        MinRate: Rate(G),
        RateOnFirstCnp: 1.0,
        InitialAlpha: 1.0,
    }
}

fn us(t: u64) -> SimTime {
    SimTime::from_us(t)
}

fn gbps(rp: &Dcqcn) -> (f64, f64) {
    (rp.rc / G as f64, rp.rt / G as f64)
}

fn sent(at: SimTime, bytes: u32) -> Sent {
    Sent {
        at,
        psn: 0,
        bytes,
        payload: bytes - 58,
        retransmit: false,
        in_flight: bytes as u64,
    }
}

#[test]
fn a_cnp_cuts_by_alpha_over_two_and_raises_alpha() {
    let mut rp = Dcqcn::new(&cfg(), Rate::gbps(400));
    // First CNP at 10 us, alpha 1 (InitialAlpha): Rt = Rc = 400; Rc = 400 (1 - 1/2) = 200;
    // alpha = (1 - 1/4) 1 + 1/4 = 1.
    rp.cnp(us(10));
    assert_eq!(gbps(&rp), (200.0, 400.0));
    assert_eq!(rp.alpha(us(10)), 1.0);
    // Second CNP at 110 us: two whole alpha periods (50 us) without a CNP, alpha = 1 x (3/4)^2
    // = 0.5625; Rt = Rc = 200; Rc = 200 (1 - 0.5625 / 2) = 200 x 0.71875 = 143.75;
    // alpha = 0.75 x 0.5625 + 0.25 = 0.671875.
    rp.cnp(us(110));
    assert_eq!(gbps(&rp), (143.75, 200.0));
    assert_eq!(rp.alpha(us(110)), 0.671875);
    assert_eq!((rp.cnps, rp.cuts), (2, 2));
}

#[test]
fn alpha_decays_once_per_resume_interval_without_cnp() {
    let mut rp = Dcqcn::new(&cfg(), Rate::gbps(400));
    assert_eq!(rp.alpha(us(1_000)), 1.0, "no decay before the first CNP");
    rp.cnp(us(10));
    // alpha = 1 after the CNP; (1 - g) = 0.75 per whole 50 us since 10 us.
    assert_eq!(rp.alpha(us(59)), 1.0);
    assert_eq!(rp.alpha(us(60)), 0.75);
    assert_eq!(rp.alpha(us(159)), 0.5625);
    assert_eq!(rp.alpha(us(160)), 0.421875);
    // A CNP restarts the decay: at 60 us alpha was 0.75, so 0.75 x 0.75 + 0.25 = 0.8125, and
    // 49 us later it has not decayed.
    rp.cnp(us(60));
    assert_eq!(rp.alpha(us(109)), 0.8125);
    assert_eq!(rp.alpha(us(110)), 0.609375);
}

#[test]
fn rate_on_first_cnp_sets_both_rates_before_the_cut() {
    let c = DcqcnConfig {
        RateOnFirstCnp: 0.5,
        ..cfg()
    };
    let mut rp = Dcqcn::new(&c, Rate::gbps(400));
    // Rc = Rt = 0.5 x 400 = 200, then the cut (alpha 1): Rt = 200, Rc = 100.
    rp.cnp(us(10));
    assert_eq!(gbps(&rp), (100.0, 200.0));
    // Only the first CNP: the next (alpha 1 x 0.75^2 + ... : 2 periods, 0.5625) cuts 100 to
    // 100 x 0.71875 = 71.875, Rt = 100.
    rp.cnp(us(110));
    assert_eq!(gbps(&rp), (71.875, 100.0));
}

#[test]
fn fast_recovery_then_additive_then_hyper_increase() {
    let c = DcqcnConfig {
        RateOnFirstCnp: 0.5,
        ..cfg()
    };
    let mut rp = Dcqcn::new(&c, Rate::gbps(400));
    rp.cnp(us(0)); // Rc 100, Rt 200, timer due at 100 us.
    let step = |rp: &mut Dcqcn, timer: bool, t: u64| {
        if timer {
            rp.timer(us(t));
        } else {
            // One send of the whole byte counter: one byte-counter event.
            rp.sent(100_000);
        }
        (rp.timer_stage, rp.byte_stage, gbps(rp))
    };
    // F = 2. Timer events T = 1, 2 (BC = 0): fast recovery, Rc = (Rt + Rc) / 2:
    // (200 + 100) / 2 = 150, (200 + 150) / 2 = 175.
    assert_eq!(step(&mut rp, true, 100), (1, 0, (150.0, 200.0)));
    assert_eq!(step(&mut rp, true, 200), (2, 0, (175.0, 200.0)));
    // T = 3 > F, BC = 0: additive, Rt = 200 + 1 = 201, Rc = (201 + 175) / 2 = 188.
    assert_eq!(step(&mut rp, true, 300), (3, 0, (188.0, 201.0)));
    assert_eq!(step(&mut rp, true, 400), (4, 0, (195.0, 202.0)));
    // Byte counter BC = 1, 2: min(T, BC) <= F, additive: Rt 203, Rc (203 + 195) / 2 = 199;
    // Rt 204, Rc (204 + 199) / 2 = 201.5.
    assert_eq!(step(&mut rp, false, 0), (4, 1, (199.0, 203.0)));
    assert_eq!(step(&mut rp, false, 0), (4, 2, (201.5, 204.0)));
    // BC = 3: both past F, hyper with i = min(4, 3) - 2 = 1: Rt = 204 + 10 = 214,
    // Rc = (214 + 201.5) / 2 = 207.75.
    assert_eq!(step(&mut rp, false, 0), (4, 3, (207.75, 214.0)));
    // T = 5: i = min(5, 3) - 2 = 1: Rt 224, Rc (224 + 207.75) / 2 = 215.875.
    assert_eq!(step(&mut rp, true, 500), (5, 3, (215.875, 224.0)));
    // BC = 4: i = min(5, 4) - 2 = 2: Rt = 224 + 20 = 244, Rc = (244 + 215.875) / 2 = 229.9375.
    assert_eq!(step(&mut rp, false, 0), (5, 4, (229.9375, 244.0)));
    assert_eq!(Stage::of(5, 4, 2), Stage::Hyper(2));
    assert_eq!(Stage::of(2, 0, 2), Stage::FastRecovery);
    assert_eq!(Stage::of(0, 3, 2), Stage::Additive);
}

#[test]
fn the_byte_counter_counts_wire_bytes_and_the_timer_counts_its_own_period() {
    let mut rp = Dcqcn::new(&cfg(), Rate::gbps(400));
    // Before any cut nothing counts.
    rp.sent(1_000_000);
    assert_eq!(rp.byte_stage, 0);
    rp.cnp(us(0));
    // 24 frames of 4,154 B are 99,696 B < 100,000: no event; the 25th passes it: BC = 1, and
    // the counter starts again from the full 100,000 B (the excess is not carried, as ns-3).
    for _ in 0..24 {
        rp.sent(4154);
    }
    assert_eq!(rp.byte_stage, 0);
    rp.sent(4154);
    assert_eq!(rp.byte_stage, 1);
    for _ in 0..24 {
        rp.sent(4154);
    }
    assert_eq!(rp.byte_stage, 1);
    // The timer is due RpTimer (100 us) after the cut, not before; each event restarts it.
    assert_eq!(rp.increase_at(), us(100));
    rp.timer(us(99));
    assert_eq!(rp.timer_stage, 0);
    rp.timer(us(100));
    assert_eq!((rp.timer_stage, rp.increase_at()), (1, us(200)));
    // A cut resets both counts, the byte counter and the timer.
    rp.cnp(us(150));
    assert_eq!((rp.timer_stage, rp.byte_stage, rp.increase_at()), (0, 0, us(250)));
    for _ in 0..24 {
        rp.sent(4154);
    }
    assert_eq!(rp.byte_stage, 0);
}

#[test]
fn cuts_stop_at_the_minimum_rate_and_within_the_decrease_interval() {
    // g = 1 keeps alpha at 1: every cut halves. 400 -> 200 -> 100 -> max(50, 60) = 60.
    let c = DcqcnConfig {
        EwmaGain: 1.0,
        MinRate: Rate(60 * G),
        ..cfg()
    };
    let mut rp = Dcqcn::new(&c, Rate::gbps(400));
    for (i, want) in [200.0, 100.0, 60.0, 60.0].into_iter().enumerate() {
        rp.cnp(us(10 * i as u64));
        assert_eq!(gbps(&rp).0, want, "cut {i}");
    }
    // A CNP 3 us after the last cut (RateDecreaseInterval 4 us): alpha only, no cut.
    let mut rp = Dcqcn::new(&cfg(), Rate::gbps(400));
    rp.cnp(us(10));
    rp.cnp(us(13));
    assert_eq!((gbps(&rp), rp.cuts, rp.cnps), ((200.0, 400.0), 1, 2));
    rp.cnp(us(14));
    assert_eq!(rp.cuts, 2);
}

#[test]
fn back_at_line_rate_the_timer_stops() {
    let mut rp = Dcqcn::new(&cfg(), Rate::gbps(400));
    rp.cnp(us(0));
    let mut t = 0;
    while rp.increase_at() != SimTime::MAX {
        t += 100;
        assert!(t < 100 * 200, "never back at line rate");
        rp.timer(us(t));
    }
    assert_eq!(gbps(&rp), (400.0, 400.0));
    // Rc halves towards 400 from 200: 300, 350, then Rt is capped at 400 and Rc creeps up by
    // halving the gap until it is within an ulp of 400.
    assert!(rp.timer_stage > 3);
    // Back at line rate a send leaves the gate as it is: the port is the only limit.
    let mut gate = models::cc::Gate::OPEN;
    rp.on_send(us(t), &mut gate, &sent(us(t), 4154));
    assert_eq!(gate, models::cc::Gate::OPEN);
}

#[test]
fn the_gate_paces_at_rc_after_the_first_cut_only() {
    let c = DcqcnConfig::default();
    let mut rp = Dcqcn::new(&c, Rate::gbps(400));
    let mut gate = models::cc::Gate::OPEN;
    let t = us(5);
    rp.on_send(t, &mut gate, &sent(t, 4154));
    assert_eq!(gate, models::cc::Gate::OPEN, "no CNP yet: the gate stays open");
    assert_eq!(rp.rate(), Some(Rate::gbps(400)));
    rp.on_cnp(t, &mut gate);
    // Rc = 200 Gbps: a 4,154 B frame takes 4,154 x 8 / 200e9 s = 166,160 ps.
    assert_eq!(gate.wake_at, t + SimTime::from_us(55));
    rp.on_send(t, &mut gate, &sent(t, 4154));
    assert_eq!(gate.next_send, t + SimTime::from_ps(166_160));
    assert_eq!(rp.rate(), Some(Rate::gbps(200)));
    // The timer's first event: fast recovery to 300 Gbps.
    rp.on_timer(gate.wake_at, &mut gate);
    assert_eq!(rp.rate(), Some(Rate::gbps(300)));
    assert_eq!(gate.wake_at, t + SimTime::from_us(110));
}

#[test]
fn config_defaults_ron_and_checks() {
    let c: DcqcnConfig = ron::from_str("()").unwrap();
    assert_eq!(c, DcqcnConfig::default());
    assert_eq!(c.EwmaGain, 1.0 / 256.0);
    assert_eq!(c.RpTimer, Duration::from_us(55));
    assert!(c.validate().is_ok());
    let field = |c: DcqcnConfig| c.validate().unwrap_err().field;
    let d = DcqcnConfig::default;
    assert_eq!(field(DcqcnConfig { EwmaGain: 0.0, ..d() }), "EwmaGain");
    assert_eq!(
        field(DcqcnConfig {
            EwmaGain: f64::NAN,
            ..d()
        }),
        "EwmaGain"
    );
    assert_eq!(field(DcqcnConfig { EwmaGain: 1.5, ..d() }), "EwmaGain");
    assert_eq!(
        field(DcqcnConfig {
            RateOnFirstCnp: 0.0,
            ..d()
        }),
        "RateOnFirstCnp"
    );
    assert_eq!(
        field(DcqcnConfig {
            InitialAlpha: -0.1,
            ..d()
        }),
        "InitialAlpha"
    );
    assert_eq!(
        field(DcqcnConfig {
            RpTimer: Duration::from_us(0),
            ..d()
        }),
        "RpTimer"
    );
    assert_eq!(
        field(DcqcnConfig {
            AlphaResumInterval: Duration::from_us(0),
            ..d()
        }),
        "AlphaResumInterval"
    );
    assert_eq!(
        field(DcqcnConfig {
            ByteCounter: Size(0),
            ..d()
        }),
        "ByteCounter"
    );
    assert_eq!(
        field(DcqcnConfig {
            MinRate: Rate(0),
            ..d()
        }),
        "MinRate"
    );
    let e = ron::from_str::<DcqcnConfig>("(RpTimr: \"1us\")")
        .unwrap_err()
        .to_string();
    assert!(e.contains("RpTimr"), "{e}");
    assert_eq!(
        c.feedback(),
        models::cc::Feedback {
            cnp: true,
            ecn_echo: false,
            int: false
        }
    );
}
