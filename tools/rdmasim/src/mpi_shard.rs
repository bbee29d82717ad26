//! `mpirun -n N rdmasim run SCENARIO` (cargo feature `mpi`): one shard per MPI rank, on one
//! machine or many. The windows and the exchange are those of shards on threads
//! (`engine::shard`); here the ranks agree on the window with an all-gather and move the
//! crossing packets as bytes (`ShardPort::encode`) with an all-to-all. Each rank writes its own
//! records and manifest; rank 0 prints the whole run's summary.

use crate::assemble::RunSetup;
use crate::scenario::Loaded;
use crate::shards::{build_shard, finish_shard, merge};
use crate::summary::Summary;
use bevy_ecs::prelude::World;
use engine::prelude::*;
use engine::shard::{ShardPorts, Window, WindowSync};
use models::shard::Partition;
use models::shard::port::{Crossed, CrossedPackets};
use mpi::datatype::{Partition as Parts, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

/// The ranks of the job this process is in, when it was started by `mpirun` with more than one
/// (`None` otherwise: the process runs alone, and MPI is not initialized).
pub fn ranks() -> Option<(mpi::environment::Universe, SimpleCommunicator)> {
    // Open MPI and MPICH say so in the environment; a plain run never initializes MPI.
    let size = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse::<u32>().ok())?;
    if size < 2 {
        return None;
    }
    let universe = mpi::initialize()?;
    let world = universe.world();
    Some((universe, world))
}

/// A shard's meeting with the other ranks at a window's end.
struct MpiSync {
    comm: SimpleCommunicator,
    n: usize,
    lookahead: SimTime,
}

fn stop_code(s: Option<StopCause>) -> u64 {
    match s {
        None => 0,
        Some(StopCause::WriteError) => 1,
        Some(StopCause::Flag(sig)) => 2 + sig as u64,
    }
}

fn stop_of(code: u64) -> Option<StopCause> {
    match code {
        0 => None,
        1 => Some(StopCause::WriteError),
        c => Some(StopCause::Flag((c - 2) as usize)),
    }
}

fn offsets(counts: &[i32]) -> Vec<i32> {
    counts
        .iter()
        .scan(0, |acc, &c| {
            let at = *acc;
            *acc += c;
            Some(at)
        })
        .collect()
}

impl WindowSync for MpiSync {
    fn sync(
        &mut self,
        world: &mut World,
        queue: &mut EventQueue,
        now: SimTime,
        cap: SimTime,
        wish: Option<StopCause>,
    ) -> Window {
        // For each destination: for each port, the batch's length (u64) then its bytes.
        let outgoing = engine::shard::collect(world, queue, self.n, |port, b| {
            b.map(|b| port.encode(b)).unwrap_or_default()
        });
        let next = outgoing.next;
        let out: Vec<Vec<u8>> = outgoing
            .out
            .into_iter()
            .map(|batches| {
                let mut bytes = Vec::new();
                for b in batches {
                    bytes.extend_from_slice(&(b.len() as u64).to_le_bytes());
                    bytes.extend_from_slice(&b);
                }
                bytes
            })
            .collect();
        let mine = [next.ps(), stop_code(wish)];
        let mut all = vec![0u64; 2 * self.n];
        self.comm.all_gather_into(&mine[..], &mut all[..]);
        let send_counts: Vec<i32> = out.iter().map(|b| b.len() as i32).collect();
        let mut recv_counts = vec![0i32; self.n];
        self.comm.all_to_all_into(&send_counts[..], &mut recv_counts[..]);
        let (send_at, recv_at) = (offsets(&send_counts), offsets(&recv_counts));
        let sent: Vec<u8> = out.concat();
        let mut received = vec![0u8; recv_counts.iter().map(|&c| c as usize).sum()];
        {
            let parts = Parts::new(&sent[..], &send_counts[..], &send_at[..]);
            let mut into = PartitionMut::new(&mut received[..], &recv_counts[..], &recv_at[..]);
            self.comm.all_to_all_varcount_into(&parts, &mut into);
        }
        if let Some(mut ports) = world.get_resource_mut::<ShardPorts>() {
            // Rank order, then port order: the same in every run.
            for src in 0..self.n {
                let mut bytes = &received[recv_at[src] as usize..(recv_at[src] + recv_counts[src]) as usize];
                for port in ports.0.iter_mut() {
                    if bytes.is_empty() {
                        break;
                    }
                    let (len, rest) = bytes.split_at(8);
                    let len = u64::from_le_bytes(len.try_into().expect("8 bytes")) as usize;
                    let (batch, rest) = rest.split_at(len);
                    bytes = rest;
                    if len > 0 {
                        let b = port.decode(batch).expect("a batch the same port encoded");
                        port.deliver(queue, b);
                    }
                }
            }
        }
        let global = (0..self.n).map(|r| SimTime(all[2 * r])).min().unwrap_or(SimTime::MAX);
        let stop = (0..self.n).find_map(|r| stop_of(all[2 * r + 1]));
        debug_assert!(global >= now);
        Window {
            end: global.saturating_add(self.lookahead).min(cap),
            stop,
        }
    }
}

/// What one rank sends rank 0 at the end: its summary, its crossing counts and its files.
#[derive(serde::Serialize, serde::Deserialize)]
struct RankReport {
    summary: Summary,
    crossed: Crossed,
    files: Vec<PathBuf>,
}

/// Runs this rank's shard of `loaded`. Rank 0 gets the whole run's summary and every rank's
/// files; the others get their own.
pub fn run_rank(
    comm: &SimpleCommunicator,
    loaded: &Loaded,
    setup: &RunSetup,
    partition: Partition,
    progress: Option<&mut dyn FnMut(SimTime, u64)>,
    stop: &AtomicUsize,
) -> std::io::Result<(Summary, Vec<PathBuf>)> {
    let (me, n) = (comm.rank() as u32, comm.size() as u32);
    let partition = Arc::new(partition);
    let mut app = build_shard(loaded, setup, &partition, me)?;
    let opts = RunOptions {
        stop: loaded.timeline.stop,
        beacon_interval: loaded.timeline.beacon_interval,
        progress: if me == 0 { progress } else { None },
    };
    let mut sync = MpiSync {
        comm: comm.duplicate(),
        n: n as usize,
        lookahead: partition.lookahead,
    };
    let started = std::time::Instant::now();
    let stats = app.run_shard(opts, stop, &mut sync);
    let (summary, files) = finish_shard(loaded, setup, &mut app, &stats, n, me)?;
    let crossed = app
        .world
        .get_resource::<CrossedPackets>()
        .map(|c| c.get())
        .unwrap_or_default();
    let report = serde_json::to_vec(&RankReport {
        summary: summary.clone(),
        crossed,
        files: files.clone(),
    })
    .map_err(std::io::Error::other)?;
    // Every rank's report to rank 0: lengths first, then the bytes.
    let root = comm.process_at_rank(0);
    let len = report.len() as i32;
    if me == 0 {
        let mut lens = vec![0i32; n as usize];
        root.gather_into_root(&len, &mut lens[..]);
        let at = offsets(&lens);
        let mut all = vec![0u8; lens.iter().map(|&l| l as usize).sum()];
        {
            let mut into = PartitionMut::new(&mut all[..], &lens[..], &at[..]);
            root.gather_varcount_into_root(&report[..], &mut into);
        }
        let mut parts = Vec::new();
        let (mut crossings, mut every_file) = (Vec::new(), Vec::new());
        for r in 0..n as usize {
            let bytes = &all[at[r] as usize..(at[r] + lens[r]) as usize];
            let rep: RankReport = serde_json::from_slice(bytes).map_err(std::io::Error::other)?;
            parts.push(rep.summary);
            crossings.push(rep.crossed);
            every_file.extend(rep.files);
        }
        Ok((merge(&parts, &crossings, started.elapsed()), every_file))
    } else {
        root.gather_into(&len);
        root.gather_varcount_into(&report[..]);
        Ok((summary, files))
    }
}
