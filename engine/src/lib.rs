//! The rdmasim engine: simulated time and units, the event queue and its dispatch loop, the
//! `App`/`Plugin` builder, seeded random streams, and the streaming record writers.
//!
//! A plugin registers an event kind with its handler, and schedules events from the `Start`
//! phase; the engine runs them in `(time, source, sequence)` order until the stop time:
//!
//! ```
//! use bevy_ecs::prelude::*;
//! use engine::prelude::*;
//!
//! #[derive(Resource, Default)]
//! struct Pings(u64);
//!
//! struct PingPlugin;
//! impl Plugin for PingPlugin {
//!     fn build(&self, app: &mut App) {
//!         app.insert_resource(Pings::default());
//!         let kind = app.add_event_kind("ping");
//!         let source = app.queue().add_source();
//!         // A ping every microsecond: each handled ping schedules the next.
//!         app.set_handler(kind, move |world: &mut World, q: &mut EventQueue, ev: SimEvent| {
//!             world.resource_mut::<Pings>().0 += 1;
//!             q.schedule(ev.time + SimTime::from_us(1), source, ev.kind, 0, 0);
//!         });
//!         app.queue().schedule(SimTime::ZERO, source, kind, 0, 0);
//!     }
//! }
//!
//! let mut app = App::new();
//! app.add_plugins(PingPlugin);
//! let stats = app.run(RunOptions { stop: SimTime::from_us(10), beacon_interval: SimTime::from_us(5), progress: None });
//! // Pings at 0, 1, ..., 9 us: the one at 10 us is at the stop time and never runs.
//! assert_eq!(app.world.resource::<Pings>().0, 10);
//! assert_eq!(stats.events, 10);
//! ```

pub mod app;
pub mod beacon;
pub mod clock;
pub mod dispatch;
pub mod event;
pub mod params;
pub mod phases;
pub mod prefetch;
pub mod records;
pub mod registry;
pub mod ring;
pub mod rng;
pub mod row;
pub mod run;
pub mod scenario;
pub mod shard;
pub mod store;
pub mod time;
pub mod units;

pub use time::SimTime;
pub use units::{Duration, Rate, Size};

/// What a plugin usually needs.
pub mod prelude {
    pub use crate::app::{App, Plugin, PluginGroup, PluginGroupBuilder};
    pub use crate::dispatch::Handler;
    pub use crate::event::{ChannelKey, EventKind, EventQueue, Payload, SimEvent, SourceId, TypedKind};
    pub use crate::params::{SimulationParameters, Timeline};
    pub use crate::phases::{BeaconTick, Build, Finish, Sample, Start};
    pub use crate::records::{RecordId, Records};
    pub use crate::run::{RunInfo, RunOptions, RunStats, SampleInterval, StopCause};
    pub use crate::time::SimTime;
    pub use crate::units::{Duration, Rate, Size};
}
