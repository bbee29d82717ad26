//! Streaming CSV records. Each record is one file per shard, `{simulation}-{record}-{shard}.csv`
//! in the output folder, written row by row through a buffer that is flushed at every beacon tick
//! and at the end, so a killed run keeps what it wrote up to its last tick and memory never holds
//! more than one buffer per record.

use crate::clock::WallClock;
pub use crate::row::RowBuf;
use bevy_ecs::prelude::Resource;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Where a record's rows go.
pub enum Sink {
    File(BufWriter<File>),
    /// Rows kept in memory, for tests.
    Memory(Vec<u8>),
    /// Rows dropped (a run without an output folder).
    Null,
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::File(f) => f.write(buf),
            Sink::Memory(v) => v.write(buf),
            Sink::Null => Ok(buf.len()),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::File(f) => f.flush(),
            _ => Ok(()),
        }
    }
}

/// A record's handle, from `Records::register`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordId(usize);

/// Where and how records are written.
#[derive(Clone, Debug)]
pub enum Output {
    Folder(PathBuf),
    Memory,
    Null,
}

/// An output folder or record file that could not be created: what the user pointed `--out` at
/// (or what is already in it) is at fault, not the run, so `rdmasim` exits 2 on it.
#[derive(Debug)]
pub struct OpenError {
    pub path: PathBuf,
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

/// The run's record writers, and the identity every row carries.
#[derive(Resource)]
pub struct Records {
    output: Output,
    simulation: String,
    shard: u32,
    records: Vec<Record>,
    pub clock: WallClock,
    first_error: Option<String>,
    /// The first record that could not be opened: the run stops before its events.
    open_error: Option<OpenError>,
    /// Reused by `write_built`.
    scratch: RowBuf,
    /// The CSV text of the row being written, reused.
    line: Vec<u8>,
}

impl Records {
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
            line: Vec::new(),
        })
    }

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
                (Sink::File(BufWriter::with_capacity(1 << 16, file)), Some(path))
            }
            Output::Memory => (Sink::Memory(Vec::new()), None),
            Output::Null => (Sink::Null, None),
        };
        let mut rec = Record {
            name: record.to_string(),
            path,
            sink,
            fields: header.len(),
        };
        let mut line = Vec::new();
        csv_line(&mut line, header.iter());
        rec.sink.write_all(&line)?;
        self.records.push(rec);
        Ok(RecordId(self.records.len() - 1))
    }

    /// Writes one row. An I/O error (a full disk) is kept and reported at the end of the run
    /// rather than unwinding through the model.
    pub fn write<I, T>(&mut self, id: RecordId, row: I)
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        let mut line = std::mem::take(&mut self.line);
        let r = &mut self.records[id.0];
        let n = csv_line(&mut line, row);
        let written = if n == r.fields {
            r.sink.write_all(&line)
        } else {
            Err(io::Error::other(format!(
                "a row of {n} fields in a record of {}",
                r.fields
            )))
        };
        if let Err(e) = written {
            self.first_error.get_or_insert_with(|| format!("{}: {e}", r.name));
        }
        self.line = line;
    }

    /// Writes one row that `fill` builds in place (no allocation per row once warm); `fill` gets
    /// the clock for `time_utc`.
    pub fn write_built(&mut self, id: RecordId, fill: impl FnOnce(&mut RowBuf, &WallClock)) {
        let mut row = std::mem::take(&mut self.scratch);
        row.clear();
        fill(&mut row, &self.clock);
        self.write(id, row.fields());
        self.scratch = row;
    }

    pub fn flush(&mut self) {
        for r in &mut self.records {
            if let Err(e) = r.sink.flush() {
                self.first_error.get_or_insert_with(|| format!("{}: {e}", r.name));
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

    /// The first write error, if any happened.
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

    pub fn simulation(&self) -> &str {
        &self.simulation
    }
    pub fn shard(&self) -> u32 {
        self.shard
    }
}

/// Puts one CSV row in `line` (cleared first), with its line feed; returns its number of fields.
/// The rules of the csv crate's default writer, which this replaces on the hot path (a row cost
/// about 4,800 instructions there): a field is quoted when it holds a comma, a quote, CR or LF, a
/// quote inside doubled; a row of one empty field is `""` so that it is not a blank line.
fn csv_line<I, T>(line: &mut Vec<u8>, row: I) -> usize
where
    I: IntoIterator<Item = T>,
    T: AsRef<[u8]>,
{
    line.clear();
    let mut n = 0;
    for field in row {
        let f = field.as_ref();
        if n > 0 {
            line.push(b',');
        }
        n += 1;
        if f.iter().any(|&b| matches!(b, b',' | b'"' | b'\n' | b'\r')) {
            line.push(b'"');
            for &b in f {
                if b == b'"' {
                    line.push(b'"');
                }
                line.push(b);
            }
            line.push(b'"');
        } else {
            line.extend_from_slice(f);
        }
    }
    if n == 1 && line.is_empty() {
        line.extend_from_slice(b"\"\"");
    }
    line.push(b'\n');
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_named_files_and_flushes() {
        let dir = std::env::temp_dir().join(format!("rdmasim-records-{}", std::process::id()));
        let mut r = Records::new(Output::Folder(dir.clone()), "sim", 0, WallClock::fixed_at(0)).unwrap();
        let id = r.register("rdma-perf", &["a", "b"]).unwrap();
        r.write(id, ["1", "2"]);
        r.flush();
        let text = std::fs::read_to_string(dir.join("sim-rdma-perf-0.csv")).unwrap();
        assert_eq!(text, "a,b\n1,2\n");
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn rows_are_what_the_csv_crate_writes() {
        // Plain, empty, quoted and doubled-quote fields, a lone empty field, CR and LF.
        let rows: Vec<Vec<&str>> = vec![
            vec!["a", "b", "c"],
            vec!["", "x", ""],
            vec!["1,5", "say \"hi\"", "two\nlines"],
            vec!["\r", "\"", ","],
            vec![""],
            vec!["only"],
        ];
        for row in rows {
            let mut want = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
            want.write_record(&row).unwrap();
            let want = want.into_inner().unwrap();
            let mut got = Vec::new();
            assert_eq!(csv_line(&mut got, &row), row.len());
            assert_eq!(
                String::from_utf8(got).unwrap(),
                String::from_utf8(want).unwrap(),
                "{row:?}"
            );
        }
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
