//! Workspace integration tests, one binary.

mod contract;
mod reference;

mod app_records;
mod determinism;
mod memory;
mod pgo;
mod scenarios;
mod spec_examples;
mod swap;
mod trace;
mod watchdog;
