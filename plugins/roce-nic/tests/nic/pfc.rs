//! A slow receiver: a Responder whose PCIe link cannot write what its port takes in holds the
//! data in its receive pool, sends PFC PAUSE when the pool passes XOFF, and nothing is lost.

use crate::common::*;
use engine::prelude::*;
use models::fabric::SwitchConfig;
use roce_nic::RoceNicConfig;
use testkit::fabric::switch_totals;

#[test]
fn a_responder_with_slow_pcie_sends_pfc_and_nothing_is_dropped() {
    // PCIe at 100 Gbps, a quarter of the 400 Gbps port. The PCIe settings are the NIC's, so
    // every host has them: each Initiator's fetch also runs at most at 100 x 256 / 280 = 91.4
    // Gbps of payload. Two Initiators into one Responder therefore offer it 182.9 Gbps of
    // payload (well under its 400 Gbps port: the switch does not congest first) while it writes
    // 91.4 Gbps to host memory: its receive pool grows at about 91 Gbps, and passes XOFF (half
    // of the class 0 pool of 2 MiB, 1 MiB) after about 92 us, while 2 x 10 x 250,000 B = 5 MB
    // is on its way.
    let mut nic = RoceNicConfig::default();
    nic.Pcie.Rate = Rate::gbps(100);
    const N: u64 = 10;
    let mut app = star_app(
        3,
        nic.clone(),
        SwitchConfig::default(),
        DriverConfig::new(vec![(0, 1), (2, 1)], N),
        Tap::default(),
    );
    run(&mut app, SimTime::from_us(1_500));
    let w = &app.world;
    assert_each_completes_once(w);
    let r = nic_counters(w, 1);
    assert!(r.pfc_pause_sent > 0, "the Responder's NIC sent no PAUSE: {r:?}");
    // It resumed every pause once its writes drained the pool to XON.
    assert_eq!(r.pfc_resume_sent, r.pfc_pause_sent);
    let pool = nic.IngressBufferManager.as_buffer().pools()[0];
    let xoff = (pool as f64 * nic.IngressBufferManager.PfcXoffFraction) as u64;
    assert!(r.ingress_peak[0] > xoff && r.ingress_peak[0] <= pool, "{r:?}");
    // Zero drops anywhere: in the NICs, in the switch, and no resend.
    for h in 0..3 {
        let c = nic_counters(w, h);
        assert_eq!(
            (c.ingress_drops, c.retransmitted_packets, c.timeouts),
            (0, 0, 0),
            "host {h}"
        );
    }
    let sw = switch_totals(w);
    assert_eq!((sw.drops, sw.headroom_drops), (0, 0));
    // The switch obeyed: it received the PAUSEs on its port to the Responder.
    assert_eq!(sw.pfc_pause_received, r.pfc_pause_sent);
    assert_eq!(r.payload_bytes_received, 2 * N * WQE_BYTES);
}
