//! The summary's goodput is the payload delivered in the recording window, so it never exceeds
//! the payload line rate, however short the window.

use rdmasim_tests::*;

#[test]
fn goodput_never_exceeds_the_payload_line_rate_in_a_short_window() {
    // many-connections keeps several WQEs per pair on the wire at once: counting whole WQEs
    // completed in a 0.5 ms window credited those that crossed the fabric mostly before it
    // (408 Gbps printed on a 400 Gbps link). A Responder's NIC accepts at most the link's rate
    // of frames; full frames carry 4,096 payload bytes in 4,154: 400 x 4,096 / 4,154 Gbps.
    let (o, _dir) = run_scenario(&scenario_path("many-connections.ron"), &["simulation.RunTime=0.0005"]);
    let bound = 400.0 * 4096.0 / 4154.0;
    // And each pair is busy (its connections keep the link nearly full; ECMP collisions in the
    // spine cost some pairs up to a fifth).
    assert_goodput_between(&o.summary, 0.75 * bound, bound);
    for p in &o.summary.pairs {
        assert_eq!(p.gbps, p.bytes as f64 * 8.0 / 0.0005 / 1e9);
    }
}
