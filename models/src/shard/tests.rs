use super::*;
use crate::topology::TopologyConfig;

fn topo(text: &str) -> Topology {
    let cfg: TopologyConfig = ron::from_str(text).expect("topology");
    cfg.build().expect("valid")
}

#[test]
fn a_leaf_spine_splits_by_leaf_with_its_hosts_and_deals_the_spines() {
    let t = topo("LeafSpine(leaves: 4, spines: 4, hosts_per_leaf: 4)");
    let p = Partition::compute(&t, 2).unwrap();
    assert_eq!(p.hosts_per_shard(&t), vec![8, 8]);
    for link in &t.links {
        let (a, b) = (link.a.0, link.b.0);
        if t.is_host(a) || t.is_host(b) {
            assert_eq!(p.shard_of[a as usize], p.shard_of[b as usize], "a host with its leaf");
        }
    }
    // 1 us links: the lookahead is one link's delay.
    assert_eq!(p.lookahead, SimTime::from_us(1));
    let one = Partition::compute(&t, 1).unwrap();
    assert!(one.shard_of.iter().all(|&s| s == 0));
    assert_eq!(one.lookahead, SimTime::MAX, "nothing crosses");
}

#[test]
fn a_fat_tree_keeps_each_pod_together() {
    let t = topo("FatTree(k: 4)");
    let p = Partition::compute(&t, 4).unwrap();
    assert_eq!(p.hosts_per_shard(&t), vec![4, 4, 4, 4]);
    // Every edge and aggregation switch is with the hosts of its pod: only core links cross.
    for link in &t.links {
        let (a, b) = (link.a.0 as usize, link.b.0 as usize);
        let core = |n: usize| t.nodes[n].name.starts_with("core");
        if p.shard_of[a] != p.shard_of[b] {
            assert!(core(a) || core(b), "{} - {} crosses", t.nodes[a].name, t.nodes[b].name);
        }
    }
}

#[test]
fn three_shards_balance_hosts_as_well_as_units_allow() {
    let t = topo("LeafSpine(leaves: 4, spines: 2, hosts_per_leaf: 4)");
    let p = Partition::compute(&t, 3).unwrap();
    assert_eq!(p.hosts_per_shard(&t), vec![8, 4, 4]);
}

#[test]
fn a_zero_delay_link_between_shards_is_named() {
    let t = topo("LeafSpine(leaves: 2, spines: 1, hosts_per_leaf: 2, spine_link: Some((delay: Some(\"0s\"))))");
    let e = Partition::compute(&t, 2).unwrap_err();
    assert!(matches!(e, PartitionError::ZeroDelay { .. }), "{e}");
    assert!(e.to_string().contains("spine0"), "{e}");
    assert_eq!(Partition::compute(&t, 0).unwrap_err(), PartitionError::NoShards);
}

#[test]
fn crossing_packets_survive_bytes_field_for_field() {
    use super::port::{CrossedPackets, FabricPort};
    use crate::packet::{Packet, PacketKind};
    use engine::shard::ShardPort;
    for (i, k) in PacketKind::ALL.iter().enumerate() {
        assert_eq!(*k as usize, i, "ALL is in discriminant order");
    }
    let mut q = engine::event::EventQueue::new();
    let key = q.add_channel_type::<Packet>();
    let port = FabricPort::new(key, Vec::new(), &CrossedPackets::default());
    let packets: Vec<(u32, SimTime, Packet)> = PacketKind::ALL
        .iter()
        .enumerate()
        .map(|(i, &kind)| {
            let n = i as u32 + 1;
            let p = Packet {
                flow: u64::MAX - n as u64,
                sent_at: SimTime(1_000_003 * n as u64),
                src: n,
                dst: 2 * n,
                qp: 3 * n,
                psn: u32::MAX - n,
                bytes: 4154,
                payload: 4096,
                aux: 7 * n,
                kind,
                opcode: n as u8,
                class: (n % 8) as u8,
                ecn: (n % 4) as u8,
                ack_req: n.is_multiple_of(2),
                // Never across shards: a run with INT has one.
                int: 0,
            };
            (n * 11, SimTime(5_000_000 + n as u64), p)
        })
        .collect();
    let bytes = port.encode(Box::new(packets.clone()));
    let back = port.decode(&bytes).expect("decodes");
    assert_eq!(
        *back.downcast::<Vec<(u32, SimTime, Packet)>>().expect("packets"),
        packets
    );
    assert!(port.decode(&bytes[1..]).is_none(), "a cut batch is refused");
}

#[test]
fn a_given_partition_puts_each_host_with_its_first_switch() {
    let t = topo("LeafSpine(leaves: 4, spines: 2, hosts_per_leaf: 2)");
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // Three leaves and both spines on shard 0, one leaf on shard 1: unbalanced on purpose.
    let given = vec![
        names(&["leaf0", "leaf1", "leaf2", "spine0", "spine1"]),
        names(&["leaf3"]),
    ];
    let p = Partition::given(&t, &given).unwrap();
    assert_eq!(p.shards, 2);
    assert_eq!(p.hosts_per_shard(&t), vec![6, 2]);
    for h in 0..t.num_hosts as u32 {
        assert_eq!(p.shard_of[h as usize], p.shard_of[t.port(h, 0).peer_node as usize]);
    }
    assert_eq!(p.lookahead, SimTime::from_us(1), "leaf3's uplinks cross");
}

#[test]
fn a_given_partition_is_refused_naming_the_entry_at_fault() {
    let t = topo("LeafSpine(leaves: 2, spines: 1, hosts_per_leaf: 2)");
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let refused = |given: Vec<Vec<String>>| Partition::given(&t, &given).unwrap_err();
    let e = refused(vec![names(&["leaf0", "spine0"]), names(&["leafx"])]);
    assert_eq!(
        (e.field.as_str(), e.message.as_str()),
        ("[1][0]", "no node of the topology is named `leafx`")
    );
    let e = refused(vec![names(&["leaf0", "spine0"]), names(&["leaf1", "h0"])]);
    assert_eq!(e.field, "[1][1]");
    assert!(e.message.contains("is a host"), "{}", e.message);
    let e = refused(vec![names(&["leaf0", "spine0"]), names(&["leaf1", "leaf0"])]);
    assert_eq!(
        (e.field.as_str(), e.message.as_str()),
        ("[1][1]", "`leaf0` is already in shard 0")
    );
    let e = refused(vec![names(&["leaf0"]), names(&["leaf1"])]);
    assert_eq!(
        (e.field.as_str(), e.message.as_str()),
        ("", "switch `spine0` is in no shard")
    );
    let e = refused(vec![names(&["leaf0", "leaf1", "spine0"]), vec![]]);
    assert_eq!(e.field, "[1]");
    assert!(refused(vec![]).message.contains("at least one shard"));
    let zero = topo("LeafSpine(leaves: 2, spines: 1, hosts_per_leaf: 2, link_delay: \"0us\")");
    let e = Partition::given(&zero, &[names(&["leaf0", "spine0"]), names(&["leaf1"])]).unwrap_err();
    assert!(e.message.contains("zero delay"), "{}", e.message);
}
