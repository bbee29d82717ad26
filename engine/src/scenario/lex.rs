//! The lexical layer of the span scanner: whitespace and comments, strings (escaped, raw,
//! byte), chars, numbers and identifiers, plus conversions between byte offsets and the
//! 1-based line and char column ron and editors report. `span` builds the value tree on top.

use thiserror::Error;

/// Nesting deeper than this is refused, so hostile input cannot overflow the stack.
pub(super) const MAX_DEPTH: usize = 128;

/// Why the text does not scan; `offset` is the byte where the scanner gave up.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
pub enum ScanError {
    /// A string, char or comment that never ends.
    #[error("unterminated {what}")]
    Unterminated {
        /// What never ends ("string", "block comment"...).
        what: &'static str,
        /// Where it starts.
        offset: usize,
    },
    /// A bracket that is never closed.
    #[error("`{open}` is never closed")]
    Unclosed {
        /// The bracket.
        open: char,
        /// Where it is.
        offset: usize,
    },
    /// A character that cannot come here.
    #[error("expected {expected}, found `{found}`")]
    Unexpected {
        /// What could come here.
        expected: &'static str,
        /// What came.
        found: char,
        /// Where.
        offset: usize,
    },
    /// The text ends where more was expected.
    #[error("expected {expected}, found the end of the text")]
    UnexpectedEnd {
        /// What could come here.
        expected: &'static str,
        /// The end of the text.
        offset: usize,
    },
    /// Brackets nested deeper than the scanner goes.
    #[error("nested more than {MAX_DEPTH} levels deep")]
    TooDeep {
        /// The bracket one level too deep.
        offset: usize,
    },
}

impl ScanError {
    /// The byte offset where the scanner gave up.
    pub fn offset(&self) -> usize {
        match *self {
            ScanError::Unterminated { offset, .. }
            | ScanError::Unclosed { offset, .. }
            | ScanError::Unexpected { offset, .. }
            | ScanError::UnexpectedEnd { offset, .. }
            | ScanError::TooDeep { offset } => offset,
        }
    }
}

/// 1-based line and column (in chars, as ron counts them) of a byte offset.
pub fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let offset = floor_char_boundary(source, offset);
    let before = &source[..offset];
    let line = 1 + before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, 1 + before[line_start..].chars().count())
}

/// The byte offset of a 1-based line and char column; past the end clamps to the line or text end.
pub fn offset_of(source: &str, line: usize, column: usize) -> usize {
    let mut start = 0;
    for _ in 1..line.max(1) {
        match source[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return source.len(),
        }
    }
    let rest = &source[start..];
    let line_len = rest.find('\n').unwrap_or(rest.len());
    let within = rest[..line_len]
        .char_indices()
        .nth(column.saturating_sub(1))
        .map_or(line_len, |(i, _)| i);
    start + within
}

pub(crate) fn floor_char_boundary(s: &str, mut offset: usize) -> usize {
    offset = offset.min(s.len());
    while !s.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// A cursor over the text; `span` adds the methods that build values.
pub(super) struct Scanner<'a> {
    pub(super) src: &'a str,
    pub(super) pos: usize,
    pub(super) depth: usize,
}

impl Scanner<'_> {
    pub(super) fn peek(&self) -> Option<u8> {
        self.src.as_bytes().get(self.pos).copied()
    }
    pub(super) fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.src.as_bytes().get(self.pos + ahead).copied()
    }
    pub(super) fn peek_char(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    pub(super) fn unexpected(&self, expected: &'static str) -> ScanError {
        match self.peek_char() {
            Some(found) => ScanError::Unexpected {
                expected,
                found,
                offset: self.pos,
            },
            None => ScanError::UnexpectedEnd {
                expected,
                offset: self.pos,
            },
        }
    }

    pub(super) fn expect(&mut self, byte: u8, expected: &'static str) -> Result<(), ScanError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    pub(super) fn finish(&mut self) -> Result<(), ScanError> {
        self.skip_trivia()?;
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.unexpected("the end of the text after the value")),
        }
    }

    /// Skips whitespace, `//` line comments and nested `/* */` block comments.
    pub(super) fn skip_trivia(&mut self) -> Result<(), ScanError> {
        loop {
            match (self.peek(), self.peek_at(1)) {
                (Some(b'/'), Some(b'/')) => {
                    self.pos = self.src[self.pos..].find('\n').map_or(self.src.len(), |i| self.pos + i);
                }
                (Some(b'/'), Some(b'*')) => {
                    let start = self.pos;
                    self.pos += 2;
                    let mut depth = 1;
                    while depth > 0 {
                        match (self.peek(), self.peek_at(1)) {
                            (None, _) => {
                                return Err(ScanError::Unterminated {
                                    what: "block comment",
                                    offset: start,
                                });
                            }
                            (Some(b'/'), Some(b'*')) => (depth, self.pos) = (depth + 1, self.pos + 2),
                            (Some(b'*'), Some(b'/')) => (depth, self.pos) = (depth - 1, self.pos + 2),
                            _ => self.pos += 1,
                        }
                    }
                }
                _ => match self.peek_char() {
                    Some(c) if c.is_whitespace() => self.pos += c.len_utf8(),
                    _ => return Ok(()),
                },
            }
        }
    }

    /// Whether `r"`, `r#"`, `r##"`... starts `ahead` bytes from here (and not a raw ident `r#x`).
    pub(super) fn raw_string_ahead(&self, ahead: usize) -> bool {
        if self.peek_at(ahead) != Some(b'r') {
            return false;
        }
        let hashes = self.src.as_bytes()[(self.pos + ahead + 1).min(self.src.len())..]
            .iter()
            .take_while(|&&b| b == b'#')
            .count();
        self.peek_at(ahead + 1 + hashes) == Some(b'"')
    }

    /// An identifier, or a raw identifier `r#name`; returns its text.
    pub(super) fn ident(&mut self) -> &str {
        let start = self.pos;
        let raw = self.peek() == Some(b'r') && self.peek_at(1) == Some(b'#');
        if raw {
            self.pos += 2;
        }
        let ok = |c: char| c.is_alphanumeric() || c == '_' || (raw && matches!(c, '.' | '+' | '-'));
        while let Some(c) = self.peek_char().filter(|&c| ok(c)) {
            self.pos += c.len_utf8();
        }
        let text = &self.src[start..self.pos];
        text.strip_prefix("r#").unwrap_or(text)
    }

    pub(super) fn number(&mut self) {
        let start = self.pos;
        if matches!(self.peek(), Some(b'-' | b'+')) {
            self.pos += 1;
        }
        let hex = self.src[self.pos..].starts_with("0x");
        while let Some(b) = self.peek() {
            let exponent_sign = matches!(b, b'+' | b'-')
                && !hex
                && self.pos > start
                && matches!(self.src.as_bytes()[self.pos - 1], b'e' | b'E');
            if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || exponent_sign {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    pub(super) fn string(&mut self) -> Result<(), ScanError> {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.peek() {
                None => {
                    return Err(ScanError::Unterminated {
                        what: "string",
                        offset: start,
                    });
                }
                Some(b'\\') => self.pos = (self.pos + 2).min(self.src.len()),
                Some(b'"') => break,
                Some(_) => self.pos += 1,
            }
        }
        self.pos += 1;
        self.pos = floor_char_boundary(self.src, self.pos);
        Ok(())
    }

    pub(super) fn raw_string(&mut self) -> Result<(), ScanError> {
        let start = self.pos;
        self.pos += 1;
        let hashes = self.src[self.pos..].bytes().take_while(|&b| b == b'#').count();
        self.pos += hashes + 1;
        let closing = format!("\"{}", "#".repeat(hashes));
        match self.src[self.pos..].find(&closing) {
            Some(i) => {
                self.pos += i + closing.len();
                Ok(())
            }
            None => Err(ScanError::Unterminated {
                what: "raw string",
                offset: start,
            }),
        }
    }

    pub(super) fn char_literal(&mut self) -> Result<(), ScanError> {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.peek() {
                None | Some(b'\n') => {
                    return Err(ScanError::Unterminated {
                        what: "char literal",
                        offset: start,
                    });
                }
                Some(b'\\') => self.pos += 2,
                Some(b'\'') => break,
                Some(_) => self.pos += 1,
            }
        }
        self.pos += 1;
        self.pos = floor_char_boundary(self.src, self.pos);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn line_and_column_round_trip() {
        let text = "ab\nc\u{e9}d\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 3), (2, 1));
        assert_eq!(line_col(text, 6), (2, 3)); // after the two-byte é
        assert_eq!(offset_of(text, 2, 3), 6);
        assert_eq!(offset_of(text, 9, 1), text.len());
        assert_eq!(line_col(text, 5), (2, 2)); // mid-char rounds down
    }
}
