//! Packet capture: a tracer plugin that writes the frames crossing chosen hosts' links to a
//! classic pcap file (nanosecond timestamps in simulated time) that Wireshark and tshark read.
//!
//! It subscribes to the NICs' trace points (`models::trace`), so a run without it pays one
//! branch per trace point and nothing else. Each frame is built whole from the packet
//! descriptor (`models::wire::frames`): Ethernet, IPv4 with the class's DSCP, UDP 4791, BTH, a
//! RETH on WRITE FIRST and ONLY, an AETH on ACKs and NAKs, CNPs, CM messages, 802.1Qbb PFC
//! frames, and a correct ICRC. A frame is stamped with the time its first bit left a port: the
//! host's NIC port for what the host sends (`Direction::Tx`), the far end's port (the switch port
//! facing the host) for what reaches it (`Direction::Rx`). Chosen switch ports
//! (`CaptureConfig::switch_ports`) add what leaves them: toward a host, that is what reaches the
//! host; toward another switch, the fabric reports each frame (`TracePoint::SwitchSent`, through
//! `models::fabric::tap`), and only a run with such a port pays for that check.
//!
//! ```no_run
//! # fn demo(app: &mut engine::app::App, topology: &models::topology::Topology) -> Result<(), pcap::CaptureError> {
//! let config = pcap::CaptureConfig::new("run.pcap".into());
//! let (plugin, handle) = pcap::PcapPlugin::create(config, topology)?;
//! app.add_plugins(plugin);
//! // ... run the app ...
//! let stats = handle.finish()?;
//! println!("{} frames", stats.frames);
//! # Ok(()) }
//! ```

mod frame;
mod tracer;

pub use frame::{CAPTURE_QPN_OFFSET, CAPTURE_R_KEY, PAUSE_QUANTA, frame_bytes, udp_source_port};

use engine::SimTime;
use engine::app::{App, Plugin};
use models::topology::Topology;
use models::trace::Tracers;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tracer::{Capture, HostLink, PcapTracer};

/// Which frames of a chosen host's link are captured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Direction {
    /// Frames leaving the host's NIC port: every frame on the fabric once, at its sender.
    #[default]
    Tx,
    /// Frames reaching the host, stamped as they left the far port (PFC frames from the switch
    /// included).
    Rx,
    /// Both.
    Both,
}

/// What to capture and where to write it.
#[derive(Clone, Debug)]
pub struct CaptureConfig {
    /// The pcap file, created (or truncated).
    pub path: PathBuf,
    /// The hosts (node ids) whose links are captured; `None`: every host.
    pub hosts: Option<Vec<u32>>,
    /// Which way.
    pub direction: Direction,
    /// Frames that left before this time are left out.
    pub from: SimTime,
    /// Frames that left at or after this time are left out.
    pub until: SimTime,
    /// At most this many frames are written; the capture stops there.
    pub max_packets: u64,
    /// Switch egress ports (switch node id, port) whose frames are captured too, whatever
    /// `hosts` and `direction` say.
    pub switch_ports: Vec<(u32, u16)>,
    /// The switches' forwarding latency: a frame leaving a switch port is reported that much
    /// later again, so the capture waits that much longer before writing (its order by time).
    pub switch_latency: SimTime,
}

impl CaptureConfig {
    /// The default cap, in frames: 100,000 full frames are about 415 MB.
    pub const DEFAULT_MAX_PACKETS: u64 = 100_000;

    /// Every host, sent frames, the whole run, the default cap.
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            hosts: None,
            direction: Direction::Tx,
            from: SimTime::ZERO,
            until: SimTime::MAX,
            max_packets: Self::DEFAULT_MAX_PACKETS,
            switch_ports: Vec::new(),
            switch_latency: SimTime::ZERO,
        }
    }
}

/// What a capture wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaptureStats {
    /// Frames written.
    pub frames: u64,
    /// Their bytes (record headers excluded).
    pub bytes: u64,
    /// Whether the cap was reached (later frames were left out).
    pub capped: bool,
}

/// Why a capture could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// A chosen host is not a host of the topology.
    #[error("host {host} is not a host of this topology (hosts are 0 to {last})")]
    NotAHost {
        /// The node id given.
        host: u32,
        /// The last host's id.
        last: u32,
    },
    /// A chosen switch port is not a port of a switch of the topology.
    #[error("{what} is not a switch port of this topology")]
    NotASwitchPort {
        /// The port as given (`node:port`).
        what: String,
    },
    /// The window is empty.
    #[error("the capture window is empty: it starts at {from} s and ends at {until} s")]
    EmptyWindow {
        /// Its start, in seconds.
        from: f64,
        /// Its end, in seconds.
        until: f64,
    },
    /// The cap is 0.
    #[error("the packet cap must be at least 1")]
    ZeroCap,
    /// The file could not be created.
    #[error("{}: {source}", path.display())]
    Create {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A write failed (a full disk).
    #[error("writing {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The plugin: subscribes the capture's tracer to the NICs' `Tracers`, and taps the chosen ports
/// between switches. Add it after the NIC contract's and the fabric's plugins.
pub struct PcapPlugin {
    capture: Arc<Mutex<Capture>>,
    /// Chosen switch ports that face other switches: tapped in the fabric.
    between_switches: Vec<(u32, u16)>,
}

/// The capture after the run: `finish` writes what still waits and flushes the file.
pub struct PcapHandle {
    capture: Arc<Mutex<Capture>>,
}

impl PcapPlugin {
    /// Checks `config` against `topology`, creates the file, and returns the plugin and the
    /// handle to finish the capture with after the run.
    pub fn create(config: CaptureConfig, topology: &Topology) -> Result<(Self, PcapHandle), CaptureError> {
        let last = topology.num_hosts.saturating_sub(1) as u32;
        if let Some(&host) = config.hosts.iter().flatten().find(|&&h| h > last) {
            return Err(CaptureError::NotAHost { host, last });
        }
        if config.from >= config.until {
            return Err(CaptureError::EmptyWindow {
                from: config.from.as_secs_f64(),
                until: config.until.as_secs_f64(),
            });
        }
        if config.max_packets == 0 {
            return Err(CaptureError::ZeroCap);
        }
        let bad = |&&(node, port): &&(u32, u16)| {
            topology.is_host(node)
                || topology
                    .nodes
                    .get(node as usize)
                    .is_none_or(|n| port as usize >= n.ports.len())
        };
        if let Some(&(node, port)) = config.switch_ports.iter().find(bad) {
            return Err(CaptureError::NotASwitchPort {
                what: format!("{node}:{port}"),
            });
        }
        let links = (0..topology.num_hosts as u32)
            .map(|h| {
                let link = topology.links[topology.port(h, 0).link as usize];
                // The switch port facing the host, if chosen: what reaches the host.
                let facing = topology.port(h, 0);
                HostLink {
                    rate: link.rate,
                    delay: link.delay.0,
                    tapped: config.switch_ports.contains(&(facing.peer_node, facing.peer_port)),
                }
            })
            .collect();
        // Frames between switches are reported at the far switch: a delay, the forwarding
        // latency and a serialization after they left.
        let switch_horizon = topology
            .links
            .iter()
            .map(|l| l.delay.0 + config.switch_latency + l.rate.serialization_time(tracer::LARGEST_FRAME_BYTES))
            .max()
            .unwrap_or(SimTime::ZERO);
        let path = config.path.clone();
        let create = |source| CaptureError::Create {
            path: path.clone(),
            source,
        };
        let file = std::fs::File::create(&path).map_err(create)?;
        let between_switches = config
            .switch_ports
            .iter()
            .copied()
            .filter(|&(n, p)| !topology.is_host(topology.nodes[n as usize].ports[p as usize].peer_node))
            .collect();
        let capture = Capture::new(config, links, switch_horizon, file).map_err(create)?;
        let capture = Arc::new(Mutex::new(capture));
        Ok((
            Self {
                capture: capture.clone(),
                between_switches,
            },
            PcapHandle { capture },
        ))
    }
}

impl Plugin for PcapPlugin {
    fn build(&self, app: &mut App) {
        app.world
            .get_resource_or_insert_with(Tracers::default)
            .subscribe(PcapTracer(self.capture.clone()));
        if !self.between_switches.is_empty() {
            models::fabric::tap::tap_switch_ports(app, self.between_switches.clone());
        }
    }
}

impl PcapHandle {
    /// Writes the frames still waiting, flushes the file and says what was written.
    pub fn finish(self) -> Result<CaptureStats, CaptureError> {
        self.capture.lock().unwrap_or_else(|e| e.into_inner()).finish()
    }
}
