//! SIGINT and SIGTERM: a flag that the run loop reads at each beacon tick (`App::run_stoppable`),
//! so an interrupted run ends at a whole row with a manifest saying where it stopped.

use serde::Serialize;
use signal_hook::consts::{SIGINT, SIGTERM};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};

/// Holds the number of the last SIGINT or SIGTERM received, 0 before any.
pub type StopFlag = Arc<AtomicUsize>;

/// Registers SIGINT and SIGTERM to set the returned flag. A second signal, for a run that does
/// not reach its next tick soon enough, ends the process at once (exit 1).
pub fn install() -> std::io::Result<StopFlag> {
    let flag = StopFlag::default();
    let seen = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // Registered first, so it sees `seen` as the previous signal left it.
        signal_hook::flag::register_conditional_shutdown(sig, 1, Arc::clone(&seen))?;
        signal_hook::flag::register(sig, Arc::clone(&seen))?;
        signal_hook::flag::register_usize(sig, Arc::clone(&flag), sig as usize)?;
    }
    Ok(flag)
}

/// Where a run stopped because of a signal: the manifest's and the summary's `interrupted`.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Interrupted {
    /// "SIGINT" or "SIGTERM".
    pub signal: String,
    /// The beacon tick the run stopped at (the last row of every record is at or before it).
    pub at_sim_time_sec: f64,
}

impl Interrupted {
    /// The stop caused by signal number `signal` at the tick `at_sim_time_sec`.
    pub fn new(signal: usize, at_sim_time_sec: f64) -> Self {
        let signal = match signal as i32 {
            SIGINT => "SIGINT".to_string(),
            SIGTERM => "SIGTERM".to_string(),
            n => format!("signal {n}"),
        };
        Interrupted {
            signal,
            at_sim_time_sec,
        }
    }

    /// The shell's code for a process ended by this signal: 128 + its number (130 SIGINT, 143
    /// SIGTERM).
    pub fn exit_code(&self) -> u8 {
        match self.signal.as_str() {
            "SIGINT" => 128 + SIGINT as u8,
            "SIGTERM" => 128 + SIGTERM as u8,
            _ => 1,
        }
    }
}

/// Under `rdmasim serve` (`run --supervised`): when standard input closes, because the server
/// stopped or was killed, `flag` is set as by SIGTERM, so an orphaned run ends at its next tick.
pub fn stop_when_stdin_closes(flag: &StopFlag) {
    let flag = Arc::clone(flag);
    std::thread::spawn(move || {
        // Whatever comes in is ignored; only the end matters.
        std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink()).ok();
        flag.store(SIGTERM as usize, std::sync::atomic::Ordering::SeqCst);
    });
}
