//! What a model's tests build on, in a crate of its own so that a research fork's plugin, in or
//! out of this workspace, depends on it as a dev-dependency. It names no plugin: the model under
//! test comes in as a parameter (a config, a closure adding its plugin, or a descriptor).
//!
//! - [`fabric`]: a test kit that stands in for the NICs (offered load, sinks, pauses, a tap on
//!   the packets reaching hosts), for switch and fabric tests;
//! - [`nic_contract`]: the NIC contract suite, one scenario and the checks every NIC must pass
//!   (`nic_contract_suite!` makes one test per check), and its driver application, which other
//!   NIC tests reuse;
//! - [`switch_contract`]: the switch contract suite, checks every switch model must pass, on the
//!   test kit's hosts (`switch_contract_suite!`);
//! - [`cc_contract`]: the congestion-control contract suite, checks every controller must pass
//!   on a NIC that hosts controllers, with a recording controller that logs the hooks the NIC
//!   calls (`cc_contract_suite!`).
//!
//! `templates/cc-plugin` in the repository is a controller crate outside the workspace that runs
//! the congestion-control suite on itself: the starting point for a fork's controller.

pub mod cc_contract;
pub mod fabric;
pub mod nic_contract;
pub mod switch_contract;
