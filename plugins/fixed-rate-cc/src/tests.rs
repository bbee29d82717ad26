use super::*;

fn sent(at: SimTime, bytes: u32) -> Sent {
    Sent {
        at,
        psn: 0,
        bytes,
        payload: bytes.saturating_sub(58),
        retransmit: false,
        in_flight: bytes as u64,
    }
}

fn pacer(rate: Rate) -> FixedRate {
    FixedRate {
        rate,
        counts: HookCounts::default(),
    }
}

#[test]
fn next_send_is_the_frame_at_the_rate() {
    // 100 Gbps is 80 ps a byte: a full 4,154 B frame takes 332,320 ps, a 202 B last frame
    // (144 B of payload) 16,160 ps.
    let p = pacer(Rate::gbps(100));
    let t = SimTime::from_us(7);
    assert_eq!(p.next_send(&sent(t, 4154)), t + SimTime::from_ps(332_320));
    assert_eq!(p.next_send(&sent(t, 202)), t + SimTime::from_ps(16_160));
    // 400 Gbps: 20 ps a byte, the port's own serialization (the pacer never holds it back).
    assert_eq!(
        pacer(Rate::gbps(400)).next_send(&sent(t, 4154)),
        t + SimTime::from_ps(83_080)
    );
    // 3 Gbps does not divide 8e12 ps: rounded up, 8,000/3 = 2,666.67 ps a byte, 4,154 B is
    // 11,077,333.3 ps, so 11,077,334.
    assert_eq!(
        pacer(Rate(3_000_000_000)).next_send(&sent(t, 4154)),
        t + SimTime::from_ps(11_077_334)
    );
}

#[test]
fn on_send_sets_the_gate_and_the_rest_only_count() {
    let mut p = pacer(Rate::gbps(100));
    let mut gate = Gate::OPEN;
    let t = SimTime::from_us(1);
    p.on_send(t, &mut gate, &sent(t, 4154));
    assert_eq!(gate.next_send, t + SimTime::from_ps(332_320));
    let before = gate;
    p.on_cnp(t, &mut gate);
    p.on_ecn_echo(t, &mut gate, &EcnEcho { psn: 0, marked: 3 });
    p.on_nak(t, &mut gate, &Nak { psn: 0 });
    p.on_timeout(t, &mut gate);
    assert_eq!(gate, before);
    assert_eq!(
        p.counts,
        HookCounts {
            sends: 1,
            cnps: 1,
            ecn_echoes: 1,
            ecn_marked: 3,
            naks: 1,
            timeouts: 1,
            ..HookCounts::default()
        }
    );
}

#[test]
fn config_defaults_ron_and_checks() {
    let c: FixedRateConfig = ron::from_str("()").unwrap();
    assert_eq!(c.Rate, Rate::gbps(100));
    assert!(c.validate().is_ok());
    // RON refuses a rate of 0 itself; a config built in code is checked.
    let e = ron::from_str::<FixedRateConfig>("(Rate: 0)").unwrap_err().to_string();
    assert!(e.contains("at least 1 bit"), "{e}");
    let c = FixedRateConfig { Rate: Rate(0) };
    assert_eq!(c.validate().unwrap_err().field, "Rate");
    assert!(
        ron::from_str::<FixedRateConfig>("(Rte: 1)")
            .unwrap_err()
            .to_string()
            .contains("Rte")
    );
    assert_eq!(
        c.feedback(),
        Feedback {
            cnp: true,
            ecn_echo: true,
            int: false
        }
    );
}
