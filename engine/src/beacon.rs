//! Beacon columns: running totals that plugins register and that the engine writes every
//! `BeaconReportInterval`, after the `BeaconTick` phase has run.

use bevy_ecs::prelude::*;

type ColumnFn = Box<dyn Fn(&World) -> u64 + Send + Sync>;

/// The beacon record's columns after `time`: a name and a reader of the world each.
#[derive(Resource, Default)]
pub struct BeaconColumns {
    columns: Vec<(&'static str, ColumnFn)>,
}

impl BeaconColumns {
    /// Appends the column `name`, whose value `value` reads at every beacon tick.
    pub fn add(&mut self, name: &'static str, value: impl Fn(&World) -> u64 + Send + Sync + 'static) {
        self.columns.push((name, Box::new(value)));
    }
    /// The columns' names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.columns.iter().map(|c| c.0).collect()
    }
    /// The columns' values now, in order.
    pub fn values(&self, world: &World) -> Vec<u64> {
        self.columns.iter().map(|c| (c.1)(world)).collect()
    }
}
