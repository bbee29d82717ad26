//! The congestion-control contract suite (`testkit::cc_contract`) on this controller, hosted by
//! the RoCE NIC, and what makes it a window: a small one caps the bytes in flight and the rate.

use engine::prelude::*;
use testkit::cc_contract::{CcNic, Controller, Hook, goodput_gbps, run};

/// The RoCE NIC, registered with the program's other built-in models; every 16th packet
/// acknowledged, so ACKs flow while a long WRITE is on the wire.
const ROCE_NIC: CcNic = CcNic {
    register: rdmasim::scenario::register_builtins,
    ron: |cc| format!("RoceNic((AckEveryPackets: 16, CongestionControl: {cc}))"),
    // The RoCE NIC's default `CnpInterval`.
    cnp_interval: SimTime::from_us(50),
};

/// A window that does not limit a lone queue pair (the suite's rate check wants the port rate).
const FIXED_WINDOW: Controller = Controller {
    name: fixed_window_cc::NAME,
    register: fixed_window_cc::register,
    ron: |_| "FixedWindow((Bytes: \"1MiB\"))".into(),
    paces_at: |_, port| port,
};

testkit::cc_contract_suite!(fixed_window, super::FIXED_WINDOW, super::ROCE_NIC);

/// 128 KiB, 31 full frames: more than the 16 packets between ACKs, fewer than a round trip at
/// the port rate holds.
const SMALL: u64 = 128 << 10;

#[test]
fn a_small_window_caps_bytes_in_flight_and_the_rate() {
    let small = Controller {
        ron: |_| format!("FixedWindow((Bytes: {SMALL}))"),
        ..FIXED_WINDOW
    };
    let o = run(&small, &ROCE_NIC, 400, 2, vec![(0, 1)], false);
    let mut sends = 0;
    for call in o.qps.iter().flat_map(|r| &r.calls) {
        if let Hook::Send(s) = call.hook {
            // A packet starts only while less than the window is in flight.
            assert!(s.in_flight - (s.bytes as u64) < SMALL, "{s:?}");
            sends += 1;
        }
    }
    assert!(sends > 1000, "{sends} packets sent");
    // Little's law: at most SMALL wire bytes are in flight, and each stays in flight at least a
    // round trip's propagation and forwarding, 2 x (2 x 1 us + 500 ns) = 5 us, so the wire
    // carries at most SMALL / 5 us; payload is 4,096 of a full frame's 4,154 bytes.
    let bound = SMALL as f64 * 8.0 / 5e-6 / 1e9 * 4096.0 / 4154.0;
    let gbps = goodput_gbps(&o);
    assert!(gbps <= bound && gbps > 10.0, "{gbps} Gbps, at most {bound:.1}");
}
