//! Workspace integration tests, one binary.

mod cc_contract;
mod contract;
mod reference;
mod switch_contract;

mod app_records;
mod applications;
mod conservation;
mod dcqcn;
mod determinism;
mod digests;
mod faults;
mod goodput;
mod hpcc;
mod incast;
mod independence;
mod lookahead;
mod memory;
mod pcie_doorbell;
mod pgo;
mod scenarios;
mod spec_examples;
mod swap;
mod trace;
mod watchdog;
