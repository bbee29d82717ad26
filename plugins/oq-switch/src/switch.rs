//! One output-queued switch: a FIFO and a serializer per egress port.

use crate::config::OqSwitchConfig;
use bevy_ecs::world::World;
use engine::prelude::*;
use models::fabric::FabricIndex;
use models::fabric::conservation::DropCause;
use models::fabric::link::LinkDirection;
use models::packet::{Packet, PacketKind};
use models::switch::{SwitchCounters, SwitchModel, SwitchSite, record_hop, route, wake_at};
use std::collections::VecDeque;

/// An egress port: what waits for its serializer, and whether a `switch_tx` is pending for it
/// (always, while something waits).
#[derive(Debug, Default)]
struct Port {
    queue: VecDeque<Packet>,
    bytes: u64,
    tx_pending: bool,
}

/// One switch: a row of the fabric's `Store<OqSwitch>`.
#[derive(Debug)]
pub struct OqSwitch {
    node: u32,
    wires: Vec<LinkDirection>,
    ports: Vec<Port>,
    /// Bytes waiting at every port.
    buffer_bytes: u64,
    counters: SwitchCounters,
}

impl OqSwitch {
    /// Bytes waiting at egress `port` (not counting the packet on its serializer).
    pub fn queue_bytes(&self, port: u16) -> u64 {
        self.ports[port as usize].bytes
    }

    /// Puts `pkt` on `out`'s serializer at `now`, which must be free; counts it, and pushes
    /// its INT hop record if it carries INT.
    #[inline]
    fn send<const INT: bool>(
        &mut self,
        fabric: &FabricIndex,
        q: &mut EventQueue,
        now: SimTime,
        out: u16,
        pkt: Packet,
    ) -> SimTime {
        if INT && pkt.int != 0 {
            record_hop(
                fabric,
                pkt.int,
                pkt.kind,
                &self.wires[out as usize],
                now,
                self.ports[out as usize].bytes,
            );
        }
        self.counters.packets += 1;
        self.counters.bytes += pkt.bytes as u64;
        self.wires[out as usize].launch(q, now, pkt)
    }
}

impl SwitchModel for OqSwitch {
    type Settings = OqSwitchConfig;
    fn settings(world: &World) -> OqSwitchConfig {
        world.resource::<OqSwitchConfig>().clone()
    }
    fn forwarding_latency(settings: &OqSwitchConfig) -> SimTime {
        settings.ForwardingLatency.0
    }
    fn new(_: &OqSwitchConfig, site: SwitchSite, wires: Vec<LinkDirection>) -> Self {
        assert_eq!(wires.len(), site.ports, "one link direction per port");
        OqSwitch {
            node: site.node,
            ports: (0..site.ports).map(|_| Port::default()).collect(),
            wires,
            buffer_bytes: 0,
            counters: SwitchCounters::default(),
        }
    }

    fn arrive<const INT: bool>(&mut self, fabric: &FabricIndex, q: &mut EventQueue, _in_port: u16, pkt: Packet) {
        if pkt.kind == PacketKind::Pfc {
            // Link-local and never obeyed: an ideal switch does not stop.
            match pkt.aux {
                0 => self.counters.pfc_resume_received += 1,
                _ => self.counters.pfc_pause_received += 1,
            }
            return;
        }
        let c = (pkt.class & 7) as usize;
        let Some(out) = route(fabric, self.node, &pkt) else {
            self.counters.drops += 1;
            if pkt.kind == PacketKind::Data {
                self.counters.data_drops[DropCause::NoRoute as usize][c].add(pkt.bytes as u64);
            }
            return;
        };
        let now = q.now();
        let bytes = pkt.bytes as u64;
        let port = &self.ports[out as usize];
        let peaks = &mut self.counters;
        peaks.peak_buffer_bytes = peaks.peak_buffer_bytes.max(self.buffer_bytes + bytes);
        peaks.peak_class_queue_bytes[c] = peaks.peak_class_queue_bytes[c].max(port.bytes + bytes);
        let wire = &self.wires[out as usize];
        if !port.tx_pending && wire.idle_at(now) {
            // Nothing waits (a waiting packet keeps a `switch_tx` pending) and the port is free.
            self.send::<INT>(fabric, q, now, out, pkt);
            return;
        }
        let port = &mut self.ports[out as usize];
        port.queue.push_back(pkt);
        port.bytes += bytes;
        self.buffer_bytes += bytes;
        if !port.tx_pending {
            port.tx_pending = true;
            wake_at(fabric, q, wire, self.node, out, wire.busy_until);
        }
    }

    fn tx_ready<const INT: bool>(&mut self, fabric: &FabricIndex, q: &mut EventQueue, port: u16) {
        let p = &mut self.ports[port as usize];
        p.tx_pending = false;
        let Some(pkt) = p.queue.pop_front() else {
            return;
        };
        p.bytes -= pkt.bytes as u64;
        self.buffer_bytes -= pkt.bytes as u64;
        let end = self.send::<INT>(fabric, q, q.now(), port, pkt);
        let p = &mut self.ports[port as usize];
        if !p.queue.is_empty() {
            p.tx_pending = true;
            wake_at(fabric, q, &self.wires[port as usize], self.node, port, end);
        }
    }

    fn node(&self) -> u32 {
        self.node
    }
    fn counters(&self) -> &SwitchCounters {
        &self.counters
    }
    fn wire(&self, port: u16) -> &LinkDirection {
        &self.wires[port as usize]
    }
    fn for_each_queued(&self, f: &mut dyn FnMut(&Packet)) {
        self.ports.iter().flat_map(|p| &p.queue).for_each(f);
    }
    fn for_each_queue(&self, f: &mut dyn FnMut(u16, u8, u64)) {
        // One FIFO per port: its bytes told per class of the packets in it.
        for (port, p) in self.ports.iter().enumerate() {
            let mut by_class = [0u64; 8];
            p.queue
                .iter()
                .for_each(|pkt| by_class[pkt.class as usize & 7] += pkt.bytes as u64);
            for (class, &bytes) in by_class.iter().enumerate().filter(|(_, b)| **b > 0) {
                f(port as u16, class as u8, bytes);
            }
        }
    }
}
