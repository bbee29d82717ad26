//! rdmasim's shared vocabulary and the fabric: topology (petgraph), hosts, switches, link
//! directions, PCIe links, packets and wire headers, routing, the shared-buffer switch, the NIC
//! contract that every NIC plugin implements, the switch contract every switch model keeps
//! (`switch`), and the application contract (placement, plan, sharing the NIC's events).

pub mod application;
pub mod cc;
pub mod fabric;
pub mod int;
pub mod nic;
pub mod packet;
pub mod pcie;
pub mod placement;
pub mod registry;
pub mod sets;
pub mod shard;
pub mod switch;
pub mod telemetry;
pub mod topology;
pub mod trace;
pub mod watchdog;
pub mod wire;

pub use packet::{Packet, PacketKind};
