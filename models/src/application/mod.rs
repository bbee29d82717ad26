//! The application contract: what an application plugin states to the assembly and what the
//! assembly gives it back, so that applications are swapped and combined the way NICs are
//! (`applications: [ScalaRdma(()), Flows((...))]`) without one naming another.
//!
//! - **Distribution entries** ([`DistributionEntry`]): each application lists its components
//!   that take hosts from the one shared budget (the Scala RDMA application: Initiator, then
//!   Responder), each with its ratio or `None` when left out. [`split_ratios`] applies the
//!   spec's rule across all of them; [`crate::placement`] turns the ratios into hosts.
//! - **Placement** ([`AppPlacement`]): the hosts of each of the application's entries.
//! - **Plan** ([`Plan`]): the hosts, pairs and connections an application will use, for
//!   `rdmasim plan` and the run's estimates.
//! - **Slots** ([`ApplicationSlot`]): application `i`'s phase systems go in slot `i`; slots run
//!   in scenario order, so applications never race and connection ids follow scenario order.
//! - **Contract events** ([`contract`]): several applications share the NIC contract's
//!   `established` and `wqe_completed` kinds; each connection is owned by the application that
//!   made it, and its events reach that application's handlers.

pub mod contract;
mod plan;
mod split;

pub use contract::{ContractClaim, ContractHandlers, claim_contract, install_contract_handlers, own_connection};
pub use plan::{ConnectionPlan, HostPlan, PairPlan, Plan};
pub use split::{DistributionEntry, split_ratios};

use bevy_ecs::schedule::SystemSet;

/// Where one application sits in the scenario, and the hosts the shared placement gave it.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct AppPlacement {
    /// The application's position in `applications`, from 0.
    pub index: usize,
    /// The ratio of each of its distribution entries after the even split, in its order.
    pub ratios: Vec<f64>,
    /// The node ids running each entry, in node-id order (same order as `ratios`).
    pub hosts: Vec<Vec<u32>>,
}

/// The system set of application `i`'s phase systems (`Build`, `Start`, `BeaconTick`,
/// `Finish`). [`configure_slots`] orders the slots.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ApplicationSlot(pub usize);

/// Orders slots `0..n` one after the other in every phase.
pub fn configure_slots(app: &mut engine::app::App, n: usize) {
    use bevy_ecs::schedule::{IntoScheduleConfigs, ScheduleLabel};
    for phase in [
        engine::phases::Build.intern(),
        engine::phases::Start.intern(),
        engine::phases::BeaconTick.intern(),
        engine::phases::Finish.intern(),
    ] {
        app.world.schedule_scope(phase, |_, s| {
            for i in 1..n {
                s.configure_sets(ApplicationSlot(i).after(ApplicationSlot(i - 1)));
            }
        });
    }
}

/// One connection's figures for the run summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionFigures {
    /// The connection's id.
    pub connection: u32,
    /// The Initiator's host id.
    pub initiator: u32,
    /// The Responder's host id.
    pub responder: u32,
    /// WQEs completed in the recording window.
    pub recorded_wqes: u64,
}

/// What an application did, for the run summary: WQEs posted and completed since the start,
/// and each of its connections.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AppFigures {
    /// WQEs posted since the start.
    pub wqes_posted: u64,
    /// WQEs completed since the start.
    pub wqes_completed: u64,
    /// Each of its connections.
    pub connections: Vec<ConnectionFigures>,
}

/// How each application reports its figures at the end of a run; an application pushes its
/// reporter in its `add_to`. The summary adds them up.
#[derive(bevy_ecs::prelude::Resource, Default)]
pub struct AppReporters(pub Vec<fn(&mut bevy_ecs::world::World) -> AppFigures>);

/// What an application would cost, estimated from the scenario before it runs (the program's
/// limits: rows of a record, memory of outstanding WQEs).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct AppEstimate {
    /// The application's record and an upper bound on its rows (`None`: it writes none).
    pub record: Option<(&'static str, u64)>,
    /// WQEs it keeps outstanding at most.
    pub outstanding_wqes: u64,
    /// The field, relative to the entry, that drives `outstanding_wqes` (`MaxPendingWQEs`).
    pub outstanding_field: &'static str,
}

/// What an application's estimate may look at.
#[derive(Clone, Copy, Debug)]
pub struct EstimateContext<'a> {
    /// Bits per second of each host's links, summed, by node id.
    pub host_rate_bps: &'a [u128],
    /// From the start of the client window to the stop time.
    pub span: engine::SimTime,
}

/// What an application's checks against the rest of the scenario may look at.
#[derive(Clone, Copy, Debug)]
pub struct AppContext<'a> {
    /// Hosts in the topology.
    pub num_hosts: usize,
    /// Host names, by node id (for messages).
    pub host_names: &'a [String],
    /// The classes the NIC has buffer pools for.
    pub pools: crate::nic::NicPools,
}
