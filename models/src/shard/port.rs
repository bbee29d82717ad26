//! The fabric's shard port: packets launched on a link whose far end is in another shard wait in
//! that direction's outbound channel until the window ends, then move to the receiving shard's
//! channel of the same direction, arrival times and order kept.

use crate::fabric::link::Tally;
use crate::packet::{Packet, PacketKind};
use bevy_ecs::prelude::*;
use engine::SimTime;
use engine::event::{ChannelKey, EventQueue};
use engine::shard::{Batch, ShardPort};
use std::sync::{Arc, Mutex};

/// Data packets that crossed between this shard and others, per class: the conservation check
/// of one shard counts those it received as sent to it and those it shipped as in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Crossed {
    /// Shipped to other shards.
    pub out: [Tally; 8],
    /// Received from other shards.
    pub received: [Tally; 8],
}

/// This shard's `Crossed`, shared with its fabric port.
#[derive(Resource, Clone, Debug, Default)]
pub struct CrossedPackets(pub Arc<Mutex<Crossed>>);

impl CrossedPackets {
    /// The counts so far.
    pub fn get(&self) -> Crossed {
        *self.0.lock().expect("crossed packets")
    }
}

/// One crossing packet as bytes: direction, arrival, flow, sent_at, seven `u32` fields and five
/// bytes (kind, opcode, class, ECN, AckReq), little-endian.
const WIRE_BYTES: usize = 4 + 8 + 8 + 8 + 7 * 4 + 5;

/// Packets for one shard: `(direction, arrival, packet)`, each direction's in its order.
type Packets = Vec<(u32, SimTime, Packet)>;

/// The fabric's `ShardPort`.
pub struct FabricPort {
    key: ChannelKey<Packet>,
    /// `(direction, receiving shard)` of every outbound direction, in direction order.
    outbound: Vec<(u32, u32)>,
    crossed: Arc<Mutex<Crossed>>,
}

impl FabricPort {
    /// The port of the shard whose outbound directions are `outbound`; `crossed` is shared with
    /// the world's `CrossedPackets`.
    pub fn new(key: ChannelKey<Packet>, outbound: Vec<(u32, u32)>, crossed: &CrossedPackets) -> Self {
        FabricPort {
            key,
            outbound,
            crossed: crossed.0.clone(),
        }
    }
}

fn count(t: &mut [Tally; 8], p: &Packet) {
    if p.kind == PacketKind::Data {
        t[(p.class & 7) as usize].add(p.bytes as u64);
    }
}

impl ShardPort for FabricPort {
    fn collect(&mut self, queue: &mut EventQueue, out: &mut [Option<Batch>]) -> (SimTime, u64) {
        let mut per: Vec<Packets> = vec![Vec::new(); out.len()];
        let mut earliest = SimTime::MAX;
        let mut crossed = self.crossed.lock().expect("crossed packets");
        for &(dir, dest) in &self.outbound {
            queue.drain_channel(self.key, dir, |at, p| {
                earliest = earliest.min(at);
                count(&mut crossed.out, &p);
                per[dest as usize].push((dir, at, p));
            });
        }
        let mut n = 0;
        for (slot, packets) in out.iter_mut().zip(per) {
            if !packets.is_empty() {
                n += packets.len() as u64;
                *slot = Some(Box::new(packets));
            }
        }
        (earliest, n)
    }

    fn encode(&self, batch: Batch) -> Vec<u8> {
        let packets = batch.downcast::<Packets>().expect("a batch from the fabric's port");
        let mut out = Vec::with_capacity(packets.len() * WIRE_BYTES);
        for (dir, at, p) in packets.iter() {
            out.extend_from_slice(&dir.to_le_bytes());
            out.extend_from_slice(&at.ps().to_le_bytes());
            out.extend_from_slice(&p.flow.to_le_bytes());
            out.extend_from_slice(&p.sent_at.ps().to_le_bytes());
            for v in [p.src, p.dst, p.qp, p.psn, p.bytes, p.payload, p.aux] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            out.extend_from_slice(&[p.kind as u8, p.opcode, p.class, p.ecn, p.ack_req as u8]);
        }
        out
    }

    fn decode(&self, bytes: &[u8]) -> Option<Batch> {
        if !bytes.len().is_multiple_of(WIRE_BYTES) {
            return None;
        }
        let mut packets: Packets = Vec::with_capacity(bytes.len() / WIRE_BYTES);
        for b in bytes.chunks_exact(WIRE_BYTES) {
            let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
            let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
            let w = |k: usize| u32_at(28 + 4 * k);
            let p = Packet {
                flow: u64_at(12),
                sent_at: SimTime(u64_at(20)),
                src: w(0),
                dst: w(1),
                qp: w(2),
                psn: w(3),
                bytes: w(4),
                payload: w(5),
                aux: w(6),
                kind: PacketKind::from_u8(b[56])?,
                opcode: b[57],
                class: b[58],
                ecn: b[59],
                ack_req: b[60] != 0,
                // INT stacks live in one shard's table: runs with INT have one shard.
                int: 0,
            };
            packets.push((u32_at(0), SimTime(u64_at(4)), p));
        }
        Some(Box::new(packets))
    }

    fn deliver(&mut self, queue: &mut EventQueue, batch: Batch) {
        let packets = batch.downcast::<Packets>().expect("a batch from the fabric's port");
        let mut crossed = self.crossed.lock().expect("crossed packets");
        for (dir, at, p) in *packets {
            count(&mut crossed.received, &p);
            queue.send(self.key, dir, at, p);
        }
    }
}

/// Makes this shard's directions toward other shards outbound and registers the fabric's port
/// (from `build_fabric`, when the world is a shard).
pub fn install(world: &mut World, plan: &super::ShardPlan, fabric: &crate::fabric::FabricIndex) {
    let shard_of = &plan.partition.shard_of;
    let mut outbound = Vec::new();
    for (l, link) in fabric.topology.links.iter().enumerate() {
        for (d, (from, to)) in [(link.a, link.b), (link.b, link.a)].into_iter().enumerate() {
            let (sf, st) = (shard_of[from.0 as usize], shard_of[to.0 as usize]);
            if sf == plan.me && st != plan.me {
                outbound.push(((2 * l + d) as u32, st));
            }
        }
    }
    let key = fabric.kinds.packet;
    let mut q = world.resource_mut::<EventQueue>();
    for &(d, _) in &outbound {
        q.mark_outbound(key, d);
    }
    let crossed = CrossedPackets::default();
    world.insert_resource(crossed.clone());
    let port = FabricPort::new(key, outbound, &crossed);
    world
        .get_resource_or_insert_with(engine::shard::ShardPorts::default)
        .0
        .push(Box::new(port));
}
