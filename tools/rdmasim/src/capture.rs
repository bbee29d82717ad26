//! `run --pcap`: the capture's command-line flags, checked against the scenario's topology and
//! turned into the capture plugin (`pcap::PcapPlugin`).

use crate::scenario::Loaded;
use engine::SimTime;
use engine::units::Duration;
use pcap::{CaptureConfig, Direction, PcapHandle, PcapPlugin};
use std::path::PathBuf;

/// The flags of `run` that make a capture.
#[derive(clap::Args, Debug, Clone)]
pub struct CaptureArgs {
    /// Writes the frames on the chosen hosts' links to FILE, a pcap with nanosecond timestamps in
    /// simulated time, for Wireshark or tshark.
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// The hosts whose links are captured: node ids or names, comma-separated (default: every
    /// host, unless --pcap-ports is given).
    #[arg(long, value_name = "HOSTS", value_delimiter = ',', requires = "pcap")]
    pub pcap_hosts: Vec<String>,
    /// Switch egress ports whose frames are captured too: SWITCH:PORT or SWITCH (all its
    /// ports), switches by name or node id, comma-separated (leaf0:4,spine1).
    #[arg(long, value_name = "PORTS", value_delimiter = ',', requires = "pcap")]
    pub pcap_ports: Vec<String>,
    /// tx: frames the hosts send (each frame on the fabric once); rx: frames reaching them, as
    /// they left the switch port (PFC pauses from the switch included); both.
    #[arg(long, value_enum, default_value_t = DirectionArg::Tx, requires = "pcap")]
    pub pcap_direction: DirectionArg,
    /// Leaves out frames that left before this simulated time (seconds, or with a unit: 3ms).
    #[arg(long, value_name = "TIME", requires = "pcap")]
    pub pcap_from: Option<Duration>,
    /// Leaves out frames that left at or after this simulated time.
    #[arg(long, value_name = "TIME", requires = "pcap")]
    pub pcap_until: Option<Duration>,
    /// Writes at most N frames, so that a capture never fills a disk (a full frame is ~4 KB).
    #[arg(long, value_name = "N", default_value_t = CaptureConfig::DEFAULT_MAX_PACKETS, requires = "pcap")]
    pub pcap_max_packets: u64,
}

/// `--pcap-direction`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum DirectionArg {
    /// Frames leaving the hosts' NIC ports.
    Tx,
    /// Frames reaching the hosts.
    Rx,
    /// Both.
    Both,
}

impl CaptureArgs {
    /// The capture plugin and its handle, or `None` without `--pcap`. An error is a sentence
    /// naming the flag at fault.
    pub fn plugin(&self, loaded: &Loaded) -> Result<Option<(PcapPlugin, PcapHandle)>, String> {
        let Some(path) = &self.pcap else { return Ok(None) };
        let topology = &loaded.topology;
        let mut hosts = Vec::new();
        for h in &self.pcap_hosts {
            let id = match h.trim().parse::<u32>() {
                Ok(id) => id,
                Err(_) => topology
                    .find(h.trim())
                    .ok_or_else(|| format!("--pcap-hosts {h}: no node of the topology has this name or id"))?,
            };
            if !topology.is_host(id) {
                return Err(format!(
                    "--pcap-hosts {h}: node {id} is not a host (hosts are 0 to {}); switch ports other than those facing hosts are not captured",
                    topology.num_hosts.saturating_sub(1)
                ));
            }
            hosts.push(id);
        }
        let switch_ports = self.switch_ports(loaded)?;
        let config = CaptureConfig {
            path: path.clone(),
            // Ports alone capture just those ports; neither captures every host.
            hosts: (!hosts.is_empty() || !switch_ports.is_empty()).then_some(hosts),
            switch_ports,
            switch_latency: loaded.scenario.switch.model().forwarding_latency(),
            direction: match self.pcap_direction {
                DirectionArg::Tx => Direction::Tx,
                DirectionArg::Rx => Direction::Rx,
                DirectionArg::Both => Direction::Both,
            },
            from: self.pcap_from.map_or(SimTime::ZERO, |d| d.0),
            until: self.pcap_until.map_or(SimTime::MAX, |d| d.0),
            max_packets: self.pcap_max_packets,
        };
        PcapPlugin::create(config, topology).map(Some).map_err(|e| match e {
            pcap::CaptureError::Create { .. } | pcap::CaptureError::Write { .. } => format!("--pcap {e}"),
            pcap::CaptureError::ZeroCap => format!("--pcap-max-packets: {e}"),
            pcap::CaptureError::NotAHost { .. } => format!("--pcap-hosts: {e}"),
            pcap::CaptureError::NotASwitchPort { .. } => format!("--pcap-ports: {e}"),
            pcap::CaptureError::EmptyWindow { .. } => format!("--pcap-from/--pcap-until: {e}"),
        })
    }

    /// `--pcap-ports` as (switch node, port) pairs, in the order given.
    fn switch_ports(&self, loaded: &Loaded) -> Result<Vec<(u32, u16)>, String> {
        let topology = &loaded.topology;
        let mut out = Vec::new();
        for given in &self.pcap_ports {
            let given = given.trim();
            let (sw, port) = match given.split_once(':') {
                Some((sw, port)) => (sw, Some(port)),
                None => (given, None),
            };
            let node = sw
                .parse::<u32>()
                .ok()
                .filter(|&n| (n as usize) < topology.nodes.len())
                .or_else(|| topology.find(sw))
                .ok_or_else(|| format!("--pcap-ports {given}: no node of the topology has this name or id"))?;
            if topology.is_host(node) {
                return Err(format!(
                    "--pcap-ports {given}: node {node} is a host; name its links with --pcap-hosts"
                ));
            }
            let ports = topology.nodes[node as usize].ports.len();
            match port {
                None => out.extend((0..ports as u16).map(|p| (node, p))),
                Some(p) => {
                    let p = p.parse::<u16>().ok().filter(|&p| (p as usize) < ports).ok_or_else(|| {
                        format!(
                            "--pcap-ports {given}: the port must be a number from 0 to {}",
                            ports - 1
                        )
                    })?;
                    out.push((node, p));
                }
            }
        }
        Ok(out)
    }
}
