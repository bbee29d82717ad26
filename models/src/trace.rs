//! Named trace points. A model emits a `TraceEvent` at each point it passes; tracer plugins
//! subscribe by adding a `Tracer` to the `Tracers` resource before the run starts. The model
//! never knows who listens, and when nobody does, emitting costs one branch.
//!
//! | point | emitted by | when |
//! | --- | --- | --- |
//! | `PacketSent` | NIC | a frame enters the port's transmit FIFO (its first bit leaves at `packet.sent_at`) |
//! | `PacketReceived` | NIC | a frame reaches the NIC |
//! | `PacketDropped` | NIC | data dropped (receive pool full, or out of sequence) |
//! | `PfcSent` / `PfcReceived` | NIC | a PAUSE or RESUME frame leaves or reaches the NIC |
//! | `WqePosted` / `WqeCompleted` | NIC | the application posts a WQE (`post_wqe`, before the doorbell crosses PCIe) / it completes |
//! | `SwitchSent` | fabric | a frame left a tapped switch port toward another switch (`fabric::tap_switch_ports`) |
//!
//! The fabric passes `SwitchSent` only for the ports a tracer asked for, and only then does its
//! handler carry the check at all (it is swapped for the instrumented one, as with faults).

use crate::packet::Packet;
use bevy_ecs::prelude::*;
use engine::SimTime;

/// A named trace point (`TracePoint::name`, as ns-3 names them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TracePoint {
    /// `QpTx`: a frame enters a NIC port's transmit FIFO.
    PacketSent,
    /// `QpRx`: a frame reaches a NIC.
    PacketReceived,
    /// `QpRxDrop`: a NIC dropped data (receive pool full, or out of sequence).
    PacketDropped,
    /// `PfcTx`: a PAUSE or RESUME frame leaves a NIC.
    PfcSent,
    /// `PfcRx`: a PAUSE or RESUME frame reaches a NIC.
    PfcReceived,
    /// `WqePosted`: the application posts a WQE (before the doorbell crosses PCIe).
    WqePosted,
    /// `WqeCompleted`: a WQE completed.
    WqeCompleted,
    /// `SwTx`: a frame left a tapped switch port toward another switch. Reported when it reaches
    /// the far switch; the event's `time` is when its first bit left, up to the link's delay (the
    /// forwarding latency included) and the frame's serialization before the report.
    SwitchSent,
}

impl TracePoint {
    /// The point's name, as tracers and docs use it.
    pub fn name(self) -> &'static str {
        match self {
            TracePoint::PacketSent => "QpTx",
            TracePoint::PacketReceived => "QpRx",
            TracePoint::PacketDropped => "QpRxDrop",
            TracePoint::PfcSent => "PfcTx",
            TracePoint::PfcReceived => "PfcRx",
            TracePoint::WqePosted => "WqePosted",
            TracePoint::WqeCompleted => "WqeCompleted",
            TracePoint::SwitchSent => "SwTx",
        }
    }
}

/// One pass through a trace point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceEvent {
    /// Which point.
    pub point: TracePoint,
    /// When the model passed the point; events reach tracers in this order.
    pub time: SimTime,
    /// The host (node id) whose NIC emitted it; for `SwitchSent`, the switch.
    pub node: u32,
    /// The switch's egress port, for `SwitchSent`; 0 otherwise.
    pub port: u16,
    /// The frame, for packet and PFC points.
    pub packet: Option<Packet>,
    /// (connection id, WQE number), for WQE points.
    pub wqe: Option<(u32, u64)>,
}

/// A subscriber.
pub trait Tracer: Send + Sync + 'static {
    /// Takes one event, in time order.
    fn record(&mut self, event: &TraceEvent);
}

/// The subscribers. Models check `is_enabled()` once at startup and buffer nothing otherwise.
#[derive(Resource, Default)]
pub struct Tracers {
    list: Vec<Box<dyn Tracer>>,
}

impl Tracers {
    /// Adds a subscriber; do it before the run starts.
    pub fn subscribe(&mut self, tracer: impl Tracer) {
        self.list.push(Box::new(tracer));
    }
    /// Whether anyone subscribed.
    pub fn is_enabled(&self) -> bool {
        !self.list.is_empty()
    }
    /// Passes `event` to every subscriber.
    pub fn emit(&mut self, event: &TraceEvent) {
        for t in &mut self.list {
            t.record(event);
        }
    }
    /// Drains a model's buffer of events into the subscribers.
    pub fn emit_all(&mut self, events: &mut Vec<TraceEvent>) {
        for e in events.drain(..) {
            self.emit(&e);
        }
    }
}

/// A tracer that keeps every event in memory: for tests.
#[derive(Clone, Default)]
pub struct MemoryTracer(pub std::sync::Arc<std::sync::Mutex<Vec<TraceEvent>>>);

impl Tracer for MemoryTracer {
    fn record(&mut self, event: &TraceEvent) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(*event);
    }
}

impl MemoryTracer {
    /// A copy of the events so far.
    pub fn events(&self) -> Vec<TraceEvent> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
    /// How many events passed `point`.
    pub fn count(&self, point: TracePoint) -> usize {
        self.events().iter().filter(|e| e.point == point).count()
    }
}
