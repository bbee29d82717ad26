//! Event kinds with a typed payload: a kind declared as `TypedKind<Entity>` is scheduled with an
//! `Entity` and read back as one, so no handler unpacks a convention (`Entity::to_bits` in the
//! event's word) by hand, and a kind's payload type is part of the contract that declares it.

use super::{EventKind, EventQueue, SimEvent, SourceId};
use crate::time::SimTime;
use bevy_ecs::entity::Entity;
use std::marker::PhantomData;

/// What an event's one word of data can carry, losslessly.
pub trait Payload: Copy {
    /// The word scheduled with the event.
    fn to_word(self) -> u64;
    /// The value back from the word `to_word` made.
    fn from_word(word: u64) -> Self;
}

impl Payload for Entity {
    #[inline]
    fn to_word(self) -> u64 {
        self.to_bits()
    }
    #[inline]
    fn from_word(word: u64) -> Self {
        Entity::from_bits(word)
    }
}

impl Payload for u32 {
    #[inline]
    fn to_word(self) -> u64 {
        self as u64
    }
    #[inline]
    fn from_word(word: u64) -> Self {
        debug_assert!(word <= u32::MAX as u64, "a u32 payload holds {word}");
        word as u32
    }
}

impl Payload for u64 {
    #[inline]
    fn to_word(self) -> u64 {
        self
    }
    #[inline]
    fn from_word(word: u64) -> Self {
        word
    }
}

impl Payload for () {
    #[inline]
    fn to_word(self) -> u64 {
        0
    }
    #[inline]
    fn from_word(_: u64) -> Self {}
}

/// An event kind whose data is a `P`. It is an `EventKind` for the dispatch table (`kind`,
/// comparisons with `SimEvent::kind`, `From`), and schedules and reads its payload as a `P`.
pub struct TypedKind<P> {
    kind: EventKind,
    payload: PhantomData<fn() -> P>,
}

impl<P> Clone for TypedKind<P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P> Copy for TypedKind<P> {}

impl<P> std::fmt::Debug for TypedKind<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TypedKind<{}>({})", std::any::type_name::<P>(), self.kind.0)
    }
}

impl<P: Payload> TypedKind<P> {
    /// Types a kind the dispatch table handed out (`App::add_typed_kind` does both).
    pub const fn new(kind: EventKind) -> Self {
        TypedKind {
            kind,
            payload: PhantomData,
        }
    }

    /// The untyped kind, for the dispatch table.
    #[inline]
    pub const fn kind(self) -> EventKind {
        self.kind
    }

    /// Schedules an event of this kind carrying `payload` (`EventQueue::schedule`).
    #[inline]
    pub fn schedule(self, q: &mut EventQueue, time: SimTime, source: SourceId, target: u32, payload: P) {
        q.schedule(time, source, self.kind, target, payload.to_word());
    }

    /// The payload of `ev`, an event of this kind.
    #[inline]
    pub fn payload(self, ev: &SimEvent) -> P {
        debug_assert_eq!(ev.kind, self.kind, "payload read from an event of another kind");
        P::from_word(ev.data)
    }
}

impl<P> From<TypedKind<P>> for EventKind {
    fn from(k: TypedKind<P>) -> EventKind {
        k.kind
    }
}

impl<P> PartialEq<TypedKind<P>> for EventKind {
    #[inline]
    fn eq(&self, other: &TypedKind<P>) -> bool {
        *self == other.kind
    }
}

impl<P> PartialEq for TypedKind<P> {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
    }
}
impl<P> Eq for TypedKind<P> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip_through_the_event_word() {
        let mut q = EventQueue::new();
        let source = q.add_source();
        let wqes: TypedKind<Entity> = TypedKind::new(EventKind(3));
        let ids: TypedKind<u32> = TypedKind::new(EventKind(4));
        let e = bevy_ecs::world::World::new().spawn_empty().id();
        wqes.schedule(&mut q, SimTime(5), source, 7, e);
        ids.schedule(&mut q, SimTime(6), source, 8, u32::MAX);
        let first = q.pop_before(SimTime::MAX).unwrap();
        assert!(first.kind == wqes && first.target == 7);
        assert_eq!(wqes.payload(&first), e);
        let second = q.pop_before(SimTime::MAX).unwrap();
        assert_eq!(ids.payload(&second), u32::MAX);
        assert_eq!(EventKind::from(ids), EventKind(4));
    }
}
