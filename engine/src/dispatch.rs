//! Dispatch: the handler table and the engine's loop.
//!
//! A handler is registered per event kind and keeps its own cached state (its `QueryState`s, the
//! kinds it schedules) between calls, so the hot path is a heap pop, one indirect call and the
//! model's own work. Measured on this machine (DESIGN.md): `Schedule::run` costs ~180 ns and a
//! one-shot system ~26 ns, against a budget of ~40-60 ns per event, so handlers are exclusive
//! functions of `(&mut World, &mut EventQueue, SimEvent)` rather than systems run per event. bevy
//! `Schedule`s serve the phases (build, start, beacon tick, finish), which run rarely.

use crate::event::{EventKind, EventQueue, SimEvent};
use crate::time::SimTime;
use bevy_ecs::world::World;

/// Handles one kind of event. Implemented for any `FnMut(&mut World, &mut EventQueue, SimEvent)`;
/// a struct implementing it can hold `QueryState`s built once at startup.
pub trait Handler: Send + 'static {
    fn handle(&mut self, world: &mut World, queue: &mut EventQueue, event: SimEvent);
}

impl<F> Handler for F
where
    F: FnMut(&mut World, &mut EventQueue, SimEvent) + Send + 'static,
{
    #[inline]
    fn handle(&mut self, world: &mut World, queue: &mut EventQueue, event: SimEvent) {
        self(world, queue, event)
    }
}

/// The dispatch table: one handler per event kind, and each kind's name for messages.
#[derive(Default)]
pub struct Handlers {
    names: Vec<&'static str>,
    table: Vec<Option<Box<dyn Handler>>>,
}

impl Handlers {
    pub fn add_kind(&mut self, name: &'static str) -> EventKind {
        let id = self.names.len();
        assert!(id < u16::MAX as usize, "too many event kinds");
        self.names.push(name);
        self.table.push(None);
        EventKind(id as u16)
    }

    pub fn kind_name(&self, kind: EventKind) -> &'static str {
        self.names.get(kind.0 as usize).copied().unwrap_or("<unknown>")
    }

    /// Sets the handler of `kind`. A kind has one handler: a second registration is a plugin bug.
    pub fn set(&mut self, kind: EventKind, handler: Box<dyn Handler>) {
        let slot = &mut self.table[kind.0 as usize];
        assert!(
            slot.is_none(),
            "event kind `{}` already has a handler",
            self.names[kind.0 as usize]
        );
        *slot = Some(handler);
    }

    pub fn kinds(&self) -> usize {
        self.names.len()
    }

    /// Kinds that were declared but that nothing handles (checked before a run starts).
    pub fn unhandled(&self) -> Vec<&'static str> {
        self.names
            .iter()
            .zip(&self.table)
            .filter(|(_, h)| h.is_none())
            .map(|(n, _)| *n)
            .collect()
    }

    /// Handles every event before `stop` in key order. Returns the number handled. `on_each`
    /// runs between events (a progress bar's hook); it must be cheap.
    pub fn run(&mut self, world: &mut World, queue: &mut EventQueue, stop: SimTime) -> u64 {
        let start = queue.processed();
        while let Some(ev) = queue.pop_before(stop) {
            match self.table.get_mut(ev.kind.0 as usize) {
                Some(Some(h)) => h.handle(world, queue, ev),
                _ => panic!("no handler for event kind {} ({})", ev.kind.0, self.kind_name(ev.kind)),
            }
        }
        queue.processed() - start
    }
}
