//! The spec's worked example ("WQEs", "Worked example: one WQE on the Scala RoCE NIC") and one
//! WQE's completion time, term by term, on a 2-host star with the defaults.

use crate::Figures;
use crate::common::*;
use engine::prelude::*;
use models::fabric::SwitchConfig;
use models::wire::{CM_MESSAGE_BYTES, Opcode, ROCE_ACK_BYTES};
use roce_nic::RoceNicConfig;

/// One WQE of 250,000 B from host 0 to host 1, defaults everywhere, traced.
fn one_wqe(wqes: u64) -> App {
    let mut app = star_app(
        2,
        RoceNicConfig::default(),
        SwitchConfig::default(),
        DriverConfig::new(vec![(0, 1)], wqes),
        Tap::tracing(),
    );
    run(&mut app, SimTime::from_us(200));
    app
}

#[test]
fn segmentation_opcodes_and_bytes_on_the_wire() {
    let app = one_wqe(1);
    let w = &app.world;
    assert_each_completes_once(w);
    let seen = &w.resource::<Tap>().seen;
    // ceil(250,000 / 4,096) = ceil(61.04) = 62 packets: 61 full, the last 250,000 - 61 x 4,096
    // = 144 bytes.
    assert_eq!(seen.len(), 62);
    let payloads: Vec<u32> = seen.iter().map(|s| s.pkt.payload).collect();
    assert!(payloads[..61].iter().all(|&p| p == 4096));
    assert_eq!(payloads[61], 144);
    assert_eq!(payloads.iter().map(|&p| p as u64).sum::<u64>(), WQE_BYTES);
    // Opcodes: 1 WRITE FIRST, 60 WRITE MIDDLE, 1 WRITE LAST; AckReq only on the last; PSNs in
    // order from 0; every frame carries 58 B of headers.
    assert_eq!(seen[0].pkt.opcode, Opcode::RC_RDMA_WRITE_FIRST);
    assert!(seen[1..61].iter().all(|s| s.pkt.opcode == Opcode::RC_RDMA_WRITE_MIDDLE));
    assert_eq!(seen[61].pkt.opcode, Opcode::RC_RDMA_WRITE_LAST);
    assert_eq!(seen.iter().filter(|s| s.pkt.ack_req).count(), 1);
    assert!(seen[61].pkt.ack_req);
    for (i, s) in seen.iter().enumerate() {
        assert_eq!(s.pkt.psn, i as u32);
        assert_eq!(s.pkt.bytes, s.pkt.payload + 58);
        // Class 0 is sent as CS0.
        assert_eq!(s.pkt.dscp(), 0);
    }
    // Bytes on the wire: 250,000 + 62 x 58 = 253,596, counted by the Initiator's egress link,
    // which also carried the connection request and acknowledgment (322 B each).
    let wire = host_egress(w, 0);
    assert_eq!(wire.data_packets, 62);
    assert_eq!(wire.packets, 62 + 2);
    assert_eq!(wire.bytes - 2 * CM_MESSAGE_BYTES as u64, 253_596);
    let c = nic_counters(w, 0);
    assert_eq!((c.data_packets_sent, c.data_bytes_sent), (62, 253_596));
    // Serialization: 253,596 B x 8 / 400 Gbps = 5,071,920 ps = 5.07192 us.
    assert_eq!(Rate::gbps(400).serialization_time(253_596), SimTime(5_071_920));
    // The Responder's NIC answered with one ACK (62 B) and took all the payload in order.
    let r = nic_counters(w, 1);
    assert_eq!((r.acks_sent, r.naks_sent, r.out_of_sequence), (1, 0, 0));
    assert_eq!(r.payload_bytes_received, WQE_BYTES);
    let back = host_egress(w, 1);
    assert_eq!(back.bytes, CM_MESSAGE_BYTES as u64 + ROCE_ACK_BYTES as u64);
}

#[test]
fn the_doorbell_puts_92_bytes_on_host_to_nic_per_wqe() {
    const N: u64 = 3;
    let app = one_wqe(N);
    let w = &app.world;
    assert_each_completes_once(w);
    let link = pcie(w, 0);
    // Host to NIC carries the doorbells and the DMA read completions (the payload, fetched once
    // each: no loss here). Its `bytes` are payload bytes, TLP overhead apart.
    assert_eq!(link.host_to_nic.bytes - N * WQE_BYTES, 92 * N);
    // Transfers: one doorbell and one DMA read per packet (62) per WQE.
    assert_eq!(link.host_to_nic.transfers, N * (1 + 62));
    // TLP overhead: 24 B on the doorbell's one TLP, and per WQE 61 reads of 4,096 B in 16
    // completions of 256 B plus one read of 144 B in one completion.
    assert_eq!(link.host_to_nic.overhead_bytes, N * 24 * (1 + 61 * 16 + 1));
    // NIC to host: only read requests (headers, no payload): 8 per 4,096 B read (MRRS 512 B), 1
    // for the 144 B one.
    assert_eq!(link.nic_to_host.bytes, 0);
    assert_eq!(link.nic_to_host.overhead_bytes, N * 24 * (61 * 8 + 1));
    // Nothing of the doorbell reaches the network: the Responder's PCIe saw only payload writes.
    let far = pcie(w, 1);
    assert_eq!((far.nic_to_host.bytes, far.host_to_nic.bytes), (N * WQE_BYTES, 0));
}

#[test]
fn one_wqe_completes_at_doorbell_fetch_serialization_path_and_ack() {
    let app = one_wqe(1);
    let w = &app.world;
    let f = Figures::defaults();
    let log = w.resource::<DriverLog>();
    // Setup: request out and response back, 322 B each way across the idle star.
    let across_cm = f.across(CM_MESSAGE_BYTES as u64);
    assert_eq!(log.established, vec![(0, across_cm + across_cm)]);
    let done = log.completions[0];
    let t = done.times;
    assert_eq!(t.posted, across_cm + across_cm, "the driver posts on `established`");
    assert_eq!(done.at, t.completed);
    assert!(t.monotonic());

    // Doorbell: (92 + 24) B at 504 Gbps = 1,841.3 -> 1,842 ps, plus L = 250 ns.
    let doorbell = f.doorbell();
    assert_eq!(doorbell, SimTime(1_842 + 250_000));
    // Wait at the NIC: none, the connection is idle.
    // Fetch: the first packet's read, 8 requests of 24 B (192 B: 3,048 ps), L, then 16
    // completions of 256 + 24 B (4,480 B: 71,112 ps), L. Only the first packet's fetch shows:
    // PCIe carries 4,096 B of payload in 4,480 B, 460.8 Gbps of payload at 504 Gbps
    // (71,112 ps a packet), while the port takes 83,080 ps per 4,154 B frame, so with a 16-packet
    // fetch window every later packet is at the NIC before the port is free for it.
    let fetch = f.fetch(4096);
    assert_eq!(fetch, SimTime(3_048 + 250_000 + 71_112 + 250_000));
    assert!(f.p(f.tlp_bytes(4096, 256)) < f.s(4096 + 58));
    // Network: s(4,154) = 83,080 ps to the switch, D + F, then the switch's port sends the
    // whole WQE back to back (5,071,920 ps), then D.
    let network = f.network(WQE_BYTES);
    assert_eq!(network, SimTime(83_080 + 1_500_000 + 5_071_920 + 1_000_000));
    // The ACK (62 B) back across the idle star: s(62) + D + F + s(62) + D.
    let ack = f.across(ROCE_ACK_BYTES as u64);
    assert_eq!(ack, SimTime(1_240 + 1_500_000 + 1_240 + 1_000_000));

    assert_eq!(
        t.breakdown(),
        [doorbell, SimTime::ZERO, fetch, network, ack],
        "(doorbell, wait, fetch, network, ack)"
    );
    assert_eq!(t.latency(), doorbell + fetch + network + ack);
    assert_eq!(t.latency(), SimTime(10_983_482));

    // The fetch never gated transmission: the data frames left the Initiator back to back,
    // one every s(4,154) from the first.
    let seen = &w.resource::<Tap>().seen;
    for (i, s) in seen.iter().enumerate() {
        assert_eq!(
            s.pkt.sent_at,
            t.first_tx + SimTime(f.s(4154).0 * i as u64),
            "packet {i}"
        );
    }
    assert_eq!(seen[61].at, t.last_rx);
}

#[test]
fn transmit_bursts_do_not_move_any_frame() {
    // `TxBurstPackets` only saves wake-up events: with nothing to pause the port, a WQE's
    // frames leave at the same instants whether the scheduler decides one frame at a time or
    // queues four at once.
    let times = |burst: u32| {
        let nic = RoceNicConfig {
            TxBurstPackets: burst,
            ..RoceNicConfig::default()
        };
        let mut app = star_app(
            2,
            nic,
            SwitchConfig::default(),
            DriverConfig::new(vec![(0, 1)], 3),
            Tap::tracing(),
        );
        let stats = run(&mut app, SimTime::from_us(200));
        let w = &mut app.world;
        let done: Vec<_> = w.resource::<DriverLog>().completions.iter().map(|d| d.times).collect();
        let sent: Vec<_> = w.resource::<Tap>().seen.iter().map(|s| (s.pkt.sent_at, s.at)).collect();
        (done, sent, stats.events)
    };
    let (one, four) = (times(1), times(RoceNicConfig::DEFAULT_TX_BURST_PACKETS));
    assert_eq!(one.0.len(), 3);
    assert_eq!(one.0, four.0);
    assert_eq!(one.1, four.1);
    assert!(four.2 < one.2, "bursts cost fewer events: {} vs {}", four.2, one.2);
}
