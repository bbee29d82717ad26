//! The rdmasim engine: simulated time and units, the event queue and its dispatch loop, the
//! `App`/`Plugin` builder, seeded random streams, and the streaming record writers.
pub mod rng;
pub mod time;
pub mod units;

pub use time::SimTime;
pub use units::{Duration, Rate, Size};
