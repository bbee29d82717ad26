//! Reading a scenario file's bytes safely: only a regular file (a FIFO with no writer would
//! block `open` forever, `/dev/zero` never ends), at most [`MAX_SCENARIO_BYTES`], and UTF-8,
//! with the line and column of the first byte that is not.

use super::diagnostic::ScenarioError;
use std::io::Read;
use std::path::Path;

/// The largest scenario file read: 16 MiB. The shipped scenarios are under 2 KiB and an
/// `Explicit` fabric of 10,000 links is under 1 MiB, so anything larger is not a scenario.
pub const MAX_SCENARIO_BYTES: u64 = 16 * 1024 * 1024;

/// Reads the scenario at `path` as text, refusing what is not a regular file, anything larger
/// than [`MAX_SCENARIO_BYTES`] and text that is not UTF-8 (at its line and column).
pub fn read_scenario(path: &Path) -> Result<String, ScenarioError> {
    let file = path.display().to_string();
    let cannot = |e: std::io::Error| ScenarioError::without_source(&file, format!("cannot read the scenario: {e}"));
    // Checked before opening: opening a FIFO blocks until a writer comes.
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if !meta.is_file() {
        return Err(ScenarioError::without_source(
            &file,
            format!(
                "the scenario is {}, not a regular file: write it to a file first",
                file_kind(&meta.file_type())
            ),
        ));
    }
    let too_large = || {
        ScenarioError::without_source(
            &file,
            format!("the scenario is larger than the limit of {MAX_SCENARIO_BYTES} bytes (16 MiB)"),
        )
    };
    if meta.len() > MAX_SCENARIO_BYTES {
        return Err(too_large());
    }
    // `take` bounds the read even if the file grows after the check above.
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SCENARIO_BYTES + 1).read_to_end(&mut bytes))
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|e| not_utf8(&file, e))
}

/// The error at the first invalid byte; the text shown is the lossy decoding, whose prefix up to
/// that byte is the file's own, so the line and column are those of the file.
fn not_utf8(file: &str, error: std::string::FromUtf8Error) -> ScenarioError {
    let offset = error.utf8_error().valid_up_to();
    let byte = error.as_bytes()[offset];
    let text = String::from_utf8_lossy(error.as_bytes()).into_owned();
    ScenarioError::at_offset(
        file,
        text,
        offset,
        None,
        format!("the scenario is not UTF-8: byte 0x{byte:02X} here does not start a valid UTF-8 character"),
    )
}

fn file_kind(kind: &std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(tag: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("engine-read-{tag}-{}.ron", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn first_invalid_byte_is_located_by_line_and_column() {
        // Line 2 is `  a` then 0xFF: the bad byte is the 4th char of line 2.
        let path = temp("utf8", b"(\n  a\xFF b)\n");
        let e = read_scenario(&path).unwrap_err();
        std::fs::remove_file(&path).ok();
        assert_eq!((e.line, e.column), (2, 4), "{e}");
        assert!(e.message.contains("not UTF-8") && e.message.contains("0xFF"), "{e}");
    }

    #[test]
    fn multibyte_characters_before_the_bad_byte_count_once() {
        // `µ` is 2 bytes but one column; a lone continuation byte 0x80 follows at column 3.
        let path = temp(
            "utf8mb",
            "µs"
                .as_bytes()
                .iter()
                .chain(b"\x80")
                .copied()
                .collect::<Vec<_>>()
                .as_slice(),
        );
        let e = read_scenario(&path).unwrap_err();
        std::fs::remove_file(&path).ok();
        assert_eq!((e.line, e.column), (1, 3), "{e}");
    }

    #[test]
    fn a_file_one_byte_over_the_limit_is_refused_and_the_limit_itself_is_read() {
        let path = temp("big", b"");
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        // Sparse: zeros (valid UTF-8) without writing 16 MiB.
        f.set_len(MAX_SCENARIO_BYTES).unwrap();
        assert_eq!(read_scenario(&path).unwrap().len() as u64, MAX_SCENARIO_BYTES);
        f.set_len(MAX_SCENARIO_BYTES + 1).unwrap();
        let e = read_scenario(&path).unwrap_err();
        std::fs::remove_file(&path).ok();
        assert!(e.to_string().contains("16777216 bytes"), "{e}");
    }

    #[test]
    fn a_directory_is_refused_by_kind() {
        let e = read_scenario(&std::env::temp_dir()).unwrap_err();
        assert!(e.message.contains("a directory, not a regular file"), "{e}");
    }
}
