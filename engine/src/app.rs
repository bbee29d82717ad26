//! `App` and `Plugin`: a small builder in bevy's style (bevy_app itself is not a dependency).
//!
//! A plugin's `build` only registers things: resources, event kinds and their handlers, systems
//! in the phase schedules, beacon columns and records. A `PluginGroup` lets a research fork
//! `disable::<RoceNicPlugin>()` and add its own NIC without touching the rest.

use crate::dispatch::{Handler, Handlers};
use crate::event::{EventKind, EventQueue};
use crate::phases::{BeaconTick, Build, Finish, Sample, Start};
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::{IntoScheduleConfigs, ScheduleLabel};
use std::any::TypeId;

/// Something that adds behaviour to an `App`.
pub trait Plugin: Send + Sync + 'static {
    /// Registers the plugin's resources, event kinds, handlers, systems and beacon columns.
    fn build(&self, app: &mut App);
    /// The plugin's name in messages; its type name by default.
    fn name(&self) -> &str {
        std::any::type_name::<Self>()
    }
}

/// Plugins that travel together; `build` lists them in order.
pub trait PluginGroup {
    /// The group's plugins, in the order they are added.
    fn build(self) -> PluginGroupBuilder;
}

/// An ordered list of plugins in which a fork can disable one and add its replacement.
#[derive(Default)]
pub struct PluginGroupBuilder {
    plugins: Vec<(TypeId, Box<dyn Plugin>, bool)>,
}

impl PluginGroupBuilder {
    /// Appends `plugin`, replacing a plugin of the same type already in the group.
    #[allow(clippy::should_implement_trait)] // bevy's name for it
    pub fn add<P: Plugin>(mut self, plugin: P) -> Self {
        self.plugins.retain(|(id, _, _)| *id != TypeId::of::<P>());
        self.plugins.push((TypeId::of::<P>(), Box::new(plugin), true));
        self
    }
    /// Keeps `P` out of the app; panics if the group has no `P` (a fork's typo, not an input).
    pub fn disable<P: Plugin>(mut self) -> Self {
        let entry = self.plugins.iter_mut().find(|(id, _, _)| *id == TypeId::of::<P>());
        entry
            .unwrap_or_else(|| panic!("the group has no plugin {}", std::any::type_name::<P>()))
            .2 = false;
        self
    }
    /// The names of the plugins not disabled, in order.
    pub fn enabled_names(&self) -> Vec<&str> {
        self.plugins.iter().filter(|p| p.2).map(|p| p.1.name()).collect()
    }
}

impl PluginGroup for PluginGroupBuilder {
    fn build(self) -> PluginGroupBuilder {
        self
    }
}

/// What `add_plugins` takes: one plugin, a group, or a tuple of plugins.
pub trait Plugins<Marker> {
    /// Adds the plugin or plugins to `app`, in order.
    fn add_to(self, app: &mut App);
}
/// `Plugins` marker for one plugin.
pub struct PluginMarker;
/// `Plugins` marker for a plugin group.
pub struct GroupMarker;
impl<P: Plugin> Plugins<PluginMarker> for P {
    fn add_to(self, app: &mut App) {
        app.add_plugin(Box::new(self));
    }
}
impl<G: PluginGroup> Plugins<GroupMarker> for G {
    fn add_to(self, app: &mut App) {
        for (_, p, enabled) in self.build().plugins {
            if enabled {
                app.add_plugin(p);
            }
        }
    }
}

/// The simulation being assembled: a bevy `World`, the event queue, the dispatch table and the
/// phase schedules.
pub struct App {
    /// The world: resources, entities and the phase schedules.
    pub world: World,
    pub(crate) handlers: Handlers,
    plugin_names: Vec<String>,
}

impl Default for App {
    fn default() -> Self {
        Self::new()
    }
}

impl App {
    /// An empty app: the event queue, beacon columns and the five phase schedules.
    pub fn new() -> Self {
        let mut world = World::new();
        world.insert_resource(EventQueue::new());
        world.insert_resource(crate::beacon::BeaconColumns::default());
        for label in [
            Build.intern(),
            Start.intern(),
            BeaconTick.intern(),
            Sample.intern(),
            Finish.intern(),
        ] {
            let mut schedule = Schedule::new(label);
            // Phases run rarely and must be deterministic: one thread, ambiguities are errors.
            schedule.set_executor(bevy_ecs::schedule::SingleThreadedExecutor::new());
            schedule.set_build_settings(bevy_ecs::schedule::ScheduleBuildSettings {
                ambiguity_detection: bevy_ecs::schedule::LogLevel::Error,
                ..Default::default()
            });
            world.add_schedule(schedule);
        }
        App {
            world,
            handlers: Handlers::default(),
            plugin_names: Vec::new(),
        }
    }

    /// Adds a plugin, a group or a tuple of plugins, building each in order.
    pub fn add_plugins<M>(&mut self, plugins: impl Plugins<M>) -> &mut Self {
        plugins.add_to(self);
        self
    }

    fn add_plugin(&mut self, plugin: Box<dyn Plugin>) {
        self.plugin_names.push(plugin.name().to_string());
        plugin.build(self);
    }

    /// Names of the plugins added so far, in order.
    pub fn plugin_names(&self) -> &[String] {
        &self.plugin_names
    }

    /// Inserts (or replaces) a resource in the world.
    pub fn insert_resource<R: Resource>(&mut self, r: R) -> &mut Self {
        self.world.insert_resource(r);
        self
    }

    /// Declares an event kind; its name shows in messages. Keep the returned id in the handlers
    /// that schedule it.
    pub fn add_event_kind(&mut self, name: &'static str) -> EventKind {
        self.handlers.add_kind(name)
    }

    /// Declares an event kind whose data is a `P` (`event::TypedKind`).
    pub fn add_typed_kind<P: crate::event::Payload>(&mut self, name: &'static str) -> crate::event::TypedKind<P> {
        crate::event::TypedKind::new(self.add_event_kind(name))
    }

    /// Sets the handler of `kind` (an `EventKind` or a `TypedKind`).
    pub fn set_handler(&mut self, kind: impl Into<EventKind>, handler: impl Handler) -> &mut Self {
        self.handlers.set(kind.into(), Box::new(handler));
        self
    }

    /// Sets one handler for several kinds, for a model whose kinds share state (the fabric's
    /// switches): the handler tells them apart by `SimEvent::kind`.
    pub fn set_handler_for(&mut self, kinds: &[EventKind], handler: impl Handler) -> &mut Self {
        self.handlers.set_for(kinds, Box::new(handler));
        self
    }

    /// Wraps the handler serving `kind` (`Handlers::wrap`).
    pub fn wrap_handler(
        &mut self,
        kind: impl Into<EventKind>,
        wrap: impl FnOnce(Box<dyn Handler>) -> Box<dyn Handler>,
    ) -> &mut Self {
        self.handlers.wrap(kind.into(), wrap);
        self
    }

    /// Declares a kind and its handler at once.
    pub fn add_handler(&mut self, name: &'static str, handler: impl Handler) -> EventKind {
        let kind = self.add_event_kind(name);
        self.set_handler(kind, handler);
        kind
    }

    /// Adds systems to a phase schedule (`Build`, `Start`, `BeaconTick`, `Sample`, `Finish`).
    pub fn add_systems<M>(
        &mut self,
        phase: impl ScheduleLabel,
        systems: impl IntoScheduleConfigs<bevy_ecs::system::ScheduleSystem, M>,
    ) -> &mut Self {
        self.world.schedule_scope(phase, |_, s| {
            s.add_systems(systems);
        });
        self
    }

    /// A beacon column: `value` is read at every beacon tick, after the `BeaconTick` phase.
    pub fn add_beacon_column(
        &mut self,
        name: &'static str,
        value: impl Fn(&World) -> u64 + Send + Sync + 'static,
    ) -> &mut Self {
        self.world
            .resource_mut::<crate::beacon::BeaconColumns>()
            .add(name, value);
        self
    }

    /// The event queue, to schedule events by hand (tests, tools).
    pub fn queue(&mut self) -> Mut<'_, EventQueue> {
        self.world.resource_mut::<EventQueue>()
    }

    /// Event kinds declared without a handler (a plugin missing from the app).
    pub fn unhandled_kinds(&self) -> Vec<&'static str> {
        self.handlers.unhandled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Resource, Default)]
    struct Log(Vec<&'static str>);
    struct Fabric;
    struct Nic;
    struct ForkNic;
    impl Plugin for Fabric {
        fn build(&self, app: &mut App) {
            app.world.get_resource_or_insert_with(Log::default).0.push("fabric");
        }
    }
    impl Plugin for Nic {
        fn build(&self, app: &mut App) {
            app.world.get_resource_or_insert_with(Log::default).0.push("nic");
        }
    }
    impl Plugin for ForkNic {
        fn build(&self, app: &mut App) {
            app.world.get_resource_or_insert_with(Log::default).0.push("fork-nic");
        }
    }

    #[test]
    fn a_fork_disables_a_plugin_of_a_group_and_adds_its_own() {
        let group = || PluginGroupBuilder::default().add(Fabric).add(Nic);
        let mut app = App::new();
        app.add_plugins(group());
        assert_eq!(app.world.resource::<Log>().0, ["fabric", "nic"]);
        let mut app = App::new();
        app.add_plugins(group().disable::<Nic>().add(ForkNic));
        assert_eq!(app.world.resource::<Log>().0, ["fabric", "fork-nic"]);
        assert_eq!(app.plugin_names().len(), 2);
    }

    #[test]
    #[should_panic(expected = "already has a handler")]
    fn a_kind_has_one_handler() {
        let mut app = App::new();
        let k = app.add_event_kind("k");
        app.set_handler(k, |_: &mut World, _: &mut EventQueue, _: crate::event::SimEvent| {});
        app.set_handler(k, |_: &mut World, _: &mut EventQueue, _: crate::event::SimEvent| {});
    }
}
