//! `rdmasim sweep`: a scenario over a grid of `--vary` values and seeds, each point a child
//! process; the index and the sweep's report.

use crate::{ScenarioArgs, emit, load, report};
use std::io::IsTerminal;
use std::process::ExitCode;

/// `rdmasim sweep`: checks every point, runs them, writes the index and the page.
pub fn sweep(
    args: &ScenarioArgs,
    vary: &[rdmasim::sweep::Vary],
    seeds: u64,
    out: &std::path::Path,
    jobs: Option<usize>,
    quiet: bool,
) -> ExitCode {
    use rdmasim::sweep::{Sweep, points, write_index};
    if seeds == 0 {
        eprintln!("rdmasim: --seeds: at least 1");
        return ExitCode::from(2);
    }
    if jobs == Some(0) {
        eprintln!("rdmasim: --jobs: at least 1");
        return ExitCode::from(2);
    }
    let base = match load(args) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("rdmasim: cannot find its own executable to run the points: {e}");
            return ExitCode::from(1);
        }
    };
    let sweep = Sweep {
        scenario: &args.scenario,
        set: &args.set,
        vary,
        out,
        jobs: jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        exe,
    };
    let points = points(vary, base.scenario.simulation.RandomSeed, seeds);
    if let Err(e) = sweep.check(&points) {
        return report(&e);
    }
    if out.exists() && !out.is_dir() {
        eprintln!("rdmasim: --out {}: exists and is not a folder", out.display());
        return ExitCode::from(2);
    }
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("rdmasim: --out {}: cannot create the folder: {e}", out.display());
        return ExitCode::from(2);
    }
    let bar = if !quiet && std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(points.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} points {pos}/{len} [{bar:30}] {elapsed_precise} eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let outcomes = sweep.run(&points, &|| bar.inc(1));
    bar.finish_and_clear();
    let index = match write_index(out, &sweep, &points, &outcomes) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("rdmasim: writing {}: {e}", out.join("index.csv").display());
            return ExitCode::from(1);
        }
    };
    let title = format!(
        "rdmasim sweep: {} ({})",
        base.scenario.name,
        vary.iter().map(|v| v.path.as_str()).collect::<Vec<_>>().join(" x ")
    );
    let page = match ::report::sweep_page::write_sweep_report(out, &title) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("rdmasim: the sweep's report: {e}");
            return ExitCode::from(1);
        }
    };
    let failed: Vec<_> = points
        .iter()
        .zip(&outcomes)
        .filter(|(_, o)| o.error.is_some())
        .collect();
    for (p, o) in &failed {
        eprintln!(
            "rdmasim: sweep: point {} ({}) failed (exit {}): {}",
            p.index,
            sweep.sets(p).join(" "),
            o.exit_code.map_or("none".into(), |c| c.to_string()),
            o.error.as_deref().unwrap_or("")
        );
    }
    let printed = emit(|o| {
        writeln!(o, "{} points ({} failed)", points.len(), failed.len())?;
        writeln!(o, "wrote {}", index.display())?;
        writeln!(o, "wrote {}", page.display())
    });
    match printed {
        Err(c) => c,
        Ok(()) if failed.is_empty() => ExitCode::SUCCESS,
        Ok(()) => ExitCode::from(1),
    }
}
