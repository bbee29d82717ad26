//! Fabric tests through the test kit: exact latencies, PFC under incast, drops on lossy classes,
//! priorities and pauses, ECN marking. Each derives its expected figures from first principles.

mod ecn;
mod latency;
mod ownership;
mod pfc;
mod priority;

use engine::prelude::*;
use models::topology::{StarTopology, TopologyConfig};

/// `hosts` hosts on one switch, 400 Gbps, 1 us links.
pub fn star(hosts: u32) -> TopologyConfig {
    TopologyConfig::Star(StarTopology {
        hosts,
        link_rate: Rate::gbps(400),
        link_delay: Duration::from_us(1),
    })
}

/// Serialization time of `bytes` at 400 Gbps: 20 ps a byte.
pub fn ser400(bytes: u64) -> SimTime {
    SimTime(bytes * 20)
}

/// A 4096 B RoCE payload with its 58 header bytes.
pub const FRAME: u32 = 4154;
/// 4154 B at 400 Gbps.
pub const T: SimTime = SimTime(83_080);
