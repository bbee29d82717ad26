//! Model state that a handler owns while events run: the engine's one ownership model.
//!
//! A model whose hot path would otherwise look its state up in the `World` once per event (a
//! switch per hop, a NIC per packet) keeps that state in a `Store<T>`: a resource holding one row
//! of `T` per entity it belongs to (a host, a switch), in a dense order the model indexes by.
//! Its handler holds the rows with a `Held<T>`: at its first event after a pause it takes them
//! out of the store, reaches a row by index while events run, and gives them back when the loop
//! stops (`Handler::pause`, at every beacon tick and at the end of the run). Between segments,
//! where beacon columns, the `Finish` phase and tests look, the store has its rows; while events
//! run, any look at the store panics naming the holder, in every build, instead of seeing an
//! empty table.
//!
//! ```
//! use bevy_ecs::prelude::*;
//! use engine::prelude::*;
//! use engine::store::{Held, Store};
//!
//! struct Counter(u64);
//!
//! struct Count(Held<Counter>);
//! impl Handler for Count {
//!     fn handle(&mut self, world: &mut World, _: &mut EventQueue, ev: &SimEvent) {
//!         self.0.rows(world)[ev.target as usize].0 += 1;
//!     }
//!     fn pause(&mut self, world: &mut World) {
//!         self.0.put_back(world);
//!     }
//! }
//!
//! let mut app = App::new();
//! let mut store = Store::default();
//! let host = app.world.spawn_empty().id();
//! store.push(host, Counter(0));
//! app.insert_resource(store);
//! let kind = app.add_handler("count", Count(Held::new("count")));
//! let source = app.queue().add_source();
//! app.queue().schedule(SimTime::ZERO, source, kind, 0, 0);
//! app.run(RunOptions { stop: SimTime::from_us(1), beacon_interval: SimTime::from_us(1), progress: None });
//! assert_eq!(app.world.resource::<Store<Counter>>().of(host).unwrap().0, 1);
//! ```

use bevy_ecs::prelude::*;
use std::any::type_name;

/// One row of `T` per entity, indexed densely; see the module docs.
#[derive(Resource)]
pub struct Store<T: Send + Sync + 'static> {
    rows: Vec<T>,
    entities: Vec<Entity>,
    /// Who holds the rows while events run.
    held_by: Option<&'static str>,
}

impl<T: Send + Sync + 'static> Default for Store<T> {
    fn default() -> Self {
        Store {
            rows: Vec::new(),
            entities: Vec::new(),
            held_by: None,
        }
    }
}

impl<T: Send + Sync + 'static> Store<T> {
    /// Adds `row` for `entity`; returns its index.
    pub fn push(&mut self, entity: Entity, row: T) -> usize {
        self.check();
        self.rows.push(row);
        self.entities.push(entity);
        self.rows.len() - 1
    }

    /// Row `i`.
    pub fn get(&self, i: usize) -> Option<&T> {
        self.check();
        self.rows.get(i)
    }

    /// Row `i`, mutably (panics while a handler holds the rows).
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.check();
        self.rows.get_mut(i)
    }

    /// The row of `entity` (a linear search: for tests and reports, not hot paths).
    pub fn of(&self, entity: Entity) -> Option<&T> {
        self.check();
        let i = self.entities.iter().position(|&e| e == entity)?;
        self.rows.get(i)
    }

    /// Every row with its entity, in index order.
    pub fn iter(&self) -> impl Iterator<Item = (Entity, &T)> {
        self.check();
        self.entities.iter().copied().zip(&self.rows)
    }

    /// Every row, in index order.
    pub fn rows(&self) -> &[T] {
        self.check();
        &self.rows
    }

    /// The entity of each row (readable while held: entities do not move).
    pub fn entities(&self) -> &[Entity] {
        &self.entities
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// Who holds the rows now, if anyone.
    pub fn held_by(&self) -> Option<&'static str> {
        self.held_by
    }

    #[inline]
    fn check(&self) {
        if let Some(by) = self.held_by {
            held_panic::<T>(by)
        }
    }
}

#[cold]
#[inline(never)]
fn held_panic<T>(by: &str) -> ! {
    panic!(
        "Store<{}> is held by `{by}` while events run: read it between segments (a beacon column, \
         Finish, a test after the run), or ask its owner by event",
        type_name::<T>()
    )
}

/// A handler's hold on the `Store<T>` in the world: see the module docs.
pub struct Held<T: Send + Sync + 'static> {
    rows: Vec<T>,
    held: bool,
    by: &'static str,
}

impl<T: Send + Sync + 'static> Held<T> {
    /// A hold that is not yet taken; `by` names the holder in messages.
    pub fn new(by: &'static str) -> Self {
        Held {
            rows: Vec::new(),
            held: false,
            by,
        }
    }

    /// The rows, taken from the store first if this is the first event since a pause.
    #[inline]
    pub fn rows(&mut self, world: &mut World) -> &mut [T] {
        if !self.held {
            self.take(world);
        }
        &mut self.rows
    }

    /// Takes the rows now if not yet held; after it, `held_rows` reaches them without the world.
    #[inline]
    pub fn ensure(&mut self, world: &mut World) {
        if !self.held {
            self.take(world);
        }
    }

    /// The rows as held (empty before `ensure` or `rows` since the last pause).
    #[inline]
    pub fn held_rows(&mut self) -> &mut [T] {
        &mut self.rows
    }

    /// Whether a handler holds the rows now.
    #[inline]
    pub fn is_held(&self) -> bool {
        self.held
    }

    /// The rows as held, shared (for warming them: `Handler::prefetch`).
    #[inline]
    pub fn held_ref(&self) -> &[T] {
        &self.rows
    }

    #[cold]
    #[inline(never)]
    fn take(&mut self, world: &mut World) {
        let Some(mut store) = world.get_resource_mut::<Store<T>>() else {
            panic!(
                "`{}` holds a Store<{}>, and the world has none",
                self.by,
                type_name::<T>()
            )
        };
        if let Some(other) = store.held_by {
            panic!(
                "`{}` takes Store<{}>, which `{other}` holds: one handler owns a store",
                self.by,
                type_name::<T>()
            )
        }
        self.rows = std::mem::take(&mut store.rows);
        store.held_by = Some(self.by);
        self.held = true;
    }

    /// Gives the rows back to the store (the loop stopped); nothing if not held.
    pub fn put_back(&mut self, world: &mut World) {
        if !self.held {
            return;
        }
        let mut store = world.resource_mut::<Store<T>>();
        store.rows = std::mem::take(&mut self.rows);
        store.held_by = None;
        self.held = false;
    }
}

/// A handler's hold on two stores whose rows pair up by index (a host's NIC and its port):
/// while held, row `i` of each sits side by side in one `(A, B)`, so one index reaches both,
/// in one place in memory. Taken at the first event after a pause and given back, split again,
/// in `put_back`, both stores together; a look at either while held panics as with `Held`.
pub struct HeldPair<A: Send + Sync + 'static, B: Send + Sync + 'static> {
    rows: Vec<(A, B)>,
    a: Held<A>,
    b: Held<B>,
}

impl<A: Send + Sync + 'static, B: Send + Sync + 'static> HeldPair<A, B> {
    /// A hold that is not yet taken; `by` names the holder in messages.
    pub fn new(by: &'static str) -> Self {
        HeldPair {
            rows: Vec::new(),
            a: Held::new(by),
            b: Held::new(by),
        }
    }

    /// The paired rows, taken from both stores first if this is the first event since a pause.
    #[inline]
    pub fn rows(&mut self, world: &mut World) -> &mut [(A, B)] {
        if !self.a.held {
            self.take(world);
        }
        &mut self.rows
    }

    /// The rows as held (empty before `rows` since the last pause).
    #[inline]
    pub fn held_rows(&mut self) -> &mut [(A, B)] {
        &mut self.rows
    }

    /// The rows as held, shared (for warming them: `Handler::prefetch`).
    #[inline]
    pub fn held_ref(&self) -> &[(A, B)] {
        &self.rows
    }

    /// Whether the rows are held now.
    #[inline]
    pub fn is_held(&self) -> bool {
        self.a.held
    }

    #[cold]
    #[inline(never)]
    fn take(&mut self, world: &mut World) {
        self.a.take(world);
        self.b.take(world);
        let (a, b) = (&mut self.a.rows, &mut self.b.rows);
        assert_eq!(
            a.len(),
            b.len(),
            "`{}` pairs Store<{}> with Store<{}>, which have different row counts",
            self.a.by,
            type_name::<A>(),
            type_name::<B>()
        );
        self.rows.extend(a.drain(..).zip(b.drain(..)));
    }

    /// Gives the rows back to their stores (the loop stopped); nothing if not held.
    pub fn put_back(&mut self, world: &mut World) {
        if !self.a.held {
            return;
        }
        for (a, b) in self.rows.drain(..) {
            self.a.rows.push(a);
            self.b.rows.push(b);
        }
        self.a.put_back(world);
        self.b.put_back(world);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world_with(rows: &[u32]) -> (World, Vec<Entity>) {
        let mut world = World::new();
        let mut store = Store::default();
        let mut es = Vec::new();
        for &r in rows {
            let e = world.spawn_empty().id();
            store.push(e, r);
            es.push(e);
        }
        world.insert_resource(store);
        (world, es)
    }

    #[test]
    fn a_hold_takes_the_rows_and_puts_them_back_changed() {
        let (mut world, es) = world_with(&[1, 2, 3]);
        let mut held = Held::<u32>::new("test");
        held.rows(&mut world)[1] += 40;
        assert_eq!(world.resource::<Store<u32>>().held_by(), Some("test"));
        assert_eq!(world.resource::<Store<u32>>().len(), 3, "the length stays readable");
        held.put_back(&mut world);
        let store = world.resource::<Store<u32>>();
        assert_eq!(store.rows(), &[1, 42, 3]);
        assert_eq!(store.of(es[1]), Some(&42));
        assert_eq!(store.iter().map(|(e, _)| e).collect::<Vec<_>>(), es);
        held.put_back(&mut world);
        assert_eq!(
            world.resource::<Store<u32>>().rows(),
            &[1, 42, 3],
            "a second put_back is nothing"
        );
    }

    #[test]
    #[should_panic(expected = "Store<u32> is held by `the fabric` while events run")]
    fn a_look_at_held_rows_panics_naming_the_holder() {
        let (mut world, es) = world_with(&[1]);
        let mut held = Held::<u32>::new("the fabric");
        held.ensure(&mut world);
        world.resource::<Store<u32>>().of(es[0]);
    }

    #[test]
    #[should_panic(expected = "`b` takes Store<u32>, which `a` holds")]
    fn two_handlers_cannot_hold_one_store() {
        let (mut world, _) = world_with(&[1]);
        Held::<u32>::new("a").ensure(&mut world);
        Held::<u32>::new("b").ensure(&mut world);
    }

    #[test]
    #[should_panic(expected = "`nic` holds a Store<u8>, and the world has none")]
    fn a_hold_on_a_missing_store_says_so() {
        let mut world = World::new();
        Held::<u8>::new("nic").ensure(&mut world);
    }

    #[test]
    fn a_pair_hold_zips_two_stores_and_splits_them_back() {
        let (mut world, _) = world_with(&[1, 2]);
        let mut other = Store::default();
        let es: Vec<Entity> = world.resource::<Store<u32>>().entities().to_vec();
        for (i, &e) in es.iter().enumerate() {
            other.push(e, format!("row {i}"));
        }
        world.insert_resource(other);
        let mut held = HeldPair::<u32, String>::new("pair");
        let rows = held.rows(&mut world);
        rows[1].0 += 40;
        rows[1].1.push('!');
        assert_eq!(world.resource::<Store<String>>().held_by(), Some("pair"));
        assert_eq!(world.resource::<Store<u32>>().held_by(), Some("pair"));
        held.put_back(&mut world);
        assert_eq!(world.resource::<Store<u32>>().rows(), &[1, 42]);
        assert_eq!(world.resource::<Store<String>>().rows(), &["row 0", "row 1!"]);
        assert!(!held.is_held());
        assert_eq!(
            held.rows(&mut world)[0],
            (1, "row 0".to_string()),
            "taken again after a pause"
        );
    }
}
