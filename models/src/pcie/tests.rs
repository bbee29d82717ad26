use super::*;

#[test]
fn doorbell_is_92_bytes_plus_one_tlp() {
    let cfg = PcieConfig::default();
    let mut link = PcieLink::default();
    let at = link.host_write(&cfg, SimTime::ZERO, 92);
    assert_eq!(link.host_to_nic.bytes, 92);
    assert_eq!(link.host_to_nic.overhead_bytes, 24);
    // (92 + 24) B x 8 / 504 Gbps, rounded up to the picosecond, plus 250 ns.
    let ser = (116u64 * 8 * 1_000_000_000_000).div_ceil(504_000_000_000);
    assert_eq!(at, SimTime(ser + 250_000));
}

#[test]
fn dma_read_pays_requests_then_completions() {
    let cfg = PcieConfig::default();
    let mut link = PcieLink::default();
    let at = link.dma_read(&cfg, SimTime::ZERO, 4096);
    // 8 read requests of 24 B; 16 completions of 256 B + 24 B.
    assert_eq!(link.nic_to_host.overhead_bytes, 8 * 24);
    assert_eq!(link.host_to_nic.bytes, 4096);
    assert_eq!(link.host_to_nic.overhead_bytes, 16 * 24);
    let req = cfg.Rate.serialization_time(192).0 + 250_000;
    let data = cfg.Rate.serialization_time(4096 + 384).0 + 250_000;
    assert_eq!(at, SimTime(req + data));
}

#[test]
fn the_memo_never_changes_a_cost() {
    // One direction used with alternating payloads, chunks, kinds and settings gives what a
    // fresh direction works out for each.
    let fast = PcieConfig {
        Rate: Rate(1_000_000_000_000),
        TlpOverheadBytes: Size(20),
        ..PcieConfig::default()
    };
    let cfgs = [PcieConfig::default(), fast];
    let mut long_lived = PcieDirection::default();
    for i in 0..200u64 {
        let cfg = &cfgs[(i / 7 % 2) as usize];
        let payload = [4096, 4096, 100, 0, 4096, 1][(i % 6) as usize];
        let chunk = [256, 512][(i / 3 % 2) as usize];
        let carried = i % 5 != 0;
        let got = long_lived.cost(cfg, payload, chunk, carried);
        let want = PcieDirection::default().cost(cfg, payload, chunk, carried);
        let overhead = payload.div_ceil(chunk).max(1) * cfg.TlpOverheadBytes.0;
        let wire = if carried { payload + overhead } else { overhead };
        assert_eq!(got, want, "transfer {i}");
        assert_eq!(got, (overhead, cfg.Rate.serialization_time(wire)), "transfer {i}");
    }
}

/// Serialization of `wire` bytes at the default 504 Gbps, rounded up to the picosecond.
fn ser_ps(wire: u64) -> u64 {
    (wire * 8 * 1_000_000_000_000).div_ceil(PcieConfig::DEFAULT_RATE_BPS)
}

const LATENCY_PS: u64 = PcieConfig::DEFAULT_LATENCY_NS * 1000;
/// A doorbell: 92 B in one TLP of 24 B overhead.
const DOORBELL: u64 = 92;
/// A full packet's payload: 4096 B, 8 read requests (MRRS 512 B), 16 completions (MPS 256 B).
const PAYLOAD: u64 = 4096;

fn request_ps() -> u64 {
    ser_ps(8 * 24)
}
fn data_ps() -> u64 {
    ser_ps(PAYLOAD + 16 * 24)
}
fn doorbell_ps() -> u64 {
    ser_ps(DOORBELL + 24)
}

#[test]
fn a_doorbell_goes_before_dma_data_that_is_ready_later() {
    let cfg = PcieConfig::default();
    let mut link = PcieLink::default();
    // The read's requests take the NIC-to-host direction from 0; its data is reserved on
    // host-to-NIC from when they reach the host, 253 ns ahead.
    let data_begin = request_ps() + LATENCY_PS;
    let data_at = link.dma_read(&cfg, SimTime::ZERO, PAYLOAD);
    assert_eq!(data_at, SimTime(data_begin + data_ps() + LATENCY_PS));
    // A doorbell rung at 100 ns finds host-to-NIC idle: it goes at once (in the old single
    // busy-until model it arrived after the data, at data_begin + data + doorbell + latency).
    let rung = 100_000;
    let at = link.host_write(&cfg, SimTime(rung), DOORBELL);
    assert_eq!(at, SimTime(rung + doorbell_ps() + LATENCY_PS));
    // The data's promise stands. A read issued with the doorbell is ready at the host after
    // that data ends (100 + 3 + 250 ns > 253 + 71 ns), and goes from its ready time.
    assert_eq!(link.host_to_nic.busy_until, SimTime(data_begin + data_ps()));
    let next_ready = rung + request_ps() + LATENCY_PS;
    assert!(next_ready > data_begin + data_ps());
    let next = link.dma_read(&cfg, SimTime(rung), PAYLOAD);
    assert_eq!(next, SimTime(next_ready + data_ps() + LATENCY_PS));
}

#[test]
fn a_transfer_that_does_not_fit_a_gap_goes_after() {
    let cfg = PcieConfig::default();
    let data_begin = request_ps() + LATENCY_PS;
    let data_end = data_begin + data_ps();
    // Rung exactly a doorbell's time before the data: it fits, ending as the data begins.
    let mut link = PcieLink::default();
    link.dma_read(&cfg, SimTime::ZERO, PAYLOAD);
    let rung = data_begin - doorbell_ps();
    let at = link.host_write(&cfg, SimTime(rung), DOORBELL);
    assert_eq!(at, SimTime(data_begin + LATENCY_PS));
    // The two blocks merged into one: nothing earlier is remembered.
    assert!(link.host_to_nic.earlier.is_empty());
    assert_eq!(link.host_to_nic.last_start, SimTime(rung));
    // One picosecond later it does not fit, so it waits for the data to finish.
    let mut link = PcieLink::default();
    link.dma_read(&cfg, SimTime::ZERO, PAYLOAD);
    let at = link.host_write(&cfg, SimTime(rung + 1), DOORBELL);
    assert_eq!(at, SimTime(data_end + doorbell_ps() + LATENCY_PS));
}

#[test]
fn a_transfer_takes_the_first_gap_that_holds_it() {
    let cfg = PcieConfig::default();
    let mut link = PcieLink::default();
    // Reads at 0 and at 200 ns leave host-to-NIC two gaps seen from 200 ns: [200 ns, first
    // data) of about 53 ns and [first data's end, second data) of about 129 ns.
    link.dma_read(&cfg, SimTime::ZERO, PAYLOAD);
    let t = 200_000;
    link.dma_read(&cfg, SimTime(t), PAYLOAD);
    let first_end = request_ps() + LATENCY_PS + data_ps();
    let second_begin = t + request_ps() + LATENCY_PS;
    assert!(
        t + data_ps() > request_ps() + LATENCY_PS,
        "a 4 KiB write must not fit the first gap"
    );
    assert!(first_end + data_ps() <= second_begin, "it must fit the second");
    // A 4 KiB host write rung at 200 ns (71 ns) fits only the second gap; a doorbell rung then
    // still fits the first.
    let write = link.host_write(&cfg, SimTime(t), PAYLOAD);
    assert_eq!(write, SimTime(first_end + data_ps() + LATENCY_PS));
    let bell = link.host_write(&cfg, SimTime(t), DOORBELL);
    assert_eq!(bell, SimTime(t + doorbell_ps() + LATENCY_PS));
    // Nothing moved: the second read's data ends where it was promised.
    assert_eq!(link.host_to_nic.busy_until, SimTime(second_begin + data_ps()));
}

#[test]
fn transfers_ready_in_order_are_served_first_in_first_out() {
    // With every transfer ready at its issue time (ready times in issue order) the direction
    // is the plain FIFO it always was: start at max(ready, previous end).
    let cfg = PcieConfig::default();
    let mut link = PcieLink::default();
    let (mut now, mut fifo_end, mut x) = (0u64, 0u64, 1u64);
    for i in 0..2000 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        now += (x >> 33) % 120_000;
        let bytes = [DOORBELL, PAYLOAD, 1000][i % 3];
        let ser = ser_ps(bytes + bytes.div_ceil(256) * 24);
        fifo_end = now.max(fifo_end) + ser;
        let at = link.host_write(&cfg, SimTime(now), bytes);
        assert_eq!(at, SimTime(fifo_end + LATENCY_PS), "transfer {i}");
    }
}

/// The earliest start at or after `ready` where `ser` fits between `busy` intervals: the
/// definition, by brute force over every reservation ever made.
fn earliest_fit(busy: &[(u64, u64)], ready: u64, ser: u64) -> u64 {
    let mut sorted = busy.to_vec();
    sorted.sort_unstable();
    let mut t = ready;
    for &(b, e) in &sorted {
        if e <= t {
            continue;
        }
        if t + ser <= b {
            return t;
        }
        t = t.max(e);
    }
    t
}

#[test]
fn placement_matches_the_definition_with_pruning_and_merging() {
    // A random stream of transfers issued at rising times, ready at once or up to 400 ns
    // later, of random lengths: each starts where the brute-force definition says, so
    // pruning, merging and the fast path change nothing.
    let mut dir = PcieDirection::default();
    let mut all = Vec::new();
    let (mut now, mut x) = (0u64, 7u64);
    let mut next = || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        x >> 33
    };
    for i in 0..5000 {
        now += next() % 50_000;
        let ready = if next() % 3 == 0 { now } else { now + next() % 400_000 };
        let ser = 1 + next() % 80_000;
        let want = earliest_fit(&all, ready, ser);
        let got = dir.place(SimTime(now), SimTime(ready), SimTime(ser));
        assert_eq!(got, SimTime(want), "transfer {i}");
        all.push((want, want + ser));
        // Blocks stay sorted, disjoint and apart (merged when they touch), and all end later.
        let blocks: Vec<_> = dir
            .earlier
            .iter()
            .copied()
            .chain([(dir.last_start, dir.busy_until)])
            .collect();
        assert!(blocks.windows(2).all(|w| w[0].1 < w[1].0), "transfer {i}: {blocks:?}");
        assert!(dir.earlier.iter().all(|b| b.0 < b.1), "transfer {i}: {blocks:?}");
    }
}

#[test]
fn the_nic_pattern_keeps_few_blocks_and_dma_data_in_order() {
    // A NIC fetching a packet every 84 ns (400 Gbps wire pace) and ringing a doorbell every
    // 20 packets, for 10,000 packets. A block is remembered until it ends, at most
    // request + latency + data = 324 ns after its read was issued, so at most
    // ceil(324 / 84) = 4 blocks are alive; pruning must keep the list there. The NIC takes
    // fetched payloads in issue order, so each read's data must arrive no earlier than the last.
    let cfg = PcieConfig::default();
    let mut link = PcieLink::default();
    let (mut longest, mut last_data) = (0, SimTime::ZERO);
    let alive = (request_ps() + LATENCY_PS + data_ps()).div_ceil(84_000) as usize;
    assert_eq!(alive, 4);
    for k in 0..10_000u64 {
        let now = SimTime(k * 84_000);
        let bytes = if k % 7 == 6 { 1000 } else { PAYLOAD };
        let data = link.dma_read(&cfg, now, bytes);
        assert!(data >= last_data, "read {k}");
        last_data = data;
        if k % 20 == 0 {
            // Data blocks repeat every 84 ns, busy from 1.05 ns to 72.2 ns past a fetch (data
            // starts 253.05 ns after its read), so 75 ns past one the link is in a 10 ns gap:
            // a doorbell rung then is never delayed.
            let rung = now + SimTime(75_000);
            let at = link.host_write(&cfg, rung, DOORBELL);
            assert_eq!(at, rung + SimTime(doorbell_ps() + LATENCY_PS), "doorbell {k}");
        }
        longest = longest.max(link.host_to_nic.earlier.len() + 1);
    }
    assert!(longest <= alive, "{longest} blocks");
    assert!(link.nic_to_host.earlier.is_empty(), "requests are all ready at issue");
}

#[test]
fn the_list_is_bounded_even_when_everything_is_reserved_ahead() {
    // 1,000 transfers issued at time 0, each ready 2 us after the one before: 1,000 future
    // blocks with gaps, which the direction caps at MAX_BLOCKS by giving up the earliest gaps.
    // Promises still hold: every transfer starts at its ready time.
    let mut dir = PcieDirection::default();
    for k in 0..1000u64 {
        let ready = SimTime(k * 2_000_000);
        assert_eq!(dir.place(SimTime::ZERO, ready, SimTime(1_000)), ready);
        assert!(dir.earlier.len() <= PcieDirection::MAX_BLOCKS);
    }
    // The gaps given up are the earliest: one of 1 ns at 2 ms - 1 ns is still there.
    let late = SimTime(998 * 2_000_000 + 1_000);
    assert_eq!(dir.place(SimTime::ZERO, late, SimTime(1_000)), late);
}
