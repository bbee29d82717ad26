//! The doorbell's share of a WQE's latency on the default scenario (`MaxPendingWQEs` 10): the
//! PCIe host-to-NIC direction serves the doorbell from when it is rung, not after DMA read data
//! that was reserved earlier for a later time, so `doorbell_usec` is the doorbell's own transfer
//! time except where doorbells rung before it are genuinely in the way.

use rdmasim_tests::{Csv, run_scenario, scenario_path, usec_ps};

/// `DoorbellPayloadSize` 64 B plus the 28 B doorbell header (scala-rdma `doorbell_bytes`).
const DOORBELL_BYTES: u64 = 64 + 28;
/// The PCIe defaults (models::pcie::PcieConfig): 504 Gbps, 24 B per TLP, 250 ns one way.
const PCIE_BPS: u64 = 504_000_000_000;
const TLP_OVERHEAD_BYTES: u64 = 24;
const PCIE_LATENCY_PS: u64 = 250_000;
const MAX_PENDING: u64 = 10;

#[test]
fn every_doorbell_takes_its_own_transfer_time() {
    // 92 B fit one TLP (MPS 256 B): 116 B on the wire, 928 bits at 504 Gbps = 1,841.3 ps,
    // rounded up to 1,842 ps, then 250 ns: 251.842 us-digits, where the old single busy-until
    // model gave about 1.64 us (behind the first fetch's data).
    let ser = ((DOORBELL_BYTES + TLP_OVERHEAD_BYTES) * 8 * 1_000_000_000_000).div_ceil(PCIE_BPS);
    let own = ser + PCIE_LATENCY_PS;
    assert_eq!(own, 251_842);

    let (_outcome, dir) = run_scenario(&scenario_path("default.ron"), &["simulation.RunTime=0.002"]);
    let perf = Csv::read(&dir.file("default-rdma-perf-0.csv"));
    let (bell, id) = (perf.col("doorbell_usec"), perf.col("wqe_id"));
    let mut later = 0;
    for r in &perf.rows {
        let wqe: u64 = r[id].parse().expect("a WQE number");
        let got = usec_ps(&r[bell]);
        // The bound. The first MaxPendingWQEs WQEs of a connection are rung at one instant, so
        // the k-th genuinely waits for the k - 1 doorbells rung before it (FIFO among transfers
        // ready together): exactly (k - 1) doorbell times more. Every later WQE is rung when
        // one completes; the NIC (one connection per host here) has sent all the completed
        // WQE's data by then and the next one's fetched data is reserved at least a request
        // plus 250 ns ahead, so the link is idle for the doorbell and it costs its own time.
        let ahead = if wqe <= MAX_PENDING {
            wqe - 1
        } else {
            later += 1;
            0
        };
        let want = own + ahead * ser;
        assert_eq!(got, want, "WQE {wqe}: doorbell_usec {} in {r:?}", r[bell]);
    }
    // The rows after the first window are most of them, so the rule above was really tested.
    assert!(
        later > 10 * perf.rows.len() / 11 && later > 500,
        "{later} of {} rows",
        perf.rows.len()
    );
}
