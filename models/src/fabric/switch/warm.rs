//! Warming (`engine::dispatch::Handler::prefetch`): on large fabrics, where a switch's state is
//! a cache miss per event, what an arrival or a port's send will touch is loaded a few events
//! before it is handled, each step using what the step before loaded. Hints only.

use super::Switch;
use crate::fabric::FabricIndex;
use crate::packet::Packet;
use engine::event::EventQueue;
use engine::prefetch::prefetch;

impl Switch {
    /// The switch's own fields that every hop reads (the far step).
    #[inline]
    pub(crate) fn warm_state(&self) {
        prefetch(&self.node);
        prefetch(&self.egress);
        prefetch(&self.wires);
        prefetch(&self.wire_ids);
        prefetch(&self.ingress);
        prefetch(&self.lossy_bytes);
        prefetch(&self.counters.bytes);
        prefetch(&self.counters.peak_buffer_bytes);
        prefetch(&self.buffer_bytes);
        prefetch(&self.counters.packets);
        prefetch(&self.params);
    }

    /// `pkt`'s arrival on `in_port`, `ahead` steps before it: its route's table entry (3), then
    /// its egress port, outgoing wire, the wire's channel and the ingress port (2), then the
    /// channel's slot the packet will be written into (1).
    #[inline]
    pub(crate) fn warm_arrival(&self, fabric: &FabricIndex, q: &EventQueue, in_port: u16, pkt: &Packet, ahead: usize) {
        // A PFC frame is addressed to this switch and takes no route.
        if pkt.dst as usize >= fabric.topology.num_hosts {
            return;
        }
        if ahead >= 3 {
            fabric.routes.prefetch(self.node, pkt.dst);
            return;
        }
        let Some(out) = crate::switch::route(fabric, self.node, pkt) else {
            return;
        };
        if ahead == 2 {
            if let Some(port) = self.egress.get(out as usize) {
                prefetch(&port.nonempty);
            }
            if let Some(wire) = self.wires.get(out as usize) {
                wire.warm();
            }
            self.warm_wire_channel(fabric, q, out);
            // Both lines: the counters fill the first, the PAUSE bits start the second.
            if let Some(ingress) = self.ingress.get(in_port as usize) {
                engine::prefetch::prefetch_lines(ingress);
            }
        } else {
            self.warm_wire_slot(fabric, q, out);
            // A port with packets queued queues this one too: its class's queue and byte count.
            if let Some(port) = self.egress.get(out as usize)
                && port.nonempty != 0
            {
                let c = (pkt.class & 7) as usize;
                prefetch(&port.queues[c]);
                prefetch(&port.queue_bytes[c]);
            }
        }
    }

    /// Starts loading the channel of the wire leaving `out`, found by its id (`wire_ids`): the
    /// wire's own lines were asked for in the same step, and reading its channel from them
    /// would wait for memory.
    #[inline]
    fn warm_wire_channel(&self, fabric: &FabricIndex, q: &EventQueue, out: u16) {
        if let Some(&id) = self.wire_ids.get(out as usize) {
            q.prefetch_channel(fabric.kinds.packet, id);
        }
    }

    /// Starts loading, to be written, the slot of that channel the next packet goes into.
    #[inline]
    fn warm_wire_slot(&self, fabric: &FabricIndex, q: &EventQueue, out: u16) {
        if let Some(&id) = self.wire_ids.get(out as usize) {
            q.warm_channel_tail(fabric.kinds.packet, id);
        }
    }

    /// A send on `port`, `ahead` steps before it, each step reading what the one before loaded:
    /// the port's class bits, its wire and the wire's channel (4); the queue of the class it
    /// will serve and the channel's slot the packet will be written into (3); that queue's head
    /// (2); and the counters of the ingress port the head came in on, which its departure
    /// releases (1).
    #[inline]
    pub(crate) fn warm_tx(&self, fabric: &FabricIndex, q: &EventQueue, port: u16, ahead: usize) {
        let (Some(p), Some(wire)) = (self.egress.get(port as usize), self.wires.get(port as usize)) else {
            return;
        };
        if ahead >= 4 {
            prefetch(&p.nonempty);
            wire.warm();
            self.warm_wire_channel(fabric, q, port);
            return;
        }
        let e = p.eligible();
        if e == 0 {
            return;
        }
        // The class strict priority serves (under DWRR, a guess: this is a hint).
        let queue = &p.queues[(7 - e.leading_zeros() as usize) & 7];
        if ahead == 3 {
            prefetch(queue);
            self.warm_wire_slot(fabric, q, port);
        } else if let Some(head) = queue.front() {
            if ahead == 2 {
                prefetch(head);
            } else if let Some(ingress) = self.ingress.get(head.in_port as usize) {
                engine::prefetch::prefetch_lines(ingress);
            }
        }
    }
}
