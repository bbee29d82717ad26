//! The congestion-control contract suite (`testkit::cc_contract`) on the workspace's
//! controllers, `None`, `FixedRate`, `Dcqcn` and `Hpcc`, hosted by the RoCE NIC; and the loader's messages for bad
//! settings.

use engine::prelude::*;
use testkit::cc_contract::{CcNic, Controller, NONE};

/// The RoCE NIC, every 16th packet acknowledged so that ACKs (and their ECN echoes) flow while a
/// long WRITE is on the wire.
const ROCE_NIC: CcNic = CcNic {
    register: rdmasim::scenario::register_builtins,
    ron: |cc| format!("RoceNic((AckEveryPackets: 16, CongestionControl: {cc}))"),
    cnp_interval: SimTime::from_us(roce_nic::RoceNicConfig::DEFAULT_CNP_INTERVAL_US),
};

const FIXED_RATE: Controller = Controller {
    name: "FixedRate",
    register: rdmasim::scenario::register_builtins,
    ron: |gbps| format!("FixedRate((Rate: \"{gbps}Gbps\"))"),
    paces_at: |gbps, port| gbps.min(port),
};

/// DCQCN holds a lone queue pair to nothing (no marks, no CNP): it runs at the port's rate.
const DCQCN: Controller = Controller {
    name: "Dcqcn",
    register: rdmasim::scenario::register_builtins,
    ron: |_| "Dcqcn(())".into(),
    paces_at: |_, port| port,
};

/// HPCC with UTarget 1 (a lone queue pair at line rate). Its window is its rate x `BaseRtt`, so
/// `BaseRtt` is the round trip the sender sees: the star's 5.17 us (4 x 1 us of links, 2 x 0.5 us
/// of forwarding, 2 x 84 ns of serialization) plus the 15 packets (1.26 us at line rate) an ACK
/// of every 16th packet waits for, 6.5 us. Its frames carry the 42 B INT header: 4,196 B on the
/// wire per 4,096 B of payload, where the suite's goodput counts 4,154, so line rate is
/// 400 x 4,154 / 4,196 = 396 Gbps of 4,154 B frames.
const HPCC: Controller = Controller {
    name: "Hpcc",
    register: rdmasim::scenario::register_builtins,
    ron: |_| "Hpcc((UTarget: 1.0, BaseRtt: \"6.5us\"))".into(),
    paces_at: |_, port| port * 4154 / (4154 + models::int::HEADER_BYTES as u64),
};

testkit::cc_contract_suite!(none, NONE, super::ROCE_NIC);
testkit::cc_contract_suite!(hpcc, super::HPCC, super::ROCE_NIC);
testkit::cc_contract_suite!(fixed_rate, super::FIXED_RATE, super::ROCE_NIC);
testkit::cc_contract_suite!(dcqcn, super::DCQCN, super::ROCE_NIC);

#[test]
fn bad_settings_are_reported_at_their_field() {
    let text =
        "(name: \"cc\", topology: Star(hosts: 2),\n nic: RoceNic((CnpClass: 9)),\n applications: [ScalaRdma(())])";
    let e = rdmasim::scenario::load_text("cc.ron", text, &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("nic.CnpClass") && e.contains("cc.ron:2:"), "{e}");
    let text = "(name: \"cc\", topology: Star(hosts: 2),\n nic: RoceNic((CongestionControl: Timely(()))),\n applications: [ScalaRdma(())])";
    let e = rdmasim::scenario::load_text("cc.ron", text, &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("Timely") && e.contains("FixedRate") && e.contains("Dcqcn") && e.contains("cc.ron:2:"),
        "{e}"
    );
    // A DCQCN setting out of range is refused naming its field.
    let text = "(name: \"cc\", topology: Star(hosts: 2),\n nic: RoceNic((CongestionControl: Dcqcn((EwmaGain: 2.0)))),\n applications: [ScalaRdma(())])";
    let e = rdmasim::scenario::load_text("cc.ron", text, &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("nic.CongestionControl.EwmaGain"), "{e}");
    let text = "(name: \"cc\", topology: Star(hosts: 2),\n nic: RoceNic((CongestionControl: FixedRate((Rate: \"fast\")))),\n applications: [ScalaRdma(())])";
    let e = rdmasim::scenario::load_text("cc.ron", text, &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("cc.ron:2:"), "{e}");
}
