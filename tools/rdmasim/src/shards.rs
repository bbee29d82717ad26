//! `rdmasim run --shards N`: one run split over N worlds on N threads (`engine::shard`), the
//! fabric partitioned by `models::shard::Partition`. Each shard writes its own records
//! (`{simulation}-{record}-{shard}.csv`) and manifest, covering the instances it ran; the summary
//! printed is the whole run's.

use crate::assemble::{RunSetup, build_app};
use crate::scenario::Loaded;
use crate::summary::{self, Summary};
use engine::prelude::*;
use engine::shard::ShardStats;
use models::fabric::conservation::{self, ClassBalance, Conservation};
use models::shard::port::CrossedPackets;
use models::shard::{Partition, ShardPlan};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

/// What a sharded run leaves.
pub struct ShardedOutcome {
    /// The whole run's summary (what one world would have printed, but for wall time).
    pub summary: Summary,
    /// Each shard's own summary, as its manifest holds it.
    pub shard_summaries: Vec<Summary>,
    /// Each shard's app after the run.
    pub apps: Vec<App>,
    /// The files written, shard by shard.
    pub files: Vec<PathBuf>,
    /// The partition run.
    pub partition: Arc<Partition>,
    /// Windows and crossing packets, per shard.
    pub shard_stats: Vec<ShardStats>,
}

/// The partition of `loaded`'s fabric into `shards` shards, or why there is none: the
/// scenario's own (`partition`), which must have that many shards, or else one computed.
pub fn partition(loaded: &Loaded, shards: u32) -> Result<Partition, String> {
    if shards > 1 && !loaded.scenario.faults.0.is_empty() {
        return Err("faults are not supported with more than one shard yet".into());
    }
    if shards > 1 && loaded.scenario.nic.value.carries_int() {
        // INT hop stacks live in one world's table (`models::int`); a packet crossing shards
        // would leave its records behind.
        return Err("in-band telemetry (the controller's Feedback::int, e.g. Hpcc) is not supported with more than one shard yet".into());
    }
    let given = &loaded.scenario.partition;
    if given.is_empty() {
        return Partition::compute(&loaded.topology, shards).map_err(|e| e.to_string());
    }
    if given.len() != shards as usize {
        return Err(format!(
            "the scenario's partition has {} shards: run it with {} (or one, which ignores it)",
            given.len(),
            given.len()
        ));
    }
    // Checked when the scenario loaded.
    Partition::given(&loaded.topology, given).map_err(|e| format!("partition{}: {}", e.field, e.message))
}

/// Runs `loaded` as `partition.shards` shards on as many threads.
pub fn run_sharded(
    loaded: &Loaded,
    setup: &RunSetup,
    partition: Partition,
    progress: Option<&mut dyn FnMut(SimTime, u64)>,
    stop: &AtomicUsize,
) -> std::io::Result<ShardedOutcome> {
    let partition = Arc::new(partition);
    let n = partition.shards;
    let mut apps = (0..n)
        .map(|me| build_shard(loaded, setup, &partition, me))
        .collect::<std::io::Result<Vec<App>>>()?;
    let opts = RunOptions {
        stop: loaded.timeline.stop,
        beacon_interval: loaded.timeline.beacon_interval,
        progress,
    };
    let started = std::time::Instant::now();
    let results = engine::shard::run_threads(&mut apps, opts, stop, partition.lookahead);
    let wall = started.elapsed();
    let mut summaries = Vec::with_capacity(apps.len());
    let mut files = Vec::new();
    for (me, (app, (stats, _))) in apps.iter_mut().zip(&results).enumerate() {
        let (s, written) = finish_shard(loaded, setup, app, stats, n, me as u32)?;
        files.extend(written);
        summaries.push(s);
    }
    let crossed: Vec<_> = apps
        .iter()
        .map(|a| {
            a.world
                .get_resource::<CrossedPackets>()
                .map(|c| c.get())
                .unwrap_or_default()
        })
        .collect();
    let whole = merge(&summaries, &crossed, wall);
    Ok(ShardedOutcome {
        summary: whole,
        shard_summaries: summaries,
        apps,
        files,
        partition,
        shard_stats: results.into_iter().map(|(_, s)| s).collect(),
    })
}

/// Shard `me` of `partition`'s world, with its records and run info.
pub fn build_shard(loaded: &Loaded, setup: &RunSetup, partition: &Arc<Partition>, me: u32) -> std::io::Result<App> {
    let name = setup.simulation_name(loaded).to_string();
    let mut app = build_app(loaded, setup)?;
    let info = app.world.resource::<RunInfo>().clone();
    app.insert_resource(RunInfo {
        shard: me,
        shards: partition.shards,
        ..info
    });
    app.insert_resource(Records::new(setup.output.clone(), &name, me, setup.clock.clone())?);
    app.insert_resource(ShardPlan {
        me,
        partition: partition.clone(),
    });
    Ok(app)
}

/// After shard `me`'s run: its summary, and its manifest written beside its records.
pub fn finish_shard(
    loaded: &Loaded,
    setup: &RunSetup,
    app: &mut App,
    stats: &RunStats,
    shards: u32,
    me: u32,
) -> std::io::Result<(Summary, Vec<PathBuf>)> {
    let name = setup.simulation_name(loaded).to_string();
    if let Some(e) = app.world.resource_mut::<Records>().take_open_error() {
        return Err(std::io::Error::other(e));
    }
    let mut s = summary::summarize(&mut app.world, &name, stats);
    let records = app.world.resource::<Records>();
    if let Some(e) = records.error() {
        return Err(std::io::Error::other(e.to_string()));
    }
    if let Some(StopCause::Flag(sig)) = stats.stopped {
        s.interrupted = Some(crate::interrupt::Interrupted::new(sig, stats.sim_time.as_secs_f64()));
    }
    let mut written: Vec<PathBuf> = records.paths().into_iter().map(|p| p.to_path_buf()).collect();
    if let engine::records::Output::Folder(dir) = &setup.output {
        let names = written
            .iter()
            .filter_map(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        let manifest = summary::shard_manifest(loaded, &name, &s, names, shards);
        let path = dir.join(format!("{name}-manifest-{me}.json"));
        crate::write_json(&path, &manifest)?;
        written.push(path);
    }
    Ok((s, written))
}

/// The whole run's summary from its shards': counts add up, each pair's figures are the sum of
/// its Initiator's shard's and its Responder's shard's, and the packets that crossed between
/// shards are counted once (each shard's balance counts them as sent to it or in flight).
pub fn merge(parts: &[Summary], crossed: &[models::shard::port::Crossed], wall: std::time::Duration) -> Summary {
    let mut whole = parts[0].clone();
    whole.wall_sec = wall.as_secs_f64();
    for p in &parts[1..] {
        whole.setup_sec = whole.setup_sec.max(p.setup_sec);
        whole.events += p.events;
        whole.data_packets += p.data_packets;
        whole.wqes_posted += p.wqes_posted;
        whole.wqes_completed += p.wqes_completed;
        for (w, x) in whole.pairs.iter_mut().zip(&p.pairs) {
            debug_assert_eq!((w.initiator, w.responder), (x.initiator, x.responder));
            w.wqes += x.wqes;
            w.bytes += x.bytes;
            w.gbps += x.gbps;
        }
        whole.nic_losses += p.nic_losses;
        whole.watchdog.stalls.extend(p.watchdog.stalls.iter().cloned());
        whole.watchdog.deadlocks.extend(p.watchdog.deadlocks.iter().cloned());
    }
    whole.conservation = merge_conservation(parts.iter().map(|p| &p.conservation), crossed);
    let secs = whole.wall_sec.max(1e-9);
    whole.events_per_sec = whole.events as f64 / secs;
    whole.data_packets_per_wall_sec = whole.data_packets as f64 / secs;
    whole
}

fn merge_conservation<'a>(
    parts: impl Iterator<Item = &'a Conservation>,
    crossed: &[models::shard::port::Crossed],
) -> Conservation {
    let mut bal: [ClassBalance; 8] = std::array::from_fn(|c| ClassBalance {
        class: c as u8,
        ..Default::default()
    });
    let (mut pause, mut resume) = (0, 0);
    for part in parts {
        pause += part.switch_pfc_pause_sent;
        resume += part.switch_pfc_resume_sent;
        for c in &part.classes {
            bal[c.class as usize] += c;
        }
    }
    for x in crossed {
        for (c, b) in bal.iter_mut().enumerate() {
            b.sent -= x.received[c];
            b.in_flight -= x.out[c];
        }
    }
    conservation::judge(bal, pause, resume)
}

/// The partition as `rdmasim plan --shards N` prints it: each shard's hosts and switches, and
/// the lookahead.
pub fn describe(partition: &Partition, topology: &models::topology::Topology) -> String {
    let crossing = topology
        .links
        .iter()
        .filter(|l| partition.shard_of[l.a.0 as usize] != partition.shard_of[l.b.0 as usize])
        .count();
    let lookahead = if partition.lookahead == SimTime::MAX {
        "none (nothing crosses)".to_string()
    } else {
        format!("{} us", partition.lookahead.as_us_f64())
    };
    let mut out = format!(
        "partition: {} shards, {crossing} links between them, lookahead {lookahead}\n",
        partition.shards
    );
    let hosts = partition.hosts_per_shard(topology);
    for s in 0..partition.shards {
        let switches: Vec<&str> = (topology.num_hosts..topology.nodes.len())
            .filter(|&n| partition.shard_of[n] == s)
            .map(|n| topology.nodes[n].name.as_str())
            .collect();
        out += &format!(
            "  shard {s}: {} hosts, {} switches: {}\n",
            hosts[s as usize],
            switches.len(),
            switches.join(" ")
        );
    }
    out
}

/// What the shards did, for the line `rdmasim run` prints after the summary: the windows they
/// met at and the packets that crossed (the figures an efficiency estimate needs).
pub fn figures(out: &ShardedOutcome) -> String {
    let windows = out.shard_stats.first().map_or(0, |s| s.windows);
    let crossed: u64 = out.shard_stats.iter().map(|s| s.sent).sum();
    format!(
        "shards          {}: {windows} windows, {crossed} packets crossed ({:.1} per window)\n",
        out.partition.shards,
        crossed as f64 / windows.max(1) as f64
    )
}
