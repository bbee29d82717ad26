//! Taps on switch ports: a capture asks for the frames leaving chosen switch ports toward other
//! switches (`tap_switch_ports`), and the fabric's handler reports each as a `SwitchSent` trace
//! event when it reaches the far switch. Only a tapped run's handler carries the check: tapping
//! swaps in the instrumented handler (`instrument`, the one built for faults, also used for
//! in-band telemetry), so the hot path of a run without a tap is the one it always was.

use crate::packet::Packet;
use crate::switch::SwitchModel;
use crate::trace::{TraceEvent, TracePoint, Tracers};
use bevy_ecs::prelude::*;
use engine::prelude::*;
use engine::store::Store;

/// The switch ports (node id, egress port) whose frames are reported.
#[derive(Resource, Clone, Debug, Default)]
pub struct SwitchTaps(pub Vec<(u32, u16)>);

/// Swaps in the instrumented fabric handler of the run's switch model (set by the fabric plugin).
#[derive(Resource, Clone, Copy)]
pub(crate) struct Instrument(pub fn(&mut App));

/// Swaps in the checked fabric handler (faults, taps, INT) of the run's switch model. Call it
/// after the fabric's plugin is added, before the run.
pub fn instrument(app: &mut App) {
    let instrument = app
        .world
        .get_resource::<Instrument>()
        .copied()
        .expect("the fabric's plugin must be added first");
    (instrument.0)(app);
}

/// Reports the frames leaving `ports` (switch node, egress port) as `SwitchSent` trace events to
/// the run's `Tracers`. Call it after the fabric's plugin is added, before the run.
pub fn tap_switch_ports(app: &mut App, ports: Vec<(u32, u16)>) {
    app.insert_resource(SwitchTaps(ports));
    instrument(app);
}

/// A tapped link direction, as the handler reads it.
#[derive(Clone, Copy)]
struct Tapped {
    node: u32,
    port: u16,
    /// The direction's delay (forwarding latency folded in) and rate: when the first bit left.
    delay: SimTime,
    rate: Rate,
}

/// The handler's taps: by link direction id, and the events waiting to reach the tracers.
pub(crate) struct Taps {
    by_dir: Vec<Option<Tapped>>,
    events: Vec<TraceEvent>,
}

impl Taps {
    /// The taps the world asks for, read off the switches' own link directions; `None` without.
    pub(crate) fn new<S: SwitchModel>(world: &World, num_hosts: usize) -> Option<Box<Taps>> {
        let taps = world.get_resource::<SwitchTaps>()?;
        let switches = world.resource::<Store<S>>();
        let mut by_dir = Vec::new();
        for &(node, port) in &taps.0 {
            let Some(sw) = (node as usize)
                .checked_sub(num_hosts)
                .and_then(|i| switches.rows().get(i))
            else {
                continue;
            };
            let w = sw.wire(port);
            let id = w.id as usize;
            if by_dir.len() <= id {
                by_dir.resize(id + 1, None);
            }
            by_dir[id] = Some(Tapped {
                node,
                port,
                delay: w.delay,
                rate: w.rate,
            });
        }
        Some(Box::new(Taps {
            by_dir,
            events: Vec::new(),
        }))
    }

    /// `pkt` reached the far end of direction `dir` at `now`: reported if `dir` is tapped.
    #[inline]
    pub(crate) fn saw(&mut self, dir: u32, now: SimTime, pkt: &Packet) {
        if let Some(Some(t)) = self.by_dir.get(dir as usize) {
            let ser = t.rate.serialization_time(pkt.bytes as u64);
            self.events.push(TraceEvent {
                point: TracePoint::SwitchSent,
                time: now.saturating_sub(t.delay).saturating_sub(ser),
                node: t.node,
                port: t.port,
                packet: Some(*pkt),
                wqe: None,
            });
        }
    }

    /// Hands the waiting events to the tracers.
    pub(crate) fn flush(&mut self, world: &mut World) {
        if !self.events.is_empty()
            && let Some(mut t) = world.get_resource_mut::<Tracers>()
        {
            t.emit_all(&mut self.events);
        }
        self.events.clear();
    }
}
