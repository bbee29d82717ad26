//! The NIC contract: the only way an application and a NIC speak. Research forks replace the NIC;
//! the application and the fabric never name it.
//!
//! Event kinds (declared by `NicContractPlugin`, each with exactly one handler):
//!
//! | kind | from -> to | target | payload |
//! | --- | --- | --- | --- |
//! | `listen` | app -> NIC | Responder host | `()` |
//! | `connect` | app -> NIC | Initiator host | connection id, `u32` |
//! | `established` | NIC -> app | Initiator host | connection id, `u32` |
//! | `post_wqe` | app -> NIC | Initiator host | the WQE's `Entity` |
//! | `wqe_completed` | NIC -> app | Initiator host | the WQE's `Entity` |
//! | `FabricKinds::to_host` | fabric -> NIC | link direction id | the packet, in channel `FabricKinds::packet` |
//!
//! Setup follows the spec: on `connect` the Initiator's NIC sends a connection request across
//! the fabric; the Responder's NIC creates its end of the queue pair and answers; when the
//! response arrives, the Initiator's NIC creates its end, sends the acknowledgment and reports
//! `established`. A WQE is an entity from `post_wqe` to `wqe_completed`; the NIC fills in its
//! `WqeTimes`, whose parts add up to its latency. At every pause the NIC writes its view back
//! to the entities (`write_back`): each `QueuePair`'s progress and the stamps so far of the
//! WQEs it holds, so that between segments no entity is stale.
//!
//! A NIC has one handler for the contract's kinds it serves and its own. It keeps its state in
//! an `engine::store::Store` (one row per host) and holds, besides, the fabric's
//! `Store<HostPort>`: each host's PCIe link and the link direction it sends on, where it puts
//! every frame with `LinkDirection::launch_from_host` (which counts the data packets the run's
//! conservation check takes as sent). A packet reaching a host fires `FabricKinds::to_host`,
//! which the NIC passes to `HostIngress::accept` (the fabric declares that kind).
//!
//! Everything a NIC implements and may rely on is here: the kinds and their payload types
//! (`NicContract`), the scenario's selection (`NicModel`, registered in
//! `models::registry::NICS`), the build order (`BuildSet`), the host's port (`HostPort`,
//! `HostIngress`), the pools an application checks (`NicPools`), and what the NIC reports
//! (`WqeTimes`, `DeliveredInWindow`, `NicLosses`, `QpDiagnostics`).
//!
//! # Example
//!
//! The smallest NIC that keeps the contract's promises to an application: it answers `connect`
//! with `established` and completes every WQE the instant it is posted, sending nothing (a
//! real NIC would put frames on `HostPort::wire` and take arrivals through `HostIngress`).
//!
//! ```no_run
//! use bevy_ecs::prelude::*;
//! use engine::prelude::*;
//! use engine::scenario::FieldError;
//! use models::nic::{NicContract, NicModel, NicPools, Wqe};
//!
//! /// `nic: Instant(())` once registered: `NICS.register::<InstantConfig>("Instant")`.
//! #[derive(Clone, Debug, Default, serde::Deserialize)]
//! struct InstantConfig {}
//!
//! impl NicModel for InstantConfig {
//!     fn validate(&self) -> Result<(), FieldError> {
//!         Ok(())
//!     }
//!     fn pools(&self) -> NicPools {
//!         NicPools { egress: [true; 8], ingress: [true; 8] }
//!     }
//!     fn add_to(&self, app: &mut App) {
//!         let c = *app.world.resource::<NicContract>();
//!         app.set_handler(c.listen, |_: &mut World, _: &mut EventQueue, _: SimEvent| {});
//!         app.set_handler(c.connect, move |_: &mut World, q: &mut EventQueue, ev: SimEvent| {
//!             let connection: u32 = c.connect.payload(&ev);
//!             c.established.schedule(q, ev.time, SourceId::ENGINE, ev.target, connection);
//!         });
//!         app.set_handler(c.post_wqe, move |w: &mut World, q: &mut EventQueue, ev: SimEvent| {
//!             let wqe: Entity = c.post_wqe.payload(&ev);
//!             let mut row = w.get_mut::<Wqe>(wqe).expect("a posted WQE is an entity");
//!             let t = &mut row.times;
//!             (t.at_nic, t.started, t.first_tx, t.last_rx, t.completed) = (ev.time, ev.time, ev.time, ev.time, ev.time);
//!             row.completed = true;
//!             c.wqe_completed.schedule(q, ev.time, SourceId::ENGINE, ev.target, wqe);
//!         });
//!     }
//!     fn clone_box(&self) -> Box<dyn NicModel> {
//!         Box::new(self.clone())
//!     }
//! }
//!
//! impl engine::registry::Choice<dyn NicModel> for InstantConfig {
//!     fn boxed(self) -> Box<dyn NicModel> {
//!         Box::new(self)
//!     }
//! }
//!
//! models::registry::NICS.register::<InstantConfig>("Instant");
//! ```

mod mirror;
mod model;
pub mod port;

pub use crate::sets::BuildSet;
use bevy_ecs::prelude::*;
use engine::prelude::*;
pub use mirror::{QpProgress, write_back};
pub use model::NicModel;
pub use port::{HostIngress, HostPort};

/// The contract's event kinds, each with the type of its payload: a connection id, a WQE entity,
/// or nothing.
#[derive(Resource, Clone, Copy, Debug)]
pub struct NicContract {
    /// App to NIC, targeted at the Responder host: accept connection requests.
    pub listen: TypedKind<()>,
    /// App to NIC, targeted at the Initiator host: set up the connection with this id.
    pub connect: TypedKind<u32>,
    /// NIC to app, targeted at the Initiator host: the connection with this id is set up.
    pub established: TypedKind<u32>,
    /// App to NIC, targeted at the Initiator host: the doorbell of this WQE entity.
    pub post_wqe: TypedKind<Entity>,
    /// NIC to app, targeted at the Initiator host: this WQE entity is acknowledged in full.
    pub wqe_completed: TypedKind<Entity>,
}

/// One connection between an Initiator instance and a Responder instance.
#[derive(Clone, Debug)]
pub struct ConnectionSpec {
    /// Dense id in the order the application built its connections.
    pub id: u32,
    /// The Initiator's host (node index): the end that connects and sends.
    pub initiator: u32,
    /// The Responder's host (node index): the end that listens and receives.
    pub responder: u32,
    /// The traffic class of the data packets (`RdmaDataPacketTC`).
    pub class: u8,
    /// Bytes of the doorbell message over PCIe (`DoorbellPayloadSize` + 28).
    pub doorbell_bytes: u64,
    /// UDP source port of the connection's packets (spreads connections over ECMP paths).
    pub udp_src_port: u16,
    /// The source id the application schedules this connection's events from.
    pub source: SourceId,
}

/// Every connection of the run, indexed by id. Applications push; NICs read.
#[derive(Resource, Default, Debug)]
pub struct Connections {
    /// The connections; `list[i].id == i`.
    pub list: Vec<ConnectionSpec>,
}

/// Which end of a connection a queue pair is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum QpRole {
    /// The end that connects, posts WQEs and sends the data.
    Initiator,
    /// The end that listens, receives the data and acknowledges it.
    Responder,
}

/// A queue pair, an entity spawned by the NIC when it creates that end of a connection. Its
/// `progress` is the NIC's state as of the last pause.
#[derive(Component, Clone, Debug)]
pub struct QueuePair {
    /// The connection id (`ConnectionSpec::id`).
    pub connection: u32,
    /// The host whose NIC holds this end.
    pub host: u32,
    /// Which end it is.
    pub role: QpRole,
    /// Queue pair number on its NIC.
    pub qpn: u32,
    /// When the NIC created this end (Responder: the request arrived; Initiator: the response).
    pub created_at: SimTime,
    /// Written back by the NIC at every pause (`write_back`): current between segments.
    pub progress: QpProgress,
}

/// The timestamps of a WQE's life. Each is set once, in this order, by the NIC (`posted` by the
/// application). Their differences are the latency breakdown in `rdma-perf`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WqeTimes {
    /// The application rang the doorbell.
    pub posted: SimTime,
    /// The doorbell message reached the NIC over PCIe.
    pub at_nic: SimTime,
    /// The WQE reached the head of its connection (the one ahead completed).
    pub started: SimTime,
    /// Its first packet began serialization (the payload fetch is in between).
    pub first_tx: SimTime,
    /// Its last packet reached the Responder's NIC.
    pub last_rx: SimTime,
    /// The acknowledgment of all of it reached the Initiator's NIC: completion.
    pub completed: SimTime,
}

impl WqeTimes {
    /// (doorbell, wait at the NIC, fetch, network, acknowledgment); they sum to `latency`.
    pub fn breakdown(&self) -> [SimTime; 5] {
        [
            self.at_nic - self.posted,
            self.started - self.at_nic,
            self.first_tx - self.started,
            self.last_rx - self.first_tx,
            self.completed - self.last_rx,
        ]
    }
    /// Posted to completed: the sum of `breakdown`.
    pub fn latency(&self) -> SimTime {
        self.completed - self.posted
    }
    /// True when the stamps are in their order (none goes backwards).
    pub fn monotonic(&self) -> bool {
        self.posted <= self.at_nic
            && self.at_nic <= self.started
            && self.started <= self.first_tx
            && self.first_tx <= self.last_rx
            && self.last_rx <= self.completed
    }
}

/// A work request: an RDMA WRITE of `bytes` on `connection`, the `number`th on it (from 1).
#[derive(Component, Clone, Debug)]
pub struct Wqe {
    /// The connection id it is posted on.
    pub connection: u32,
    /// Its place in post order on its connection, from 1.
    pub number: u64,
    /// Payload bytes to write (headers not counted).
    pub bytes: u64,
    /// Its stamps: `posted` by the application, the rest by the NIC.
    pub times: WqeTimes,
    /// Set by the NIC when the WQE completes, with its last stamps, as it sends `wqe_completed`.
    pub completed: bool,
}

/// Payload bytes each connection's Responder NIC accepted in order during the recording window,
/// by connection id: what the run summary's goodput counts (bytes delivered in the window, not
/// whole WQEs completed in it, which can add up to more than line rate in a short window). NICs
/// add to it in the `Finish` phase; a NIC that does not leaves it empty.
#[derive(Resource, Default, Debug)]
pub struct DeliveredInWindow {
    /// Bytes by connection id; shorter than the connections when the last ones delivered none.
    pub bytes: Vec<u64>,
}

impl DeliveredInWindow {
    /// Adds `bytes` to connection `id`.
    pub fn add(&mut self, id: u32, bytes: u64) {
        let i = id as usize;
        if self.bytes.len() <= i {
            self.bytes.resize(i + 1, 0);
        }
        self.bytes[i] += bytes;
    }
}

/// What the NICs lost or resent, summed over hosts: the NIC's side of the run's conservation
/// figures (the fabric counts the rest). NICs add to it in the `Finish` phase.
#[derive(Resource, Clone, Copy, Default, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NicLosses {
    /// Data delivered to a NIC that found its receive pool full (the NIC's PFC came too late).
    pub receive_drops: u64,
    /// Out-of-sequence data discarded by go-back-N at the Responder.
    pub out_of_sequence: u64,
    /// Retransmission timeouts that fired.
    pub timeouts: u64,
    /// Data packets sent again by go-back-N.
    pub retransmitted: u64,
    /// PFC PAUSE frames the NICs sent.
    pub pfc_pause_sent: u64,
    /// PFC RESUME frames the NICs sent.
    pub pfc_resume_sent: u64,
}

impl std::ops::AddAssign for NicLosses {
    /// Adds another world's counts (the shards of one run).
    fn add_assign(&mut self, o: NicLosses) {
        self.receive_drops += o.receive_drops;
        self.out_of_sequence += o.out_of_sequence;
        self.timeouts += o.timeouts;
        self.retransmitted += o.retransmitted;
        self.pfc_pause_sent += o.pfc_pause_sent;
        self.pfc_resume_sent += o.pfc_resume_sent;
    }
}

/// Whether `now` lies in the recording window (the whole run when there is no timeline).
#[inline]
pub fn in_recording_window(window: (SimTime, SimTime), now: SimTime) -> bool {
    now >= window.0 && now < window.1
}

/// The recording window of the run, for NICs that count what they deliver in it.
pub fn recording_window(world: &World) -> (SimTime, SimTime) {
    world
        .get_resource::<Timeline>()
        .map_or((SimTime::ZERO, SimTime::MAX), |t| (t.recording_start, t.recording_end))
}

/// How a NIC describes a connection's queue pairs for the progress watchdog: one line, read
/// between segments (beacon ticks, the end of the run), only when a connection is reported, so
/// it costs nothing otherwise. The contract plugin installs one that says `unknown`; a NIC
/// plugin replaces it in its `build`.
#[derive(Resource, Clone, Copy)]
pub struct QpDiagnostics(pub fn(&World, &ConnectionSpec) -> String);

impl Default for QpDiagnostics {
    fn default() -> Self {
        QpDiagnostics(|_, _| "unknown (the NIC model does not describe its queue pairs)".into())
    }
}

/// Declares the contract's event kinds. Added before any NIC or application plugin.
pub struct NicContractPlugin;

impl Plugin for NicContractPlugin {
    fn build(&self, app: &mut App) {
        let contract = NicContract {
            listen: app.add_typed_kind("nic.listen"),
            connect: app.add_typed_kind("nic.connect"),
            established: app.add_typed_kind("nic.established"),
            post_wqe: app.add_typed_kind("nic.post_wqe"),
            wqe_completed: app.add_typed_kind("nic.wqe_completed"),
        };
        app.insert_resource(contract);
        app.insert_resource(Connections::default());
        app.insert_resource(DeliveredInWindow::default());
        app.insert_resource(NicLosses::default());
        app.insert_resource(QpDiagnostics::default());
        app.insert_resource(crate::trace::Tracers::default());
    }
}

/// Which classes a NIC has buffer pools for; the application checks its traffic class against
/// them at load (`RdmaDataPacketTC` needs a transmit pool and a receive pool).
#[derive(Resource, Clone, Copy, Debug, PartialEq, Eq)]
pub struct NicPools {
    /// Classes with a transmit pool, by class 0-7.
    pub egress: [bool; 8],
    /// Classes with a receive pool, by class 0-7.
    pub ingress: [bool; 8],
}
