//! Streaming CSV records. Each record is one file per shard, `{simulation}-{record}-{shard}.csv`
//! in the output folder, written row by row through a buffer that is flushed at every beacon tick
//! and at the end, so a killed run keeps what it wrote up to its last tick and memory never holds
//! more than one buffer per record.

use crate::clock::WallClock;
pub use crate::row::RowBuf;
use bevy_ecs::prelude::Resource;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Where a record's rows go.
pub enum Sink {
    /// Rows written to a file.
    File(RowFile),
    /// Rows kept in memory, for tests.
    Memory(Vec<u8>),
    /// Rows dropped (a run without an output folder).
    Null,
}

impl Sink {
    fn push(&mut self, line: &[u8]) -> io::Result<()> {
        match self {
            Sink::File(f) => f.push(line),
            Sink::Memory(v) => {
                v.extend_from_slice(line);
                Ok(())
            }
            Sink::Null => Ok(()),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::File(f) => f.spill(),
            _ => Ok(()),
        }
    }
}

/// What a `RowFile` writes to: a file, or in tests a writer that fails on cue.
pub trait RowTarget: Send + Sync {
    /// Writes all of `bytes`.
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Cuts the target back to its first `len` bytes.
    fn truncate(&mut self, len: u64) -> io::Result<()>;
}

impl RowTarget for File {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        Write::write_all(self, bytes)
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.set_len(len)
    }
}

/// A record file that only ever ends at a whole row: rows gather in a buffer of whole rows that
/// goes to the file in one piece, and a failed write (a full disk can take half of it) cuts the
/// file back to the rows known written, after which the record takes no more rows.
pub struct RowFile {
    out: Box<dyn RowTarget>,
    buf: Vec<u8>,
    /// Bytes of whole rows in the file.
    written: u64,
    failed: bool,
}

impl RowFile {
    /// As the `BufWriter` this replaces: 64 KiB, so a file costs one write call per 64 KiB.
    const CAPACITY: usize = 1 << 16;

    /// A row file writing to `out` through a 64 KiB buffer.
    pub fn new(out: Box<dyn RowTarget>) -> Self {
        RowFile {
            out,
            buf: Vec::with_capacity(Self::CAPACITY),
            written: 0,
            failed: false,
        }
    }

    fn push(&mut self, line: &[u8]) -> io::Result<()> {
        if self.failed {
            return Ok(());
        }
        if self.buf.len() + line.len() > Self::CAPACITY && !self.buf.is_empty() {
            self.spill()?;
        }
        self.buf.extend_from_slice(line);
        Ok(())
    }

    /// Writes the buffered rows; on failure, cuts the file back to its last whole row.
    fn spill(&mut self) -> io::Result<()> {
        if self.failed || self.buf.is_empty() {
            return Ok(());
        }
        let result = self.out.write_all(&self.buf);
        match &result {
            Ok(()) => self.written += self.buf.len() as u64,
            Err(_) => {
                self.failed = true;
                // Best effort: the write's error is the one to report.
                let _ = self.out.truncate(self.written);
            }
        }
        self.buf.clear();
        result
    }
}

impl Drop for RowFile {
    fn drop(&mut self) {
        let _ = self.spill();
    }
}

/// A record's handle, from `Records::register`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordId(usize);

/// Where and how records are written.
#[derive(Clone, Debug)]
pub enum Output {
    /// One CSV file per record in this folder (created if missing).
    Folder(PathBuf),
    /// Rows kept in memory (tests: `Records::memory`).
    Memory,
    /// Rows dropped.
    Null,
}

/// An output folder or record file that could not be created: what the user pointed `--out` at
/// (or what is already in it) is at fault, not the run, so `rdmasim` exits 2 on it.
#[derive(Debug)]
pub struct OpenError {
    /// The folder or file at fault.
    pub path: PathBuf,
    /// Why it could not be created (the OS error, or what is in the way).
    pub reason: String,
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

impl std::error::Error for OpenError {}

impl OpenError {
    fn new(path: &Path, reason: impl Into<String>) -> Self {
        OpenError {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }
}

/// The longest simulation name, in bytes: with it, `{name}-manifest-{shard}.json` and
/// `{name}-{record}-{shard}.csv` for a record name of up to 39 bytes and any `u32` shard (10
/// digits) stay within the 255 bytes a file name may have (200 + 1 + 39 + 1 + 10 + 4 = 255).
pub const MAX_NAME_BYTES: usize = 200;

/// Why `name` cannot name output files, if it cannot: letters, digits, '-', '_' and '.' only, not
/// starting with '.' (no `.`, `..` or hidden files), at most `MAX_NAME_BYTES` bytes.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
        return Err("use letters, digits, '-', '_' and '.' only".into());
    }
    if name.starts_with('.') {
        return Err("must not start with '.' (no `.`, `..` or hidden files)".into());
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "{} bytes, at most {MAX_NAME_BYTES}: the output files' names must fit in 255 bytes",
            name.len()
        ));
    }
    Ok(())
}

/// Creates (or truncates) the output file `path`, never through a symbolic link: a link there,
/// dangling or not, would send the file outside the output folder, so it is refused.
pub fn create_file(path: &Path) -> Result<File, OpenError> {
    if let Ok(m) = std::fs::symlink_metadata(path)
        && m.file_type().is_symlink()
    {
        return Err(OpenError::new(
            path,
            "is a symbolic link: refusing to write through it (remove it)",
        ));
    }
    File::create(path).map_err(|e| OpenError::new(path, format!("cannot create the file: {e}")))
}

/// Creates the output folder `dir` (and its parents) if missing.
pub fn create_folder(dir: &Path) -> Result<(), OpenError> {
    if dir.exists() && !dir.is_dir() {
        return Err(OpenError::new(dir, "exists and is not a folder"));
    }
    std::fs::create_dir_all(dir).map_err(|e| OpenError::new(dir, format!("cannot create the folder: {e}")))
}

struct Record {
    name: String,
    path: Option<PathBuf>,
    sink: Sink,
    /// Fields of the header: every row must have as many.
    fields: usize,
}

impl Record {
    /// An error of this record's, as the user is told it: the file's path when it has one.
    fn describe(&self, e: &io::Error) -> String {
        match &self.path {
            Some(p) => format!("writing {}: {e}", p.display()),
            _ => format!("{}: {e}", self.name),
        }
    }
}

/// The run's record writers, and the identity every row carries.
#[derive(Resource)]
pub struct Records {
    output: Output,
    simulation: String,
    shard: u32,
    records: Vec<Record>,
    /// The clock the rows' `time_utc` reads.
    pub clock: WallClock,
    first_error: Option<String>,
    /// The first record that could not be opened: the run stops before its events.
    open_error: Option<OpenError>,
    /// Reused by every row written.
    scratch: RowBuf,
}

impl Records {
    /// Writers for run `simulation`, shard `shard`, into `output` (a folder is created now).
    pub fn new(output: Output, simulation: &str, shard: u32, clock: WallClock) -> io::Result<Self> {
        if let Output::Folder(dir) = &output {
            create_folder(dir).map_err(io::Error::other)?;
        }
        Ok(Records {
            output,
            simulation: simulation.to_string(),
            shard,
            records: Vec::new(),
            clock,
            first_error: None,
            open_error: None,
            scratch: RowBuf::default(),
        })
    }

    /// A record's file name: `SIMULATION-RECORD-SHARD.csv`.
    pub fn file_name(simulation: &str, record: &str, shard: u32) -> String {
        format!("{simulation}-{record}-{shard}.csv")
    }

    /// Opens `record` and writes its header row. A file that cannot be created is also kept as
    /// `open_error`, so a caller in a schedule can drop the record and the run still reports it.
    pub fn register(&mut self, record: &str, header: &[&str]) -> io::Result<RecordId> {
        let (sink, path) = match &self.output {
            Output::Folder(dir) => {
                let path = dir.join(Self::file_name(&self.simulation, record, self.shard));
                let file = match create_file(&path) {
                    Ok(f) => f,
                    Err(e) => {
                        let err = io::Error::other(e.to_string());
                        self.open_error.get_or_insert(e);
                        return Err(err);
                    }
                };
                (Sink::File(RowFile::new(Box::new(file))), Some(path))
            }
            Output::Memory => (Sink::Memory(Vec::new()), None),
            Output::Null => (Sink::Null, None),
        };
        self.open(record, header, sink, path)
    }

    fn open(&mut self, record: &str, header: &[&str], sink: Sink, path: Option<PathBuf>) -> io::Result<RecordId> {
        let mut rec = Record {
            name: record.to_string(),
            path,
            sink,
            fields: header.len(),
        };
        let mut line = RowBuf::default();
        for name in header {
            line.str(name);
        }
        rec.sink
            .push(line.finish())
            .map_err(|e| io::Error::new(e.kind(), rec.describe(&e)))?;
        self.records.push(rec);
        Ok(RecordId(self.records.len() - 1))
    }

    /// Writes one row. An I/O error (a full disk) is kept, stops the run at the next beacon tick
    /// (`App::run`) and is reported then, rather than unwinding through the model.
    pub fn write<I, T>(&mut self, id: RecordId, row: I)
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        self.write_built(id, |r, _| {
            for field in row {
                r.bytes(field.as_ref());
            }
        });
    }

    /// Writes one row that `fill` builds in place (no allocation per row once warm); `fill` gets
    /// the clock for `time_utc`. The row is its CSV line already: it goes to the file as it is.
    pub fn write_built(&mut self, id: RecordId, fill: impl FnOnce(&mut RowBuf, &WallClock)) {
        let mut row = std::mem::take(&mut self.scratch);
        row.clear();
        fill(&mut row, &self.clock);
        let n = row.len();
        self.push_line(id, n, row.finish());
        self.scratch = row;
    }

    /// Appends `line`, a row of `n` fields with its line feed, to record `id`.
    fn push_line(&mut self, id: RecordId, n: usize, line: &[u8]) {
        let r = &mut self.records[id.0];
        let written = if n == r.fields {
            r.sink.push(line).map_err(|e| r.describe(&e))
        } else {
            Err(format!("{}: a row of {n} fields in a record of {}", r.name, r.fields))
        };
        if let Err(e) = written {
            self.first_error.get_or_insert(e);
        }
    }

    /// Flushes every record; the first error is kept for `error`.
    pub fn flush(&mut self) {
        for r in &mut self.records {
            if let Err(e) = r.sink.flush() {
                self.first_error.get_or_insert_with(|| r.describe(&e));
            }
        }
    }

    /// Whether a record could not be opened (the run has nothing to run for).
    pub fn open_failed(&self) -> bool {
        self.open_error.is_some()
    }

    /// The first record that could not be opened, taken out.
    pub fn take_open_error(&mut self) -> Option<OpenError> {
        self.open_error.take()
    }

    /// The first write error, if any happened: `writing PATH: <os error>`.
    pub fn error(&self) -> Option<&str> {
        self.first_error.as_deref()
    }

    /// The rows written so far to an in-memory record (tests).
    pub fn memory(&self, record: &str) -> Option<String> {
        let r = self.records.iter().find(|r| r.name == record)?;
        match &r.sink {
            Sink::Memory(v) => Some(String::from_utf8_lossy(v).into_owned()),
            _ => None,
        }
    }

    /// Paths of the files written.
    pub fn paths(&self) -> Vec<&Path> {
        self.records.iter().filter_map(|r| r.path.as_deref()).collect()
    }

    /// The run's name, as the file names carry it.
    pub fn simulation(&self) -> &str {
        &self.simulation
    }
    /// The shard number the file names carry.
    pub fn shard(&self) -> u32 {
        self.shard
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_named_files_and_flushes() {
        let dir = std::env::temp_dir().join(format!("rdmasim-records-{}", std::process::id()));
        let mut r = Records::new(Output::Folder(dir.clone()), "sim", 0, WallClock::fixed_at(0)).unwrap();
        let id = r.register("rdma-perf", &["a", "b,c"]).unwrap();
        r.write(id, ["1", "2"]);
        // Headers and rows given as fields are quoted by the same rule as built rows (`row.rs`).
        r.write(id, ["say \"hi\"", ""]);
        r.flush();
        let text = std::fs::read_to_string(dir.join("sim-rdma-perf-0.csv")).unwrap();
        assert_eq!(text, "a,\"b,c\"\n1,2\n\"say \"\"hi\"\"\",\n");
        std::fs::remove_dir_all(dir).ok();
    }

    /// A disk that holds `room` bytes: a write past it stores what fits, then fails as a full
    /// disk does (ENOSPC).
    struct SmallDisk {
        bytes: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
        room: usize,
    }

    impl RowTarget for SmallDisk {
        fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
            let mut v = self.bytes.lock().unwrap();
            let fits = self.room.saturating_sub(v.len()).min(bytes.len());
            v.extend_from_slice(&bytes[..fits]);
            if fits < bytes.len() {
                return Err(io::Error::from_raw_os_error(28));
            }
            Ok(())
        }
        fn truncate(&mut self, len: u64) -> io::Result<()> {
            self.bytes.lock().unwrap().truncate(len as usize);
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_leaves_the_file_at_its_last_whole_row() {
        let bytes = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        // Header "a,b\n" and three rows "1,2\n" are 16 bytes; 22 bytes of room leave 6 for the
        // next flush's 8 (two rows): the disk takes "1,2\n1," and fails.
        let disk = SmallDisk {
            bytes: bytes.clone(),
            room: 22,
        };
        let mut r = Records::new(Output::Null, "sim", 0, WallClock::fixed_at(0)).unwrap();
        let path = PathBuf::from("/out/sim-r-0.csv");
        let id = r
            .open("r", &["a", "b"], Sink::File(RowFile::new(Box::new(disk))), Some(path))
            .unwrap();
        for _ in 0..3 {
            r.write(id, ["1", "2"]);
        }
        r.flush();
        assert_eq!(r.error(), None);
        r.write(id, ["1", "2"]);
        r.write(id, ["1", "2"]);
        r.flush();
        assert_eq!(
            r.error(),
            Some(format!("writing /out/sim-r-0.csv: {}", io::Error::from_raw_os_error(28)).as_str())
        );
        // Cut back to the 16 bytes known written; later rows are not written at all.
        r.write(id, ["3", "4"]);
        r.flush();
        drop(r);
        assert_eq!(
            String::from_utf8(bytes.lock().unwrap().clone()).unwrap(),
            "a,b\n1,2\n1,2\n1,2\n"
        );
    }

    #[test]
    fn a_file_that_cannot_be_created_is_an_open_error_naming_it() {
        // 256 bytes of name: over the 255 a file name may have (ENAMETOOLONG), even before
        // `check_name`'s limit is applied by the command line.
        let dir = std::env::temp_dir().join(format!("rdmasim-records-long-{}", std::process::id()));
        let sim = "s".repeat(256);
        let mut r = Records::new(Output::Folder(dir.clone()), &sim, 0, WallClock::fixed_at(0)).unwrap();
        assert!(r.register("beacon", &["a"]).is_err());
        assert!(r.open_failed());
        let e = r.take_open_error().unwrap();
        assert_eq!(e.path, dir.join(Records::file_name(&sim, "beacon", 0)));
        assert!(e.to_string().contains("File name too long"), "{e}");
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_row_of_the_wrong_width_is_an_error_not_a_row() {
        let mut r = Records::new(Output::Memory, "sim", 0, WallClock::fixed_at(0)).unwrap();
        let id = r.register("beacon", &["a", "b"]).unwrap();
        r.write(id, ["1"]);
        r.write(id, ["1", "2"]);
        assert_eq!(r.memory("beacon").unwrap(), "a,b\n1,2\n");
        assert!(r.error().unwrap().contains("beacon"), "{:?}", r.error());
    }
}
