//! The end of `rdmasim run`: the summary and files printed (rank 0 alone under mpirun), the
//! report written when asked, and the exit code.

use crate::emit;
use rdmasim::RunSetup;
use rdmasim::scenario::Loaded;
use std::path::PathBuf;
use std::process::ExitCode;

/// Prints a run's summary and files (not on MPI ranks other than 0) and picks the exit code.
/// `report`: also write the run's report into that folder; `after`: lines printed after the
/// files written.
pub fn finish_run(
    result: std::io::Result<(rdmasim::summary::Summary, Vec<PathBuf>)>,
    loaded: &Loaded,
    setup: &RunSetup,
    json: bool,
    quiet_rank: bool,
    report: Option<&std::path::Path>,
    after: Vec<String>,
) -> ExitCode {
    match result {
        Ok((summary, mut files)) => {
            if let Some(dir) = report {
                match ::report::write_run_report(dir, Some(setup.simulation_name(loaded))) {
                    Ok(p) => files.push(p),
                    Err(e) => {
                        eprintln!("rdmasim: --report: {e}");
                        return ExitCode::from(1);
                    }
                }
            }
            // Under mpirun, rank 0 prints the whole run's summary; the other ranks stay quiet.
            let printed = if quiet_rank {
                Ok(())
            } else {
                emit(|out| {
                    if json {
                        writeln!(out, "{}", serde_json::to_string_pretty(&summary).unwrap_or_default())
                    } else {
                        write!(out, "{}", summary)?;
                        for f in &files {
                            writeln!(out, "wrote {}", f.display())?;
                        }
                        for line in &after {
                            writeln!(out, "{}", line.trim_end())?;
                        }
                        Ok(())
                    }
                })
            };
            if let Err(c) = printed {
                return c;
            }
            if summary.failed() {
                eprintln!("rdmasim: the run broke conservation (see the summary's violation lines): a bug");
                return ExitCode::from(1);
            }
            if let Some(i) = &summary.interrupted {
                eprintln!("rdmasim: interrupted by {} at {} s", i.signal, i.at_sim_time_sec);
                return ExitCode::from(i.exit_code());
            }
            if summary.watchdog_failed(loaded) {
                let w = &summary.watchdog;
                for s in &w.stalls {
                    eprintln!("rdmasim: watchdog: stalled {s}");
                }
                for d in &w.deadlocks {
                    eprintln!("rdmasim: watchdog: {d}");
                }
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => match rdmasim::open_error(&e) {
            // The output folder or a file in it: where the user pointed `--out`.
            Some(o) => {
                eprintln!("rdmasim: --out: {o}");
                ExitCode::from(2)
            }
            None => {
                eprintln!("rdmasim: {e}");
                ExitCode::from(1)
            }
        },
    }
}
