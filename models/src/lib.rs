//! rdmasim's shared vocabulary and the fabric: topology (petgraph), hosts, switches, link
//! directions, PCIe links, packets and wire headers, routing, the shared-buffer switch, the NIC
//! contract that every NIC plugin implements, the switch contract every switch model keeps
//! (`switch`), and the application contract (placement, plan, sharing the NIC's events).

#![warn(missing_docs)]

pub mod application;
pub mod cc;
pub mod fabric;
// The NIC contract and the PCIe link are being restructured on another branch; their items are
// documented there.
#[allow(missing_docs)]
pub mod nic;
pub mod packet;
#[allow(missing_docs)] // as `nic`, above
pub mod pcie;
pub mod placement;
pub mod registry;
pub mod sets;
pub mod switch;
pub mod topology;
pub mod trace;
pub mod watchdog;
pub mod wire;

pub use packet::{Packet, PacketKind};
