//! A CSV row built in place: the line itself, commas and quotes included, in one reused buffer,
//! numbers formatted by hand, so a record takes it in one copy and no allocation (a run writes
//! hundreds of thousands of `rdma-perf` rows). Every record row and header is written this way.

use crate::clock::{WallClock, rfc3339_seconds};
use crate::time::SimTime;
use std::time::{SystemTime, UNIX_EPOCH};

/// One row as a CSV line: fields separated by commas, a field quoted where the csv crate's
/// writer would quote it (it holds a comma, a quote, CR or LF; a quote inside doubled).
#[derive(Debug, Default)]
pub struct RowBuf {
    buf: Vec<u8>,
    fields: usize,
    /// The last `time_utc` second and its text without fraction or zone: rows completed within
    /// that second reuse it and write only their milliseconds.
    utc: Option<(u64, String)>,
}

impl RowBuf {
    /// Empties the row, keeping its buffers.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.fields = 0;
    }

    /// The separator before every field but the first.
    fn begin_field(&mut self) {
        if self.fields > 0 {
            self.buf.push(b',');
        }
        self.fields += 1;
    }

    /// A text field, quoted if it must be.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }

    /// A field of raw bytes, quoted if it must be.
    pub fn bytes(&mut self, s: &[u8]) -> &mut Self {
        self.begin_field();
        if s.iter().any(|&b| matches!(b, b',' | b'"' | b'\n' | b'\r')) {
            self.buf.push(b'"');
            for &b in s {
                if b == b'"' {
                    self.buf.push(b'"');
                }
                self.buf.push(b);
            }
            self.buf.push(b'"');
        } else {
            self.buf.extend_from_slice(s);
        }
        self
    }

    /// A whole number.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.begin_field();
        self.digits(v, 0);
        self
    }

    /// `int.frac`, `frac` printed with exactly `width` digits (zero-padded).
    pub fn fixed(&mut self, int: u64, frac: u64, width: usize) -> &mut Self {
        self.begin_field();
        self.digits(int, 0);
        self.buf.push(b'.');
        self.digits(frac, width);
        self
    }

    /// Seconds with picosecond digits (12 decimals: `0.000005071920` is 5,071,920 ps).
    pub fn secs(&mut self, t: SimTime) -> &mut Self {
        self.fixed(t.0 / SimTime::PS_PER_SEC, t.0 % SimTime::PS_PER_SEC, 12)
    }

    /// Microseconds with picosecond digits.
    pub fn usec(&mut self, t: SimTime) -> &mut Self {
        self.fixed(t.0 / 1_000_000, t.0 % 1_000_000, 6)
    }

    /// The wall-clock time in RFC 3339 (`time_utc`).
    pub fn time_utc(&mut self, clock: &WallClock) -> &mut Self {
        if let Some(s) = clock.fixed() {
            return self.str(s);
        }
        let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        self.utc_at(d.as_secs(), d.subsec_millis())
    }

    /// `time_utc` at `secs` and `millis` since the epoch: `clock::rfc3339`'s text.
    fn utc_at(&mut self, secs: u64, millis: u32) -> &mut Self {
        self.begin_field();
        let mut utc = self.utc.take().filter(|(s, _)| *s == secs);
        let (_, text) = utc.get_or_insert_with(|| (secs, rfc3339_seconds(secs as i64)));
        self.buf.extend_from_slice(text.as_bytes());
        self.utc = utc;
        if millis != 0 {
            self.buf.push(b'.');
            self.digits(u64::from(millis), 3);
        }
        self.buf.push(b'Z');
        self
    }

    /// `v` in decimal, left-padded with zeros to at least `width` digits. Two digits per step
    /// from a table, the way `itoa` does it: a row has about 150 digits.
    fn digits(&mut self, mut v: u64, width: usize) {
        const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
            2021222324252627282930313233343536373839\
            4041424344454647484950515253545556575859\
            6061626364656667686970717273747576777879\
            8081828384858687888990919293949596979899";
        let mut tmp = [b'0'; 20];
        let mut i = tmp.len();
        while v >= 100 {
            let pair = (v % 100) as usize * 2;
            v /= 100;
            i -= 2;
            tmp[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        }
        if v >= 10 {
            let pair = v as usize * 2;
            i -= 2;
            tmp[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        } else {
            i -= 1;
            tmp[i] = b'0' + v as u8;
        }
        let n = tmp.len() - i;
        for _ in n..width {
            self.buf.push(b'0');
        }
        self.buf.extend_from_slice(&tmp[i..]);
    }

    /// The number of fields.
    pub fn len(&self) -> usize {
        self.fields
    }

    /// Whether the row has no field.
    pub fn is_empty(&self) -> bool {
        self.fields == 0
    }

    /// Ends the line: its line feed, after `""` for a row of one empty field (so that it is not
    /// a blank line). Returns the line.
    pub fn finish(&mut self) -> &[u8] {
        if self.fields == 1 && self.buf.is_empty() {
            self.buf.extend_from_slice(b"\"\"");
        }
        self.buf.push(b'\n');
        &self.buf
    }

    /// The line so far, without its line feed.
    #[cfg(test)]
    fn line(&self) -> &[u8] {
        &self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(r: &RowBuf) -> String {
        String::from_utf8(r.line().to_vec()).unwrap()
    }

    #[test]
    fn numbers_match_the_formatted_columns() {
        let mut r = RowBuf::default();
        let times = [
            0,
            1,
            999_999,
            1_000_000,
            5_071_920,
            14_000_000_001,
            505_123_456_789_012,
            u64::MAX,
        ];
        for &ps in &times {
            r.clear();
            r.secs(SimTime(ps)).usec(SimTime(ps)).u64(ps);
            let got: Vec<String> = text(&r).split(',').map(str::to_string).collect();
            assert_eq!(
                got[0],
                format!("{}.{:012}", ps / 1_000_000_000_000, ps % 1_000_000_000_000)
            );
            assert_eq!(got[1], format!("{}.{:06}", ps / 1_000_000, ps % 1_000_000));
            assert_eq!(got[2], ps.to_string());
        }
    }

    #[test]
    fn every_digit_count_and_pad_is_exact() {
        // 0-1000, and each power of ten and its neighbours up to u64::MAX: odd and even digit
        // counts for the two-digit table, with the paddings the columns use.
        let mut values: Vec<u64> = (0..=1000).collect();
        for k in 1..=19 {
            let p = 10u64.pow(k);
            values.extend([p - 1, p, p + 1, p + 9]);
        }
        values.push(u64::MAX);
        let mut r = RowBuf::default();
        for &v in &values {
            for width in [0, 6, 12] {
                r.clear();
                r.fixed(v, v % 10u64.pow(width.max(1) as u32), width);
                let got = text(&r);
                let frac = v % 10u64.pow(width.max(1) as u32);
                assert_eq!(got, format!("{v}.{frac:0width$}"), "{v} at width {width}");
            }
        }
    }

    #[test]
    fn microseconds_are_exact_picoseconds() {
        let mut r = RowBuf::default();
        r.usec(SimTime(5_071_920))
            .usec(SimTime(14_000_000_001))
            .secs(SimTime(5_071_920));
        assert_eq!(text(&r), "5.071920,14000.000001,0.000005071920");
    }

    #[test]
    fn rows_are_what_the_csv_crate_writes() {
        // Plain, empty, quoted and doubled-quote fields, a lone empty field (`""`, not a blank
        // line), CR and LF.
        let rows: Vec<Vec<&str>> = vec![
            vec!["a", "b", "c"],
            vec!["", "x", ""],
            vec!["1,5", "say \"hi\"", "two\nlines"],
            vec!["\r", "\"", ","],
            vec![""],
            vec!["only"],
        ];
        let mut r = RowBuf::default();
        for row in rows {
            let mut want = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
            want.write_record(&row).unwrap();
            r.clear();
            for f in &row {
                r.str(f);
            }
            assert_eq!(r.len(), row.len());
            assert_eq!(
                String::from_utf8(r.finish().to_vec()).unwrap(),
                String::from_utf8(want.into_inner().unwrap()).unwrap(),
                "{row:?}"
            );
        }
    }

    #[test]
    fn numbers_and_times_sit_between_text_fields_unquoted() {
        let mut r = RowBuf::default();
        r.str("a,b")
            .u64(7)
            .str("")
            .time_utc(&WallClock::fixed_at(0))
            .usec(SimTime(1));
        assert_eq!(r.finish(), b"\"a,b\",7,,1970-01-01T00:00:00Z,0.000001\n");
    }

    #[test]
    fn time_utc_is_rfc3339_whether_its_second_was_cached_or_not() {
        // Instants within one second reuse its text; each must still read as `rfc3339` writes it.
        let mut r = RowBuf::default();
        for (secs, millis) in [
            (1_796_207_306, 5),
            (1_796_207_306, 0),
            (1_796_207_306, 999),
            (1_796_207_307, 40),
            (0, 0),
        ] {
            r.clear();
            r.utc_at(secs, millis);
            let got = text(&r);
            assert_eq!(got, crate::clock::rfc3339(secs as i64, millis));
        }
    }

    #[test]
    fn wall_clock_time_is_rfc3339_utc() {
        let mut r = RowBuf::default();
        let unfixed = WallClock::system();
        for _ in 0..2 {
            r.clear();
            r.time_utc(&unfixed);
            let t = text(&r);
            // 2026-12-02T12:46:40.123Z or without the milliseconds.
            assert!(t.len() == 20 || t.len() == 24, "{t}");
            assert!(t.starts_with("20") && t.ends_with('Z') && &t[10..11] == "T", "{t}");
        }
    }
}
