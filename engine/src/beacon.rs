//! Beacon columns: running totals that plugins register and that the engine writes every
//! `BeaconReportInterval`, after the `BeaconTick` phase has run.

use bevy_ecs::prelude::*;

type ColumnFn = Box<dyn Fn(&World) -> u64 + Send + Sync>;

#[derive(Resource, Default)]
pub struct BeaconColumns {
    columns: Vec<(&'static str, ColumnFn)>,
}

impl BeaconColumns {
    pub fn add(&mut self, name: &'static str, value: impl Fn(&World) -> u64 + Send + Sync + 'static) {
        self.columns.push((name, Box::new(value)));
    }
    pub fn names(&self) -> Vec<&'static str> {
        self.columns.iter().map(|c| c.0).collect()
    }
    pub fn values(&self, world: &World) -> Vec<u64> {
        self.columns.iter().map(|c| (c.1)(world)).collect()
    }
}
