//! The state machine against the paper's equations, figures derived by hand. Throughout:
//! B = 400 Gbps = 50e9 B/s, T = 10 us, so B x T = 500,000 B; W_AI = RateAI x T =
//! 160 Mbps x 10 us = 200 B; MinRate x T = 100 Mbps x 10 us = 125 B; eta = 0.95, maxStage = 5.

use super::*;
use engine::prelude::*;
use models::cc::{CcModel, IntEcho, Sent};
use models::int::IntHop;

fn cfg() -> HpccConfig {
    HpccConfig {
        BaseRtt: Duration::from_us(10),
        ..HpccConfig::default()
    }
}

fn hpcc() -> Hpcc {
    Hpcc::new(&cfg(), Rate::gbps(400))
}

fn hop(us: f64, tx_bytes: u64, qlen: u64) -> IntHop {
    IntHop {
        time: SimTime((us * 1e6).round() as u64),
        tx_bytes,
        qlen,
        rate: Rate::gbps(400),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs().max(1.0)
}

fn sent(psn: u32, bytes: u32) -> Sent {
    Sent {
        at: SimTime::from_us(1),
        psn,
        bytes,
        payload: bytes - 100,
        retransmit: false,
        in_flight: bytes as u64,
    }
}

#[test]
fn starts_at_line_rate_with_a_bdp_window() {
    let h = hpcc();
    assert!(close(h.w, 500_000.0) && close(h.wc, 500_000.0));
    assert_eq!((h.u, h.inc_stage), (1.0, 0));
    // rate = W / T = 500,000 B / 10 us = 50e9 B/s = 400 Gbps.
    assert_eq!(h.rate(), Some(Rate::gbps(400)));
    let mut gate = Gate::OPEN;
    let qp = models::cc::QpInfo {
        host: 0,
        qpn: 0,
        connection: 0,
        remote_host: 1,
        class: 0,
        port_rate: Rate::gbps(400),
    };
    cfg().new_qp(&qp, &mut gate);
    assert_eq!(gate.window, 500_000);
}

#[test]
fn utilisation_per_hop_is_queue_over_bdp_plus_tx_rate_over_b() {
    let mut h = hpcc();
    h.measure(&[hop(0.0, 0, 50_000), hop(0.0, 0, 0)]);
    // Hop 1: 50,000 B sent in 1 us = 50e9 B/s, txRate / B = 1; min(qlen) = min(100,000,
    // 50,000) = 50,000 B, over B x T = 500,000 B: 0.1. u = 1.1.
    // Hop 2: 25,000 B in 1 us: 0.5, no queue: u = 0.5. The larger wins, with its tau = 1 us.
    let (u, tau) = h.measure(&[hop(1.0, 50_000, 100_000), hop(1.0, 25_000, 0)]).unwrap();
    assert!(close(u, 1.1), "{u}");
    assert!(close(tau, 1e6), "{tau}");
    // The records just read are the next ones' reference: the same again says nothing.
    assert_eq!(h.measure(&[hop(1.0, 50_000, 100_000)]), None);
}

#[test]
fn the_estimate_is_an_ewma_over_the_base_rtt() {
    let mut h = hpcc();
    // U = (1 - tau/T) U + (tau/T) u: tau = 1 us is 0.1 T; U = 0.9 x 1 + 0.1 x 1.1 = 1.01.
    h.fold(1.1, 1e6);
    assert!(close(h.u, 1.01), "{}", h.u);
    // tau is capped at T: a record a whole 20 us old replaces U by u.
    h.fold(0.5, 20e6);
    assert!(close(h.u, 0.5), "{}", h.u);
}

#[test]
fn above_eta_the_window_shrinks_multiplicatively() {
    let mut h = hpcc();
    h.u = 1.01;
    // W = W_c / (U / eta) + W_AI = 500,000 x 0.95 / 1.01 + 200 = 470,297.03 + 200.
    let w = h.compute_window(true);
    assert!(close(w, 470_497.029_702_97), "{w}");
    assert!(close(h.wc, w) && h.inc_stage == 0);
    // rate = W / T: 470,497.03 B / 10 us = 47.05e9 B/s = 376.40 Gbps.
    assert!(close(h.rate_bps(), 376.397_623_762e9), "{}", h.rate_bps());
}

#[test]
fn below_eta_it_adds_w_ai_until_max_stage_then_multiplies() {
    let mut h = hpcc();
    h.wc = 100_000.0;
    h.u = 0.5;
    // U / eta = 0.5263 < 1: W = W_c + 200, five times, incStage 1..5.
    for stage in 1..=5 {
        let w = h.compute_window(true);
        assert!(close(w, 100_000.0 + 200.0 * stage as f64), "{w}");
        assert_eq!(h.inc_stage, stage);
    }
    // incStage = maxStage: W = 101,000 / (0.5 / 0.95) + 200 = 101,000 x 1.9 + 200 = 192,100.
    let w = h.compute_window(true);
    assert!(close(w, 192_100.0), "{w}");
    assert_eq!(h.inc_stage, 0);
    // The window stays within [MinRate x T, B x T] = [125, 500,000] B: capped at B x T.
    h.wc = 400_000.0;
    h.inc_stage = 5;
    assert!(close(h.compute_window(false), 500_000.0));
    // A huge U leaves W_AI: 400,000 x 0.95 / 1e6 + 200 = 200.38 B (above MinRate x T here).
    h.u = 1e6;
    assert!(close(h.compute_window(false), 200.38));
}

#[test]
fn the_reference_window_moves_once_per_rtt() {
    let mut h = hpcc();
    let mut gate = Gate::OPEN;
    let now = SimTime::from_us(1);
    for psn in 0..10 {
        h.on_send(now, &mut gate, &sent(psn, 4196));
    }
    let echo = |h: &mut Hpcc, gate: &mut Gate, psn, hops: &[IntHop]| h.on_int(now, gate, &IntEcho { psn, hops });
    // The first ACK only keeps its records; the update waits for an ACK of PSN 10 or later.
    echo(&mut h, &mut gate, 0, &[hop(0.0, 0, 0)]);
    assert!(close(h.w, 500_000.0));
    // PSN 1, 1 us later, port at line rate with 100,000 B queued both times: u = 1 + 0.2,
    // U = 0.9 + 0.12 = 1.02; fast react: W = 500,000 x 0.95 / 1.02 + 200, W_c stays.
    echo(&mut h, &mut gate, 1, &[hop(0.0, 0, 100_000)]);
    echo(&mut h, &mut gate, 1, &[hop(1.0, 50_000, 100_000)]);
    let fast = 500_000.0 * 0.95 / 1.02 + 200.0;
    assert!(close(h.w, fast), "{}", h.w);
    assert!(close(h.wc, 500_000.0) && h.inc_stage == 0);
    assert_eq!(gate.window, fast.ceil() as u64);
    // The first ACK set the mark at PSN 10 (snd_nxt then): PSN 10 makes the RTT update.
    for psn in 10..20 {
        h.on_send(now, &mut gate, &sent(psn, 4196));
    }
    echo(&mut h, &mut gate, 10, &[hop(2.0, 100_000, 100_000)]);
    // u = 1.2 again, U = 0.9 x 1.02 + 0.12 = 1.038; W = 500,000 x 0.95 / 1.038 + 200.
    let w = 500_000.0 * 0.95 / 1.038 + 200.0;
    assert!(close(h.w, w) && close(h.wc, w), "{} {}", h.w, h.wc);
    // The next update needs PSN 20: PSN 15 reacts fast from the new W_c.
    echo(&mut h, &mut gate, 15, &[hop(3.0, 150_000, 100_000)]);
    assert!(close(h.wc, w));
}

#[test]
fn packets_are_paced_at_w_over_t() {
    let mut h = hpcc();
    let mut gate = Gate::OPEN;
    // W = B x T: 4,196 B at 400 Gbps is 4,196 x 20 ps = 83,920 ps.
    h.on_send(SimTime::ZERO, &mut gate, &sent(0, 4196));
    assert_eq!(gate.next_send, SimTime::from_us(1) + SimTime(83_920));
    // Half the window, half the rate: twice the gap.
    h.w = 250_000.0;
    h.on_send(SimTime::ZERO, &mut gate, &sent(1, 4196));
    assert_eq!(gate.next_send, SimTime::from_us(1) + SimTime(167_840));
    assert_eq!(h.rate(), Some(Rate::gbps(200)));
}

#[test]
fn config_defaults_ron_and_checks() {
    let c: HpccConfig = ron::from_str("()").unwrap();
    assert_eq!(c, HpccConfig::default());
    assert_eq!((c.UTarget, c.MaxStage), (0.95, 5));
    assert_eq!(c.RateAI, Rate(160_000_000));
    assert!(c.validate().is_ok());
    assert!(c.feedback().int && !c.feedback().cnp && !c.feedback().ecn_echo);
    let bad = |ron: &str| ron::from_str::<HpccConfig>(ron).unwrap().validate().unwrap_err().field;
    assert_eq!(bad("(UTarget: 1.5)"), "UTarget");
    assert_eq!(bad("(UTarget: 0.0)"), "UTarget");
    assert_eq!(bad("(BaseRtt: 0)"), "BaseRtt");
    assert_eq!(bad("(BaseRtt: 2)"), "BaseRtt");
    let nan = HpccConfig {
        UTarget: f64::NAN,
        ..HpccConfig::default()
    };
    assert_eq!(nan.validate().unwrap_err().field, "UTarget");
    assert!(
        ron::from_str::<HpccConfig>("(Eta: 1)")
            .unwrap_err()
            .to_string()
            .contains("Eta")
    );
}
