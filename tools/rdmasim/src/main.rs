//! `rdmasim`: run, validate and plan RoCEv2 fabric scenarios. Exit codes: 0 success, 2 bad
//! input (the message names the file, line, column and field) or an output the user's arguments
//! spoil (`rdmasim: --out PATH: exists and is not a folder`, `rdmasim: --out: PATH: REASON` for a
//! folder or file that cannot be created or a symbolic link at a file's name, `rdmasim: --name
//! NAME: REASON`), 1 internal failure, a failed record write (`rdmasim: writing PATH: <os
//! error>`; the run stops at its next beacon tick and every file ends at a whole row), a failed
//! write to standard output (`rdmasim: writing standard output: REASON`, e.g. /dev/full) or, with
//! `watchdog.Fatal` or `--strict`, a stalled connection or a PFC deadlock; 130 (SIGINT) or 143
//! (SIGTERM): `run` stopped at the next beacon tick, the records end at a whole row and the
//! manifest says `interrupted` (a second signal: exit 1 at once). Standard output a closed pipe
//! (`| head`) ends the output quietly, exit 0. See scenarios/README.md, "Output files".

use clap::{Parser, Subcommand, ValueEnum};
use engine::clock::WallClock;
use engine::records::Output;
use rdmasim::RunSetup;
use rdmasim::limits::Estimate;
use rdmasim::scenario::{Loaded, load_path};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

mod alloc;
mod run_cli;
mod serve_cli;
mod sweep_cli;

#[derive(Parser, Debug)]
#[command(
    name = "rdmasim",
    version,
    about = "A packet-level simulator of RDMA over Converged Ethernet (RoCEv2) fabrics"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Debug)]
struct ScenarioArgs {
    /// The scenario file (RON), e.g. scenarios/default.ron.
    scenario: PathBuf,
    /// Overrides one field before loading: a dotted PATH (with [i] for list items) and a RON
    /// VALUE, e.g. `simulation.RunTime=0.01`, `applications[0].NumConnections=4`,
    /// `topology=Star(hosts: 10)`. Repeat to set several, applied in order.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    set: Vec<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Runs a scenario and writes its records (rdma-perf, beacon, manifest) as CSV and JSON.
    Run {
        #[command(flatten)]
        args: ScenarioArgs,
        /// The folder for the output files; created if missing.
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Names the output files instead of the scenario's `name`.
        #[arg(long)]
        name: Option<String>,
        /// Prints the summary as JSON instead of text.
        #[arg(long)]
        json: bool,
        /// No progress bar, even on a terminal.
        #[arg(long)]
        quiet: bool,
        /// A stalled connection or a PFC deadlock fails the run (exit 1), as `watchdog.Fatal`.
        #[arg(long)]
        strict: bool,
        /// Runs even when the estimated rows or memory pass the limits (scenarios/README.md).
        #[arg(long)]
        force: bool,
        /// Splits the run over N shards on N threads, each writing its own records
        /// (scenarios/README.md, "Shards"); the results do not depend on N.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
        shards: u32,
        /// Run under `rdmasim serve`: progress lines on standard error, and a stop (as by
        /// SIGTERM) when standard input closes.
        #[arg(long, hide = true)]
        supervised: bool,
        /// Also writes the run's report, OUT/{simulation}-report.html (as `rdmasim report`).
        #[arg(long)]
        report: bool,
        #[command(flatten)]
        capture: rdmasim::capture::CaptureArgs,
    },
    /// Runs a scenario over every combination of the --vary values and seeds, each point a child
    /// process in its own folder under --out, and writes --out/index.csv and
    /// --out/sweep-report.html.
    Sweep {
        #[command(flatten)]
        args: ScenarioArgs,
        /// A field and its values: PATH=v1,v2,... with PATH as --set takes it and each value RON
        /// (commas inside brackets or quotes belong to the value), e.g.
        /// `applications[0].NumConnections=1,2,4,8`. Repeat for a cartesian product.
        #[arg(long, value_name = "PATH=V1,V2,...")]
        vary: Vec<rdmasim::sweep::Vary>,
        /// Seeds per combination: RandomSeed, RandomSeed + 1, ...
        #[arg(long, default_value_t = 1)]
        seeds: u64,
        /// The folder for the points' folders, index.csv and the report; created if missing.
        #[arg(long, default_value = "sweep")]
        out: PathBuf,
        /// Points run at once (default: the number of cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// No progress bar, even on a terminal.
        #[arg(long)]
        quiet: bool,
    },
    /// Writes the report of the run whose records are in OUT: OUT/{simulation}-report.html, one
    /// self-contained HTML file with SVG plots and tables.
    Report {
        /// The folder `rdmasim run --out` wrote.
        out: PathBuf,
        /// The simulation to report on, when the folder holds several.
        #[arg(long)]
        name: Option<String>,
    },
    /// Checks a scenario without running it.
    Validate {
        #[command(flatten)]
        args: ScenarioArgs,
    },
    /// Prints the placement, pairing and connections a scenario gives.
    Plan {
        #[command(flatten)]
        args: ScenarioArgs,
        /// text: a table for people; json: one JSON object with hosts, pairs and connections.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Also prints how `run --shards N` splits the fabric (text only).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
        shards: Option<u32>,
    },
    /// Prints the scenario's fabric as Graphviz DOT.
    Topology {
        #[command(flatten)]
        args: ScenarioArgs,
    },
    /// Serves the results API: configurations, simulations and their records over HTTP.
    Serve(serve_cli::ServeArgs),
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Text,
    Json,
}

fn load(args: &ScenarioArgs) -> Result<Loaded, ExitCode> {
    load_path(&args.scenario, &args.set).map_err(|e| report(&e))
}

/// Prints a bad-input error (with the offending line on a terminal): exit code 2.
fn report(e: &engine::scenario::ScenarioError) -> ExitCode {
    eprintln!("{e}");
    if std::io::stderr().is_terminal() {
        eprintln!("{}", e.render());
    }
    ExitCode::from(2)
}

/// Writes to standard output through `write`, then flushes. A closed pipe (`| head`) ends the
/// output quietly, as other Unix tools do; any other failure (a full disk) is reported and is
/// `Err(1)`.
fn emit(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), ExitCode> {
    let mut out = std::io::stdout().lock();
    match write(&mut out).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => {
            eprintln!("rdmasim: writing standard output: {e}");
            Err(ExitCode::from(1))
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A panic is a bug in rdmasim, never the user's input: say so and exit 1. A hook rather than
    // `catch_unwind`, because release builds abort on panic (no unwinding tables on the hot path:
    // 1.3% fewer instructions per event, callgrind).
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        eprintln!("rdmasim: internal error (a bug): please report it with the scenario");
        std::process::exit(1);
    }));
    if let Err(msg) = check_lookahead_env() {
        eprintln!("rdmasim: {msg}");
        return ExitCode::from(2);
    }
    dispatch(cli)
}

/// `RDMASIM_LOOKAHEAD`, the measuring knob (scenarios/README.md, "Large fabrics"), when set:
/// a typo there would otherwise measure the default without a word.
fn check_lookahead_env() -> Result<(), String> {
    let Some(v) = std::env::var_os("RDMASIM_LOOKAHEAD") else {
        return Ok(());
    };
    let max = engine::event::MAX_LOOKAHEAD;
    // Empty counts as unset, as shells' `VAR= command` means.
    if v.to_str().is_some_and(|s| s.trim().is_empty()) {
        return Ok(());
    }
    match v.to_str().and_then(|s| s.trim().parse::<usize>().ok()) {
        Some(n) if n <= max => Ok(()),
        _ => Err(format!(
            "RDMASIM_LOOKAHEAD={}: not a number of events from 0 to {max} (0 turns the lookahead off)",
            v.to_string_lossy()
        )),
    }
}

fn dispatch(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Validate { args } => match load(&args) {
            Ok(l) => emit(|out| {
                writeln!(
                    out,
                    "{}: ok ({} hosts, {} switches, {} connections, stop at {} s)",
                    l.file,
                    l.topology.num_hosts,
                    l.topology.num_switches(),
                    l.plan.connections.len(),
                    l.timeline.stop.as_secs_f64()
                )?;
                writeln!(out, "{}: {}", l.file, Estimate::of(&l))
            })
            .map_or_else(
                |c| c,
                |()| match Estimate::of(&l).check(&l) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => report(&e),
                },
            ),
            Err(c) => c,
        },
        Command::Plan { args, format, shards } => match load(&args) {
            Ok(l) => {
                let partition = match shards.map(|n| rdmasim::shards::partition(&l, n)).transpose() {
                    Ok(p) => p,
                    Err(e) => {
                        eprintln!("rdmasim: --shards {}: {e}", shards.unwrap_or(1));
                        return ExitCode::from(2);
                    }
                };
                emit(|out| match format {
                    Format::Json => writeln!(out, "{}", l.plan.to_json()),
                    Format::Text => {
                        print_plan(out, &l)?;
                        match &partition {
                            Some(p) => write!(out, "{}", rdmasim::shards::describe(p, &l.topology)),
                            None => Ok(()),
                        }
                    }
                })
                .map_or_else(|c| c, |()| ExitCode::SUCCESS)
            }
            Err(c) => c,
        },
        Command::Serve(args) => serve_cli::serve(args),
        Command::Sweep {
            args,
            vary,
            seeds,
            out,
            jobs,
            quiet,
        } => sweep_cli::sweep(&args, &vary, seeds, &out, jobs, quiet),
        Command::Report { out, name } => match ::report::write_run_report(&out, name.as_deref()) {
            Ok(p) => emit(|o| writeln!(o, "wrote {}", p.display())).map_or_else(|c| c, |()| ExitCode::SUCCESS),
            Err(e) => {
                eprintln!("rdmasim: report: {e}");
                // A folder that holds no run, or records rdmasim did not write, is the user's
                // input; a plot that cannot be drawn is ours.
                ExitCode::from(if matches!(e, ::report::ReportError::Plot(_)) {
                    1
                } else {
                    2
                })
            }
        },
        Command::Topology { args } => match load(&args) {
            Ok(l) => emit(|out| write!(out, "{}", models::topology::dot::to_dot(&l.topology)))
                .map_or_else(|c| c, |()| ExitCode::SUCCESS),
            Err(c) => c,
        },
        Command::Run {
            args,
            out,
            name,
            json,
            quiet,
            strict,
            force,
            shards,
            supervised,
            report: with_report,
            capture,
        } => {
            let mut loaded = match load(&args) {
                Ok(l) => l,
                Err(c) => return c,
            };
            if !force && let Err(e) = Estimate::of(&loaded).check(&loaded) {
                return report(&e);
            }
            loaded.scenario.watchdog.Fatal |= strict;
            if let Some(n) = &name
                && let Err(why) = engine::records::check_name(n)
            {
                eprintln!("rdmasim: --name {n}: {why}");
                return ExitCode::from(2);
            }
            if out.exists() && !out.is_dir() {
                eprintln!("rdmasim: --out {}: exists and is not a folder", out.display());
                return ExitCode::from(2);
            }
            let out_dir = out.clone();
            let setup = RunSetup {
                output: Output::Folder(out),
                name,
                clock: WallClock::from_env(),
            };
            let capture_path = capture.pcap.clone();
            let mut group = rdmasim::assemble::plugins(&loaded);
            let capture = match capture.plugin(&loaded) {
                Ok(Some((plugin, handle))) => {
                    group = group.add(plugin);
                    Some(handle)
                }
                Ok(None) => None,
                Err(why) => {
                    eprintln!("rdmasim: {why}");
                    return ExitCode::from(2);
                }
            };
            let bar = (!quiet && std::io::stderr().is_terminal()).then(|| progress_bar(loaded.timeline.stop.ps()));
            let stop_sec = loaded.timeline.stop.as_secs_f64();
            let mut tick = |t: engine::SimTime, events: u64| {
                if supervised {
                    // The server may be gone (stderr closed): stdin's end stops the run, not this.
                    writeln!(std::io::stderr(), "rdmasim-progress {} {stop_sec}", t.as_secs_f64()).ok();
                }
                if let Some(b) = &bar {
                    b.set_position(t.ps());
                    b.set_message(format!("{events} events"));
                }
            };
            let stop = match rdmasim::interrupt::install() {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("rdmasim: cannot handle SIGINT/SIGTERM: {e}");
                    return ExitCode::from(1);
                }
            };
            if supervised {
                rdmasim::interrupt::stop_when_stdin_closes(&stop);
            }
            let mut shard_line = String::new();
            // Started by `mpirun` with several ranks: one shard each (feature `mpi`).
            #[cfg(feature = "mpi")]
            if let Some((_universe, comm)) = rdmasim::mpi_shard::ranks() {
                use mpi::traits::Communicator;
                let n = comm.size() as u32;
                if shards != 1 || capture.is_some() {
                    eprintln!("rdmasim: under mpirun each rank is one shard: leave --shards and --pcap out");
                    return ExitCode::from(2);
                }
                let partition = match rdmasim::shards::partition(&loaded, n) {
                    Ok(p) => p,
                    Err(e) => {
                        eprintln!("rdmasim: mpirun -n {n}: {e}");
                        return ExitCode::from(2);
                    }
                };
                let result = rdmasim::mpi_shard::run_rank(&comm, &loaded, &setup, partition, Some(&mut tick), &stop);
                if let Some(b) = bar {
                    b.finish_and_clear();
                }
                let rank0 = comm.rank() == 0;
                let report = (with_report && rank0).then_some(out_dir.as_path());
                return run_cli::finish_run(result, &loaded, &setup, json, !rank0, report, Vec::new());
            }
            if shards > 1 && capture.is_some() {
                eprintln!("rdmasim: --pcap: capture a run of one shard (leave --shards out)");
                return ExitCode::from(2);
            }
            let result = if shards == 1 {
                rdmasim::run_group(&loaded, &setup, group, Some(&mut tick), &stop).map(|o| (o.summary, o.files))
            } else {
                let partition = match rdmasim::shards::partition(&loaded, shards) {
                    Ok(p) => p,
                    Err(e) => {
                        eprintln!("rdmasim: --shards {shards}: {e}");
                        return ExitCode::from(2);
                    }
                };
                rdmasim::shards::run_sharded(&loaded, &setup, partition, Some(&mut tick), &stop).map(|o| {
                    shard_line = rdmasim::shards::figures(&o);
                    (o.summary, o.files)
                })
            };
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            let captured = match capture.map(pcap::PcapHandle::finish).transpose() {
                Ok(Some(c)) if c.frames == 0 => {
                    eprintln!(
                        "rdmasim: --pcap: no frame was captured (only the RoceNic emits trace points; check --pcap-hosts, --pcap-direction and the window)"
                    );
                    Some(c)
                }
                Ok(c) => c,
                Err(e) => {
                    eprintln!("rdmasim: --pcap {e}");
                    return ExitCode::from(1);
                }
            };
            let mut after = Vec::new();
            if !shard_line.is_empty() {
                after.push(shard_line);
            }
            if let (Some(c), Some(path)) = (captured, &capture_path) {
                let capped = if c.capped { " (the cap: --pcap-max-packets)" } else { "" };
                after.push(format!("wrote {} ({} frames{capped})", path.display(), c.frames));
            }
            let report = with_report.then_some(out_dir.as_path());
            run_cli::finish_run(result, &loaded, &setup, json, false, report, after)
        }
    }
}

fn progress_bar(stop_ps: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(stop_ps);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} simulated {percent:>3}% [{bar:30}] {elapsed_precise} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

fn print_plan(out: &mut dyn Write, l: &Loaded) -> std::io::Result<()> {
    writeln!(out, "hosts ({}):", l.plan.hosts.len())?;
    for h in &l.plan.hosts {
        writeln!(out, "  node {:>4}  {:<10} {}", h.node_id, h.component, h.application)?;
    }
    writeln!(out, "pairs ({}):", l.plan.pairs.len())?;
    for p in &l.plan.pairs {
        writeln!(out, "  {:>4} -> {:<4} {}", p.initiator, p.responder, p.application)?;
    }
    writeln!(out, "connections: {}", l.plan.connections.len())?;
    for c in &l.plan.connections {
        writeln!(
            out,
            "  #{:<5} {:>4} -> {:<4} index {:<4} class {} {}",
            c.id, c.initiator, c.responder, c.index, c.traffic_class, c.application_name
        )?;
    }
    // What `--pcap-ports SWITCH:PORT` names: each switch's ports and what they face.
    let t = &l.topology;
    let switches: Vec<_> = t
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, _)| !t.is_host(*i as u32))
        .collect();
    writeln!(out, "switch ports ({} switches):", switches.len())?;
    for (i, n) in switches {
        let ports: Vec<String> = (n.ports.iter().enumerate())
            .map(|(p, r)| format!("{p}:{}", t.nodes[r.peer_node as usize].name))
            .collect();
        writeln!(out, "  {} (node {i}): {}", n.name, ports.join(" "))?;
    }
    Ok(())
}
