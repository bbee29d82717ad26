//! The workers: each takes the oldest queued simulation and runs it as a child
//! `rdmasim run scenario.ron --supervised --out out --set ...` in the run's own folder, so a run
//! that fails, even by aborting, never takes the server down. A completed run's `out` folder is
//! moved to the results in one rename, then listed with its `completed` status in one transaction.

use crate::api::AppState;
use crate::db::{self, FileRow, SimRow, Status};
use crate::files::list_outputs;
use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::Notify;

/// What the supervised child prints on standard error at each beacon tick.
const PROGRESS_PREFIX: &str = "rdmasim-progress ";
/// The most of a failed run's standard error kept as its message, in bytes.
const MAX_MESSAGE_BYTES: usize = 4096;

/// Where a running simulation is, in simulated seconds.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Progress {
    pub sim_time_sec: f64,
    pub stop_sec: f64,
}

/// The workers' shared state: progress and cancellation of the runs in flight.
#[derive(Default)]
pub struct Runs {
    progress: Mutex<HashMap<i64, Progress>>,
    cancels: Mutex<HashMap<i64, Arc<Notify>>>,
    /// Woken when a simulation is queued.
    pub wake: Notify,
}

impl Runs {
    pub fn progress(&self, id: i64) -> Option<Progress> {
        self.progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .copied()
    }

    /// Stops the child of a running simulation (its status is already `cancelled`).
    pub fn cancel(&self, id: i64) {
        if let Some(n) = self.cancels.lock().unwrap_or_else(|p| p.into_inner()).get(&id) {
            n.notify_one();
        }
    }

    fn set_progress(&self, id: i64, p: Option<Progress>) {
        let mut m = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        match p {
            Some(p) => m.insert(id, p),
            None => m.remove(&id),
        };
    }
}

/// One worker: runs queued simulations one at a time, forever.
pub async fn worker(state: AppState) {
    loop {
        let woken = state.runs.wake.notified();
        tokio::pin!(woken);
        // Registered before looking, so a simulation queued meanwhile is not missed.
        woken.as_mut().enable();
        match state.db.call(db::claim_next).await {
            Ok(Some(sim)) => run(&state, sim).await,
            Ok(None) => woken.await,
            Err(e) => {
                eprintln!("rdmasim serve: the database: {e}");
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
        }
    }
}

/// How a child ended.
enum End {
    Exited(std::process::ExitStatus),
    Cancelled,
}

async fn run(state: &AppState, sim: SimRow) {
    let id = sim.id;
    let cancel = Arc::new(Notify::new());
    state
        .runs
        .cancels
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, cancel.clone());
    let (status, message, files) = match execute(state, &sim, &cancel).await {
        Ok((End::Cancelled, _)) => (Status::Cancelled, None, Vec::new()),
        Ok((End::Exited(s), _)) if s.success() => match collect(state, id) {
            Ok(files) => (Status::Completed, None, files),
            Err(e) => (Status::Failed, Some(format!("keeping the results: {e}")), Vec::new()),
        },
        Ok((End::Exited(s), stderr)) => (Status::Failed, Some(failure_message(s, &stderr)), Vec::new()),
        Err(e) => (Status::Failed, Some(format!("starting the run: {e}")), Vec::new()),
    };
    let msg = message.clone();
    let done = state
        .db
        .call(move |c| db::finish(c, id, status, msg.as_deref(), &files))
        .await;
    if !matches!(done, Ok(true)) {
        // Cancelled meanwhile, or not recorded: the results are not listed, so not kept.
        std::fs::remove_dir_all(state.layout.results_dir(id)).ok();
    }
    if let Err(e) = done {
        eprintln!("rdmasim serve: recording simulation {id}: {e}");
    }
    std::fs::remove_dir_all(state.layout.run_dir(id)).ok();
    state.runs.set_progress(id, None);
    state.runs.cancels.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
}

/// Runs the child to its end; its standard error but the progress lines.
async fn execute(state: &AppState, sim: &SimRow, cancel: &Notify) -> std::io::Result<(End, String)> {
    let dir = state.layout.run_dir(sim.id);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("scenario.ron"), &sim.scenario)?;
    let mut cmd = tokio::process::Command::new(&state.runner);
    cmd.args(["run", "scenario.ron", "--quiet", "--supervised", "--out", "out"]);
    for o in &sim.overrides {
        cmd.arg("--set").arg(o);
    }
    // Standard input stays open while the server lives: the child stops when it closes.
    cmd.current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn()?;
    let stdin = child.stdin.take();
    let stderr = child.stderr.take();
    let runs_id = sim.id;
    let runs = state.runs.clone();
    let reader = tokio::spawn(async move {
        let mut kept = String::new();
        let Some(stderr) = stderr else {
            return kept;
        };
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(p) = line.strip_prefix(PROGRESS_PREFIX).and_then(parse_progress) {
                runs.set_progress(runs_id, Some(p));
            } else if kept.len() < MAX_MESSAGE_BYTES {
                kept.push_str(&line);
                kept.push('\n');
            }
        }
        kept
    });
    let end = tokio::select! {
        s = child.wait() => End::Exited(s?),
        () = cancel.notified() => {
            child.start_kill().ok();
            child.wait().await?;
            End::Cancelled
        }
    };
    drop(stdin);
    let stderr = reader.await.unwrap_or_default();
    Ok((end, stderr))
}

fn parse_progress(s: &str) -> Option<Progress> {
    let mut it = s.split_whitespace().map(|x| x.parse::<f64>().ok());
    Some(Progress {
        sim_time_sec: it.next()??,
        stop_sec: it.next()??,
    })
}

fn failure_message(status: std::process::ExitStatus, stderr: &str) -> String {
    let mut msg = stderr.trim().to_string();
    if msg.len() > MAX_MESSAGE_BYTES {
        let mut cut = MAX_MESSAGE_BYTES;
        while !msg.is_char_boundary(cut) {
            cut -= 1;
        }
        msg.truncate(cut);
    }
    if msg.is_empty() {
        msg = match status.code() {
            Some(c) => format!("rdmasim run exited with code {c}"),
            None => format!("rdmasim run ended abnormally ({status})"),
        };
    }
    msg
}

/// Moves a completed run's files to its results folder and lists them. They are flushed to disk
/// first, and the move after, so a power cut cannot leave a listed file short.
fn collect(state: &AppState, id: i64) -> std::io::Result<Vec<FileRow>> {
    let out = state.layout.run_dir(id).join("out");
    let files = list_outputs(&out)?;
    for f in &files {
        std::fs::File::open(out.join(&f.name))?.sync_all()?;
    }
    let results = state.layout.results_dir(id);
    std::fs::rename(&out, &results)?;
    if let Some(parent) = results.parent() {
        // A folder's entries are made durable by syncing the folder (not supported everywhere).
        std::fs::File::open(parent).and_then(|d| d.sync_all()).ok();
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_parse() {
        assert_eq!(
            parse_progress("0.001 0.006"),
            Some(Progress {
                sim_time_sec: 0.001,
                stop_sec: 0.006
            })
        );
        assert_eq!(parse_progress("x 1"), None);
        assert_eq!(parse_progress("1"), None);
    }
}
