//! The glue between the fabric's events and the switch model: route and admit an arriving packet,
//! start an egress serializer, send the PFC frames the model decided on.
//!
//! The fabric's handler holds the switches while events run (`fabric::FabricHandler`) and calls
//! these with the one it needs. A switch egress port has at most one pending `fabric.switch_tx`,
//! at the time its serializer frees, and only while it has a packet it may send.

use super::{Frames, Switch};
use crate::fabric::FabricIndex;
use crate::packet::{Packet, PacketKind};
use crate::switch::{record_hop, route, tx_data};
use engine::prelude::*;

/// A packet reached switch `sw` on `in_port` (after the forwarding latency).
#[inline]
pub fn receive<const INT: bool>(fabric: &FabricIndex, sw: &mut Switch, q: &mut EventQueue, in_port: u16, pkt: Packet) {
    let now = q.now();
    let node = sw.node;
    let mut frames = Frames::default();
    if pkt.kind == PacketKind::Pfc {
        // The frame pauses or resumes the egress of the port it came in on.
        sw.on_pfc(in_port, pkt.class, pkt.aux != 0);
        if pkt.aux == 0 {
            kick::<INT>(fabric, sw, q, in_port, &mut frames);
        }
    } else {
        let Some(out) = route(fabric, node, &pkt) else {
            sw.drop_unroutable(&pkt);
            return;
        };
        if sw.can_cut_through(now, out, pkt.class) {
            // The port is free and nothing waits: admitted and sent in one step.
            // INT is read from the arriving packet: reading the one `forward` returns would keep
            // that packet in memory instead of moving it straight into the channel.
            let (int, kind) = (pkt.int, pkt.kind);
            if let Some(pkt) = sw.forward(in_port, out, pkt, &mut frames) {
                if INT && int != 0 {
                    record_hop(fabric, int, kind, sw.wire(out), now, sw.port_bytes(out));
                }
                sw.wire_mut(out).launch(q, now, pkt);
            }
        } else if sw.enqueue(in_port, out, pkt, &mut frames) {
            kick::<INT>(fabric, sw, q, out, &mut frames);
        }
    }
    if !frames.is_empty() {
        launch_frames(fabric, sw, q, &frames);
    }
}

/// `fabric.switch_tx` at `sw`'s egress `port`: its serializer is free (unless a PFC frame took
/// it meanwhile); send the next packet.
pub fn on_tx<const INT: bool>(fabric: &FabricIndex, sw: &mut Switch, q: &mut EventQueue, port: u16) {
    let mut frames = Frames::default();
    *sw.tx_pending(port) = false;
    kick::<INT>(fabric, sw, q, port, &mut frames);
    if !frames.is_empty() {
        launch_frames(fabric, sw, q, &frames);
    }
}

/// `fabric.send_pfc`: `sw` sends a PAUSE or RESUME out of a port as if its own PFC logic had
/// decided to (for tests and fault injection; its ingress counters do not change).
pub fn on_send_pfc(fabric: &FabricIndex, sw: &mut Switch, q: &mut EventQueue, port: u16, class: u8, pause: bool) {
    let mut frames = Frames::default();
    frames.push(port, class, pause);
    launch_frames(fabric, sw, q, &frames);
}

/// Sends PFC frames out of `node`'s ports. They go on the wire as soon as the serializer frees,
/// ahead of any queued data (which the switch holds until it launches it); a data `switch_tx`
/// that finds the serializer taken by one waits for it. Rare: callers skip it when there are none.
#[cold]
fn launch_frames(fabric: &FabricIndex, sw: &mut Switch, q: &mut EventQueue, frames: &Frames) {
    let now = q.now();
    let node = sw.node;
    for &(port, class, pause) in frames.as_slice() {
        let mut frame = sw.pfc_frame(now, class, pause);
        frame.dst = fabric.topology.port(node, port).peer_node;
        sw.wire_mut(port).launch(q, now, frame);
    }
}

/// Starts egress `port` if it may: sends now if the serializer is free, else makes sure one
/// `switch_tx` is pending for when it frees.
#[inline]
fn kick<const INT: bool>(fabric: &FabricIndex, sw: &mut Switch, q: &mut EventQueue, port: u16, frames: &mut Frames) {
    if *sw.tx_pending(port) || !sw.has_eligible(port) {
        return;
    }
    let now = q.now();
    let d = sw.wire(port);
    if !d.idle_at(now) {
        d.schedule_send(q, d.busy_until, fabric.kinds.switch_tx, tx_data(sw.node, port));
        *sw.tx_pending(port) = true;
        return;
    }
    let Some(pkt) = sw.dequeue(port, frames) else {
        return;
    };
    if INT && pkt.int != 0 {
        record_hop(fabric, pkt.int, pkt.kind, sw.wire(port), now, sw.port_bytes(port));
    }
    let d = sw.wire_mut(port);
    let end = d.launch(q, now, pkt);
    if sw.has_eligible(port) {
        sw.wire(port)
            .schedule_send(q, end, fabric.kinds.switch_tx, tx_data(sw.node, port));
        *sw.tx_pending(port) = true;
    }
}
