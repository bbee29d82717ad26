//! The service's state in SQLite (`DATA/rdmasim.sqlite`): configurations, simulations and the
//! result files of completed ones. A simulation's files and its `completed` status are written
//! in one transaction, so a file is listed only once its run has finished and been moved in.

use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// A simulation's status, as the API names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Queued,
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Queued => "queued",
            Status::Running => "running",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str) -> Status {
        match s {
            "queued" => Status::Queued,
            "running" => Status::Running,
            "completed" => Status::Completed,
            "cancelled" => Status::Cancelled,
            _ => Status::Failed,
        }
    }
}

/// A configuration: the scenario as uploaded and the parameters set on it.
pub struct ConfigRow {
    pub id: i64,
    pub scenario: String,
    /// A JSON object, parameter name to the value as given.
    pub parameters: serde_json::Map<String, serde_json::Value>,
}

/// A simulation: a copy of its configuration at start, and where it is.
pub struct SimRow {
    pub id: i64,
    pub config_id: i64,
    pub status: Status,
    pub message: Option<String>,
    pub scenario: String,
    /// The `--set` arguments its parameters make.
    pub overrides: Vec<String>,
}

/// One result file of a completed simulation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRow {
    pub name: String,
    pub kind: String,
    pub bytes: u64,
}

/// The message of a run that was in flight when the server stopped.
pub const INTERRUPTED: &str = "the server stopped while this simulation ran; start it again";

const SCHEMA: &str = "
PRAGMA journal_mode = WAL;
PRAGMA synchronous = FULL;
PRAGMA foreign_keys = ON;
CREATE TABLE IF NOT EXISTS configurations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    scenario TEXT NOT NULL,
    parameters TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS simulations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    config_id INTEGER NOT NULL REFERENCES configurations(id),
    scenario TEXT NOT NULL,
    overrides TEXT NOT NULL,
    status TEXT NOT NULL,
    message TEXT
);
CREATE TABLE IF NOT EXISTS result_files (
    sim_id INTEGER NOT NULL REFERENCES simulations(id),
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    PRIMARY KEY (sim_id, name)
);
";

/// The connection, shared; every call runs on tokio's blocking pool.
#[derive(Clone)]
pub struct Db {
    conn: Arc<Mutex<Connection>>,
    /// Calls waiting on a blocking thread at once: the connection serves one at a time anyway,
    /// so a burst of requests waits here instead of taking hundreds of threads.
    slots: Arc<tokio::sync::Semaphore>,
}

impl Db {
    /// Blocking threads that may wait on the connection at once.
    const SLOTS: usize = 4;

    /// Opens (or creates) the database and its tables.
    pub fn open(path: &Path) -> rusqlite::Result<Db> {
        let c = Connection::open(path)?;
        c.execute_batch(SCHEMA)?;
        Ok(Db {
            conn: Arc::new(Mutex::new(c)),
            slots: Arc::new(tokio::sync::Semaphore::new(Self::SLOTS)),
        })
    }

    /// Runs `f` with the connection, off the async threads.
    pub async fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<R> + Send + 'static,
    ) -> rusqlite::Result<R> {
        let as_error = |e: Box<dyn std::error::Error + Send + Sync>| rusqlite::Error::ToSqlConversionFailure(e);
        let _slot = self.slots.acquire().await.map_err(|e| as_error(Box::new(e)))?;
        let db = self.clone();
        tokio::task::spawn_blocking(move || db.call_blocking(f))
            .await
            .map_err(|e| as_error(Box::new(e)))?
    }

    /// Runs `f` with the connection on this thread.
    pub fn call_blocking<R>(&self, f: impl FnOnce(&mut Connection) -> rusqlite::Result<R>) -> rusqlite::Result<R> {
        // A panic while holding the lock leaves SQLite consistent (transactions roll back).
        let mut c = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut c)
    }
}

pub fn insert_config(c: &mut Connection, scenario: &str) -> rusqlite::Result<i64> {
    c.execute("INSERT INTO configurations (scenario) VALUES (?1)", params![scenario])?;
    Ok(c.last_insert_rowid())
}

pub fn get_config(c: &mut Connection, id: i64) -> rusqlite::Result<Option<ConfigRow>> {
    c.query_row(
        "SELECT id, scenario, parameters FROM configurations WHERE id = ?1",
        params![id],
        |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)),
    )
    .optional()
    .map(|row| {
        row.map(|(id, scenario, p)| ConfigRow {
            id,
            scenario,
            parameters: serde_json::from_str(&p).unwrap_or_default(),
        })
    })
}

/// Replaces the parameters if they are still `old`; false if another request changed them first.
pub fn set_parameters(
    c: &mut Connection,
    id: i64,
    old: &serde_json::Map<String, serde_json::Value>,
    new: &serde_json::Map<String, serde_json::Value>,
) -> rusqlite::Result<bool> {
    let (old, new) = (
        serde_json::Value::from(old.clone()),
        serde_json::Value::from(new.clone()),
    );
    let n = c.execute(
        "UPDATE configurations SET parameters = ?1 WHERE id = ?2 AND parameters = ?3",
        params![new.to_string(), id, old.to_string()],
    )?;
    Ok(n == 1)
}

pub fn insert_sim(c: &mut Connection, config: &ConfigRow, overrides: &[String]) -> rusqlite::Result<i64> {
    let overrides = serde_json::Value::from(overrides.to_vec()).to_string();
    c.execute(
        "INSERT INTO simulations (config_id, scenario, overrides, status) VALUES (?1, ?2, ?3, 'queued')",
        params![config.id, config.scenario, overrides],
    )?;
    Ok(c.last_insert_rowid())
}

fn sim_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SimRow> {
    let overrides: String = r.get(5)?;
    Ok(SimRow {
        id: r.get(0)?,
        config_id: r.get(1)?,
        status: Status::parse(&r.get::<_, String>(2)?),
        message: r.get(3)?,
        scenario: r.get(4)?,
        overrides: serde_json::from_str(&overrides).unwrap_or_default(),
    })
}

const SIM_COLUMNS: &str = "id, config_id, status, message, scenario, overrides";

pub fn get_sim(c: &mut Connection, id: i64) -> rusqlite::Result<Option<SimRow>> {
    c.query_row(
        &format!("SELECT {SIM_COLUMNS} FROM simulations WHERE id = ?1"),
        params![id],
        sim_from_row,
    )
    .optional()
}

/// Takes the oldest queued simulation and marks it running.
pub fn claim_next(c: &mut Connection) -> rusqlite::Result<Option<SimRow>> {
    let tx = c.transaction()?;
    let sim = tx
        .query_row(
            &format!("SELECT {SIM_COLUMNS} FROM simulations WHERE status = 'queued' ORDER BY id LIMIT 1"),
            [],
            sim_from_row,
        )
        .optional()?;
    if let Some(s) = &sim {
        tx.execute("UPDATE simulations SET status = 'running' WHERE id = ?1", params![s.id])?;
    }
    tx.commit()?;
    Ok(sim.map(|s| SimRow {
        status: Status::Running,
        ..s
    }))
}

/// Ends a running simulation: its status, message and (when completed) files, at once. A run
/// cancelled meanwhile stays cancelled (false).
pub fn finish(
    c: &mut Connection,
    id: i64,
    status: Status,
    message: Option<&str>,
    files: &[FileRow],
) -> rusqlite::Result<bool> {
    let tx = c.transaction()?;
    let n = tx.execute(
        "UPDATE simulations SET status = ?1, message = ?2 WHERE id = ?3 AND status = 'running'",
        params![status.as_str(), message, id],
    )?;
    if n == 1 {
        for f in files {
            tx.execute(
                "INSERT INTO result_files (sim_id, name, kind, bytes) VALUES (?1, ?2, ?3, ?4)",
                params![id, f.name, f.kind, f.bytes as i64],
            )?;
        }
    }
    tx.commit()?;
    Ok(n == 1)
}

/// Cancels a queued or running simulation; its status before, or None if there is no such one.
pub fn cancel(c: &mut Connection, id: i64) -> rusqlite::Result<Option<Status>> {
    let tx = c.transaction()?;
    let before = tx
        .query_row("SELECT status FROM simulations WHERE id = ?1", params![id], |r| {
            r.get::<_, String>(0)
        })
        .optional()?
        .map(|s| Status::parse(&s));
    if matches!(before, Some(Status::Queued | Status::Running)) {
        tx.execute(
            "UPDATE simulations SET status = 'cancelled', message = 'cancelled by a request' WHERE id = ?1",
            params![id],
        )?;
    }
    tx.commit()?;
    Ok(before)
}

pub fn files(c: &mut Connection, id: i64) -> rusqlite::Result<Vec<FileRow>> {
    let mut q = c.prepare_cached("SELECT name, kind, bytes FROM result_files WHERE sim_id = ?1 ORDER BY name")?;
    let rows = q.query_map(params![id], |r| {
        Ok(FileRow {
            name: r.get(0)?,
            kind: r.get(1)?,
            bytes: r.get::<_, i64>(2)? as u64,
        })
    })?;
    rows.collect()
}

/// After a stop: the runs that were in flight are failed ([`INTERRUPTED`]); returns the ids of
/// completed simulations, whose result folders are kept (every other one is removed).
pub fn recover(c: &mut Connection) -> rusqlite::Result<Vec<i64>> {
    c.execute(
        "UPDATE simulations SET status = 'failed', message = ?1 WHERE status = 'running'",
        params![INTERRUPTED],
    )?;
    let mut q = c.prepare("SELECT id FROM simulations WHERE status = 'completed'")?;
    let ids = q.query_map([], |r| r.get(0))?;
    ids.collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(SCHEMA).unwrap();
        c
    }

    #[test]
    fn a_run_goes_queued_running_completed_with_its_files_at_once() {
        let mut c = db();
        let cfg = insert_config(&mut c, "(name: \"x\")").unwrap();
        let config = get_config(&mut c, cfg).unwrap().unwrap();
        let id = insert_sim(&mut c, &config, &["simulation.RunTime=0.001".into()]).unwrap();
        assert_eq!(get_sim(&mut c, id).unwrap().unwrap().status, Status::Queued);
        let claimed = claim_next(&mut c).unwrap().unwrap();
        assert_eq!((claimed.id, claimed.status), (id, Status::Running));
        assert_eq!(claimed.overrides, ["simulation.RunTime=0.001"]);
        assert!(claim_next(&mut c).unwrap().is_none());
        assert!(files(&mut c, id).unwrap().is_empty());
        let f = FileRow {
            name: "x-rdma-perf-0.csv".into(),
            kind: "csv".into(),
            bytes: 12,
        };
        assert!(finish(&mut c, id, Status::Completed, None, std::slice::from_ref(&f)).unwrap());
        assert_eq!(files(&mut c, id).unwrap(), [f]);
        assert_eq!(recover(&mut c).unwrap(), [id]);
    }

    #[test]
    fn a_cancelled_run_stays_cancelled_and_recovery_fails_the_running() {
        let mut c = db();
        let cfg = insert_config(&mut c, "()").unwrap();
        let config = get_config(&mut c, cfg).unwrap().unwrap();
        let a = insert_sim(&mut c, &config, &[]).unwrap();
        let b = insert_sim(&mut c, &config, &[]).unwrap();
        claim_next(&mut c).unwrap();
        assert_eq!(cancel(&mut c, a).unwrap(), Some(Status::Running));
        assert!(!finish(&mut c, a, Status::Completed, None, &[]).unwrap());
        assert_eq!(get_sim(&mut c, a).unwrap().unwrap().status, Status::Cancelled);
        claim_next(&mut c).unwrap();
        assert!(recover(&mut c).unwrap().is_empty());
        let b = get_sim(&mut c, b).unwrap().unwrap();
        assert_eq!((b.status, b.message.as_deref()), (Status::Failed, Some(INTERRUPTED)));
        assert_eq!(cancel(&mut c, 99).unwrap(), None);
    }
}
