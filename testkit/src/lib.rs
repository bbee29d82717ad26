//! What a model's tests build on, in a crate of its own so that a research fork's plugin, in or
//! out of this workspace, depends on it as a dev-dependency:
//!
//! - `fabric`: a test kit that stands in for the NICs (offered load, sinks, pauses, a tap on the
//!   packets reaching hosts), for switch and fabric tests;
//! - `nic_contract`: the NIC contract suite, one scenario and the checks every NIC must pass
//!   (`nic_contract_suite!` makes one test per check).

pub mod fabric;
pub mod nic_contract;
