//! `run --pcap` read back by tshark (Wireshark's dissectors): a short default-scenario run with
//! one application on class 0 and one on class 1, and an incast on a star that makes the switch
//! send PFC pauses. Every figure is derived here from the spec's numbers (250,000-byte WQEs,
//! 4,096-byte MSS, 58 header bytes, a 16-byte RETH on WRITE FIRST) and the ICRC is recomputed by
//! a bitwise CRC-32 written here, apart from the simulator's table-driven one.
//!
//! tshark is Debian's `tshark` package (`.ci/run` installs it). Outside CI a machine without it
//! skips these tests with a message; in CI (`CI=true`) its absence fails them.

mod common;

use common::{TempDir, rdmasim, refused, stderr, stdout};
use std::collections::BTreeMap;
use std::process::Command;

const WQE_BYTES: usize = 250_000;
const MSS: usize = 4_096;
const HEADERS: usize = 14 + 20 + 8 + 12 + 4;
const RETH: usize = 16;
const OP_FIRST: u8 = 0x06;
const OP_MIDDLE: u8 = 0x07;
const OP_LAST: u8 = 0x08;
const OP_ACK: u8 = 0x11;

/// Whether tshark runs; `false` (with a message) lets a test skip outside CI.
fn tshark_present(test: &str) -> bool {
    if Command::new("tshark")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{test}: tshark is not installed, and CI must run this test (.ci/run installs Debian's tshark)");
    }
    eprintln!("SKIPPED {test}: tshark is not installed (apt-get install tshark); CI runs it");
    false
}

/// tshark's fields of every frame of `file` (optionally filtered), one map per frame.
fn tshark(file: &str, filter: &str, fields: &[&str]) -> Vec<BTreeMap<String, String>> {
    let mut cmd = Command::new("tshark");
    cmd.args(["-r", file, "-T", "fields", "-E", "separator=|", "-E", "occurrence=f"]);
    if !filter.is_empty() {
        cmd.args(["-Y", filter]);
    }
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("run tshark");
    assert!(out.status.success(), "tshark: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            fields
                .iter()
                .map(|f| f.to_string())
                .zip(l.split('|').map(str::to_string))
                .collect()
        })
        .collect()
}

fn num(s: &str) -> u64 {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).unwrap_or_else(|_| panic!("not hex: {s}")),
        None => s.parse().unwrap_or_else(|_| panic!("not a number: {s}")),
    }
}

/// The frames of a classic pcap file, with their timestamps in nanoseconds.
fn pcap_frames(path: &str) -> Vec<(u64, Vec<u8>)> {
    let b = std::fs::read(path).expect("read the capture");
    let le = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as u64;
    assert_eq!(le(0), 0xA1B2_3C4D, "nanosecond pcap magic");
    let mut at = 24;
    let mut frames = Vec::new();
    while at < b.len() {
        let (sec, ns, incl) = (le(at), le(at + 4), le(at + 8) as usize);
        frames.push((sec * 1_000_000_000 + ns, b[at + 16..at + 16 + incl].to_vec()));
        at += 16 + incl;
    }
    frames
}

/// CRC-32 (reflected 0xEDB88320, init and final xor all ones), one bit at a time.
fn crc32_bitwise(bytes: impl IntoIterator<Item = u8>) -> u32 {
    let mut crc = !0u32;
    for b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The ICRC of a RoCEv2 frame (IBA annex A17): 8 bytes of ones, then the IP packet to the ICRC
/// with DSCP/ECN, TTL, IP checksum, UDP checksum and the BTH's FECN/BECN byte set to ones.
fn icrc(frame: &[u8]) -> u32 {
    let mut ip = frame[14..frame.len() - 4].to_vec();
    ip[1] = 0xFF;
    ip[8] = 0xFF;
    ip[10] = 0xFF;
    ip[11] = 0xFF;
    ip[26] = 0xFF;
    ip[27] = 0xFF;
    ip[32] = 0xFF;
    crc32_bitwise([0xFF; 8].into_iter().chain(ip))
}

/// A short run of `scenario` with `sets`, captured with `capture` flags; returns the capture's path.
fn capture(dir: &TempDir, scenario: &str, sets: &[&str], capture: &[&str]) -> String {
    let pcap = format!("{}/run.pcap", dir.path());
    let mut args = vec!["run", scenario, "--out", dir.path(), "--quiet", "--pcap", &pcap];
    args.extend(capture);
    for s in sets {
        args.extend(["--set", s]);
    }
    let o = rdmasim(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    assert!(stdout(&o).contains(&format!("wrote {pcap} (")), "{}", stdout(&o));
    pcap
}

/// A short default-scenario timeline: data from 0.003 s to 0.0032 s.
const SHORT: [&str; 3] = [
    "simulation.WarmUp=0",
    "simulation.RunTime=0.0002",
    "simulation.CoolDown=0",
];

#[test]
fn tshark_reads_a_default_run_whole() {
    if !tshark_present("tshark_reads_a_default_run_whole") {
        return;
    }
    let dir = TempDir::new("pcap-default");
    let two_classes = "applications=[ScalaRdma((RdmaDataPacketTC: 0)), ScalaRdma((RdmaDataPacketTC: 1))]";
    let scenario = common::default_ron();
    let scenario = scenario.to_str().expect("utf-8 path");
    let mut sets = SHORT.to_vec();
    sets.push(two_classes);
    let file = capture(&dir, scenario, &sets, &[]);

    // Nothing malformed, no expert warning or error.
    let bad = tshark(
        &file,
        "_ws.malformed || _ws.expert.severity >= warning",
        &["frame.number"],
    );
    assert!(bad.is_empty(), "malformed or flagged frames: {bad:?}");

    // Every RoCE frame's ICRC, recomputed here, is the one in the frame and the one tshark shows.
    let frames = pcap_frames(&file);
    let shown = tshark(&file, "", &["frame.number", "infiniband.invariant.crc", "eth.type"]);
    assert_eq!(frames.len(), shown.len());
    assert!(frames.windows(2).all(|w| w[0].0 <= w[1].0), "frames in time order");
    for ((_, f), s) in frames.iter().zip(&shown) {
        assert_eq!(
            num(&s["eth.type"]),
            0x0800,
            "a class-0/1 run without PFC has only IPv4 frames"
        );
        let trailer = u32::from_le_bytes([f[f.len() - 4], f[f.len() - 3], f[f.len() - 2], f[f.len() - 1]]);
        assert_eq!(trailer, icrc(f), "frame {}: ICRC", s["frame.number"]);
        assert_eq!(
            num(&s["infiniband.invariant.crc"]) as u32,
            trailer.swap_bytes(),
            "frame {}",
            s["frame.number"]
        );
    }

    // Each connection's class (from the plan) is the DSCP of its data: class n is CSn, 8 x n.
    let plan = rdmasim(&["plan", scenario, "--format", "json", "--set", two_classes]);
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).expect("plan json");
    let class_of: BTreeMap<(u64, u64), u64> = plan["connections"]
        .as_array()
        .expect("connections")
        .iter()
        .map(|c| {
            (
                (c["initiator"].as_u64().unwrap(), c["responder"].as_u64().unwrap()),
                c["traffic_class"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(class_of.values().any(|&c| c == 0) && class_of.values().any(|&c| c == 1));
    let fields = [
        "frame.len",
        "ip.src",
        "ip.dst",
        "ip.dsfield.dscp",
        "infiniband.bth.opcode",
        "infiniband.bth.destqp",
        "infiniband.bth.psn",
        "infiniband.bth.a",
        "infiniband.reth.dmalen",
        "infiniband.aeth.syndrome",
    ];
    let rows = tshark(&file, "infiniband", &fields);
    let host = |ip: &str| num(ip.rsplit('.').next().expect("dotted quad"));
    let mut per_class = [0usize; 2];
    for r in rows
        .iter()
        .filter(|r| num(&r["infiniband.bth.opcode"]) <= OP_LAST as u64)
    {
        let class = class_of[&(host(&r["ip.src"]), host(&r["ip.dst"]))];
        assert_eq!(num(&r["ip.dsfield.dscp"]), 8 * class, "{r:?}");
        per_class[class as usize] += 1;
    }
    assert!(
        per_class[0] > 0 && per_class[1] > 0,
        "data on both classes: {per_class:?}"
    );

    // One WQE of one connection: ceil(250,000 / 4,096) = 62 packets, 1 FIRST, 60 MIDDLE, 1 LAST,
    // PSNs consecutive; FIRST 4,096 + 58 + 16 (RETH) bytes, MIDDLE 4,096 + 58 = 4,154, LAST the
    // remaining 250,000 - 61 x 4,096 = 144 + 58.
    let packets = WQE_BYTES.div_ceil(MSS);
    assert_eq!(packets, 62);
    let last_payload = WQE_BYTES - (packets - 1) * MSS;
    let (src, dst) = class_of.keys().next().copied().expect("a pair");
    let conn: Vec<_> = rows
        .iter()
        .filter(|r| host(&r["ip.src"]) == src && host(&r["ip.dst"]) == dst)
        .filter(|r| num(&r["infiniband.bth.opcode"]) <= OP_LAST as u64)
        .collect();
    let first = conn
        .iter()
        .position(|r| num(&r["infiniband.bth.opcode"]) == OP_FIRST as u64)
        .expect("a WRITE FIRST");
    let qp = &conn[first]["infiniband.bth.destqp"];
    let wqe: Vec<_> = conn[first..]
        .iter()
        .filter(|r| &r["infiniband.bth.destqp"] == qp)
        .take(packets)
        .collect();
    assert_eq!(wqe.len(), packets, "a whole WQE in the capture");
    let psn0 = num(&wqe[0]["infiniband.bth.psn"]);
    for (i, r) in wqe.iter().enumerate() {
        let (op, len) = match i {
            0 => (OP_FIRST, MSS + HEADERS + RETH),
            i if i + 1 == packets => (OP_LAST, last_payload + HEADERS),
            _ => (OP_MIDDLE, MSS + HEADERS),
        };
        assert_eq!(num(&r["infiniband.bth.opcode"]), op as u64, "packet {i} of the WQE");
        assert_eq!(num(&r["frame.len"]) as usize, len, "packet {i} of the WQE");
        assert_eq!(num(&r["infiniband.bth.psn"]), psn0 + i as u64, "packet {i} of the WQE");
    }
    assert_eq!(num(&wqe[0]["infiniband.reth.dmalen"]) as usize, WQE_BYTES);
    assert_eq!(
        num(&wqe[packets - 1]["infiniband.bth.a"]),
        1,
        "the LAST asks for an ACK"
    );
    assert_eq!(
        wqe.iter().filter(|r| num(&r["frame.len"]) == 4_154).count(),
        60,
        "60 MIDDLE frames of 4,154 bytes"
    );

    // The Responder acknowledges the WQE's last PSN: a 62-byte ACK (58 + AETH 4), syndrome ACK.
    let last_psn = psn0 + packets as u64 - 1;
    let ack = rows
        .iter()
        .find(|r| {
            num(&r["infiniband.bth.opcode"]) == OP_ACK as u64
                && host(&r["ip.src"]) == dst
                && host(&r["ip.dst"]) == src
                && num(&r["infiniband.bth.psn"]) == last_psn
        })
        .expect("an ACK of the WQE's last packet");
    assert_eq!(num(&ack["frame.len"]), (HEADERS + 4) as u64);
    assert_eq!(num(&ack["infiniband.aeth.syndrome"]) >> 5, 0, "an ACK, not a NAK");
    assert_eq!(num(&ack["ip.dsfield.dscp"]), 8 * class_of[&(src, dst)]);
}

#[test]
fn an_incast_shows_the_switchs_pfc_pauses() {
    if !tshark_present("an_incast_shows_the_switchs_pfc_pauses") {
        return;
    }
    // 15 Initiators into one Responder on one switch, 8 connections each: each sender's ingress
    // port holds 8 x ~250 KB, past XOFF (256 KiB), so the switch pauses class 0 at the senders.
    let dir = TempDir::new("pcap-incast");
    let star = common::scenario("star");
    let mut sets = SHORT.to_vec();
    sets.extend([
        "applications[0].prScalaRdmaInitiator=0.9",
        "applications[0].prScalaRdmaResponder=0.1",
    ]);
    let file = capture(
        &dir,
        star.to_str().expect("utf-8"),
        &sets,
        &["--pcap-direction", "rx", "--pcap-hosts", "h0,1"],
    );
    let bad = tshark(
        &file,
        "_ws.malformed || _ws.expert.severity >= warning",
        &["frame.number"],
    );
    assert!(bad.is_empty(), "malformed or flagged frames: {bad:?}");
    let pfc = tshark(
        &file,
        "macc.opcode == 0x0101",
        &[
            "frame.len",
            "eth.src",
            "eth.dst",
            "macc.cbfc.enbv",
            "macc.cbfc.pause_time.c0",
        ],
    );
    assert!(!pfc.is_empty(), "the switch paused the senders");
    // From the switch (node 16, after the 16 hosts), to the MAC control multicast address.
    for p in &pfc {
        assert_eq!(num(&p["frame.len"]), 60, "the Ethernet minimum");
        assert_eq!(p["eth.src"], "02:00:00:00:00:10");
        assert_eq!(p["eth.dst"], "01:80:c2:00:00:01");
        assert_eq!(num(&p["macc.cbfc.enbv"]), 1, "class 0");
    }
    assert!(
        pfc.iter().any(|p| num(&p["macc.cbfc.pause_time.c0"]) == 0xFFFF),
        "a PAUSE"
    );
    assert!(pfc.iter().any(|p| num(&p["macc.cbfc.pause_time.c0"]) == 0), "a RESUME");
}

#[test]
fn bad_capture_flags_are_refused_naming_the_flag() {
    let dir = TempDir::new("pcap-bad");
    let star = common::scenario("star");
    let star = star.to_str().expect("utf-8");
    let pcap = format!("{}/x.pcap", dir.path());
    let missing = format!("{}/no/such/folder/x.pcap", dir.path());
    let cases: [(&[&str], &str); 10] = [
        (
            &["--pcap", &pcap, "--pcap-ports", "h1"],
            "--pcap-ports h1: node 1 is a host",
        ),
        (
            &["--pcap", &pcap, "--pcap-ports", "s0:99"],
            "--pcap-ports s0:99: the port must be a number from 0 to",
        ),
        (&["--pcap", &pcap, "--pcap-ports", "x9:1"], "--pcap-ports x9:1: no node"),
        (&["--pcap", &pcap, "--pcap-hosts", "h99"], "--pcap-hosts h99: no node"),
        (
            &["--pcap", &pcap, "--pcap-hosts", "s0"],
            "--pcap-hosts s0: node 16 is not a host",
        ),
        (
            &["--pcap", &pcap, "--pcap-hosts", "16"],
            "--pcap-hosts 16: node 16 is not a host",
        ),
        (
            &["--pcap", &pcap, "--pcap-from", "5ms", "--pcap-until", "4ms"],
            "--pcap-from/--pcap-until: the capture window is empty",
        ),
        (
            &["--pcap", &pcap, "--pcap-max-packets", "0"],
            "--pcap-max-packets: the packet cap must be at least 1",
        ),
        (&["--pcap", &missing], "--pcap "),
        (&["--pcap", &pcap, "--pcap-from", "soon"], "is not a duration"),
    ];
    for (flags, says) in cases {
        let mut args = vec!["run", star, "--quiet", "--out", dir.path()];
        args.extend_from_slice(flags);
        let first = refused(&args);
        assert!(first.contains(says), "{flags:?}: {first}");
    }
    // A capture flag without --pcap is a usage error too.
    refused(&["run", star, "--pcap-hosts", "1"]);
}

#[test]
fn the_cap_and_the_window_bound_the_capture() {
    let dir = TempDir::new("pcap-cap");
    let default = common::default_ron();
    let file = capture(
        &dir,
        default.to_str().expect("utf-8"),
        &SHORT,
        &["--pcap-max-packets", "100", "--pcap-from", "3.1ms"],
    );
    let frames = pcap_frames(&file);
    assert_eq!(frames.len(), 100);
    // The earliest frames from 3.1 ms on, in order: the window starts the capture, the cap ends it.
    assert!(
        frames.iter().all(|(t, _)| *t >= 3_100_000),
        "{:?}",
        frames.first().map(|f| f.0)
    );
    assert!(frames.windows(2).all(|w| w[0].0 <= w[1].0));
}

/// Reads (ethertype, IPv4 source and destination host, BTH opcode, PSN) of a RoCE frame.
fn roce_fields(f: &[u8]) -> Option<(u8, u8, u8, u32)> {
    if f.len() < 54 || f[12..14] != [0x08, 0x00] {
        return None;
    }
    Some((f[29], f[33], f[42], u32::from_be_bytes([0, f[51], f[52], f[53]])))
}

#[test]
fn timestamps_follow_the_link() {
    // Two hosts on one switch, one pair. A data packet is ready to leave the switch its
    // serialization at 400 Gbps (20 ps a byte, counting the model's 58 header bytes), the 1 us
    // link and the switch's 500 ns forwarding latency after it left h0, and leaves when it is
    // ready or when the port has sent the packet before it, whichever is later (store and
    // forward, one FIFO): a short LAST packet waits for the MIDDLE ahead of it.
    let dir = TempDir::new("pcap-times");
    let star = common::scenario("star");
    let star = star.to_str().expect("utf-8");
    let mut sets = SHORT.to_vec();
    sets.extend(["topology=Star(hosts: 2)", "applications[0].NumConnections=1"]);
    let data = |frames: Vec<(u64, Vec<u8>)>| -> Vec<(u64, u8, u32)> {
        frames
            .iter()
            .filter_map(|(t, f)| roce_fields(f).filter(|r| r.2 <= OP_LAST).map(|r| (*t, r.2, r.3)))
            .collect()
    };
    let sent = data(pcap_frames(&capture(
        &dir,
        star,
        &sets,
        &["--pcap-hosts", "h0", "--pcap-direction", "tx"],
    )));
    let received = data(pcap_frames(&capture(
        &dir,
        star,
        &sets,
        &["--pcap-hosts", "h1", "--pcap-direction", "rx"],
    )));
    let last_payload = WQE_BYTES - (WQE_BYTES.div_ceil(MSS) - 1) * MSS;
    let ser_ps = |op: u8| (if op == OP_LAST { last_payload } else { MSS } + HEADERS) as u64 * 20;
    let mut port_free_ps = 0;
    let mut expected: BTreeMap<u32, u64> = BTreeMap::new();
    for &(t_ns, op, psn) in &sent {
        let ready = t_ns * 1_000 + ser_ps(op) + 1_000_000 + 500_000;
        let leaves = ready.max(port_free_ps);
        port_free_ps = leaves + ser_ps(op);
        expected.insert(psn, leaves);
    }
    let mut waited = 0;
    for &(t_ns, op, psn) in &received {
        let want = expected[&psn];
        // Both timestamps are whole nanoseconds, truncated.
        assert!(
            t_ns.abs_diff(want / 1_000) <= 1,
            "PSN {psn} (opcode {op}): left the switch at {t_ns} ns, expected {want} ps"
        );
        waited += usize::from(op == OP_LAST && want / 1_000 > sent.iter().find(|s| s.2 == psn).unwrap().0 + 1_505);
    }
    assert!(received.len() > 1000, "only {} data packets compared", received.len());
    assert!(waited > 0, "the LAST packets wait behind the MIDDLE ahead of them");

    // h1 acknowledges as the acknowledged packet's last bit arrives (its port is idle then: ACKs
    // are 62 bytes, 1.24 ns, far apart): the ACK's event does not carry its send time, so this
    // checks the capture's mirror of the NIC's serializer.
    let acks: Vec<(u64, u32)> = pcap_frames(&capture(
        &dir,
        star,
        &sets,
        &["--pcap-hosts", "h1", "--pcap-direction", "tx"],
    ))
    .iter()
    .filter_map(|(t, f)| roce_fields(f).filter(|r| r.2 == OP_ACK).map(|r| (*t, r.3)))
    .collect();
    let op_of: BTreeMap<u32, u8> = sent.iter().map(|s| (s.2, s.1)).collect();
    for &(t_ns, psn) in &acks {
        let want = expected[&psn] + ser_ps(op_of[&psn]) + 1_000_000;
        assert!(
            t_ns.abs_diff(want / 1_000) <= 1,
            "ACK of PSN {psn} left h1 at {t_ns} ns, expected {want} ps"
        );
    }
    // Every WQE's LAST that left the switch is acknowledged, but one the run's stop may cut off.
    let lasts = received.iter().filter(|r| r.1 == OP_LAST).count();
    assert!(
        lasts > 10 && acks.len() + 1 >= lasts,
        "{} ACKs for {lasts} LAST packets",
        acks.len()
    );
}

#[test]
fn ports_between_switches_are_captured_as_frames_leave_them() {
    // The default fabric: leaf0's hosts h0-h3 are Initiators whose Responders sit on other
    // leaves, so every data frame they send leaves leaf0 on one of its 4 uplinks (ECMP). Each
    // uplink is captured on its own (`--pcap-ports leaf0:P`): together they hold the frames the
    // hosts sent, each once, stamped when it left the uplink: not before it could (its
    // serialization at 400 Gbps, 20 ps a byte, the 1 us link and the 500 ns forwarding latency
    // after it left the host), and never overlapping the frame before it on the same port.
    let test = "ports_between_switches_are_captured_as_frames_leave_them";
    if !tshark_present(test) {
        return;
    }
    let dir = TempDir::new("pcap-uplinks");
    let default = common::default_ron();
    let default = default.to_str().expect("utf-8");
    let loaded = rdmasim::scenario::load_path(std::path::Path::new(default), &[]).unwrap();
    let topo = &loaded.topology;
    let leaf0 = topo.find("leaf0").unwrap();
    let uplinks: Vec<usize> = (topo.nodes[leaf0 as usize].ports.iter().enumerate())
        .filter(|(_, p)| !topo.is_host(p.peer_node))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(uplinks.len(), 4);
    type Key = (u8, u8, u8, u32);
    let data = |file: &str| -> Vec<(u64, usize, Key)> {
        pcap_frames(file)
            .into_iter()
            .filter_map(|(t, f)| roce_fields(&f).filter(|r| r.2 <= OP_LAST).map(|r| (t, f.len(), r)))
            .collect()
    };
    let sent = data(&capture(
        &dir,
        default,
        &SHORT,
        &["--pcap-hosts", "h0,h1,h2,h3", "--pcap-direction", "tx"],
    ));
    let sent_at: BTreeMap<Key, u64> = sent.iter().map(|&(t, _, k)| (k, t)).collect();
    assert_eq!(sent_at.len(), sent.len(), "a frame sent twice in this short run");
    let mut seen = BTreeMap::new();
    for p in &uplinks {
        let port = format!("leaf0:{p}");
        let file = capture(&dir, default, &SHORT, &["--pcap-ports", &port]);
        let bad = tshark(
            &file,
            "_ws.malformed || _ws.expert.severity >= warning",
            &["frame.number"],
        );
        assert!(bad.is_empty(), "{port}: malformed or flagged frames: {bad:?}");
        // ECMP spreads the 4 flows by hash: an uplink may carry none of them.
        let frames = data(&file);
        let mut free_ns = 0;
        for &(t, len, k) in &frames {
            let ser_ps = len as u64 * 20;
            let host_ns = sent_at.get(&k).unwrap_or_else(|| panic!("{port}: {k:?} never sent"));
            // Timestamps are whole nanoseconds, truncated: a slack of 1 ns each way.
            assert!(
                t * 1_000 + 1_000 >= host_ns * 1_000 + ser_ps + 1_500_000,
                "{port}: {k:?} left early"
            );
            assert!(
                t * 1_000 + 1_000 >= free_ns,
                "{port}: {k:?} overlaps the frame before it"
            );
            free_ns = t * 1_000 + ser_ps;
            assert!(seen.insert(k, p).is_none(), "{k:?} left leaf0 twice");
        }
    }
    assert!(seen.len() > 1000, "only {} frames left leaf0", seen.len());
    // Each frame once; those missing were still on their way to the spine at the stop time
    // (at most a serialization, the link and the latency, plus queueing: 10 us is ample).
    let last_ns = sent.iter().map(|s| s.0).max().unwrap();
    for (k, t) in &sent_at {
        assert!(
            seen.contains_key(k) || t + 10_000 > last_ns,
            "{k:?}, sent at {t} ns, never left leaf0"
        );
    }
}
