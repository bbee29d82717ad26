//! A CSV row built in place: fields appended to one reused buffer, numbers formatted by hand.
//! A run writes hundreds of thousands of `rdma-perf` rows; `format!` and a `String` per field
//! cost about 18,000 instructions a row (callgrind), this about a tenth of that.

use crate::clock::{WallClock, rfc3339_seconds};
use crate::time::SimTime;
use std::time::{SystemTime, UNIX_EPOCH};

/// The fields of one row, end to end in one buffer.
#[derive(Debug, Default)]
pub struct RowBuf {
    buf: Vec<u8>,
    ends: Vec<usize>,
    /// The last `time_utc` second and its text without fraction or zone: rows completed within
    /// that second reuse it and write only their milliseconds.
    utc: Option<(u64, String)>,
}

impl RowBuf {
    /// Empties the row, keeping its buffers.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.ends.clear();
    }

    fn end_field(&mut self) -> &mut Self {
        self.ends.push(self.buf.len());
        self
    }

    /// A text field.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.buf.extend_from_slice(s.as_bytes());
        self.end_field()
    }

    /// A whole number.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.digits(v, 0);
        self.end_field()
    }

    /// `int.frac`, `frac` printed with exactly `width` digits (zero-padded).
    pub fn fixed(&mut self, int: u64, frac: u64, width: usize) -> &mut Self {
        self.digits(int, 0);
        self.buf.push(b'.');
        self.digits(frac, width);
        self.end_field()
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
        let mut utc = self.utc.take().filter(|(s, _)| *s == secs);
        let (_, text) = utc.get_or_insert_with(|| (secs, rfc3339_seconds(secs as i64)));
        self.buf.extend_from_slice(text.as_bytes());
        self.utc = utc;
        if millis != 0 {
            self.buf.push(b'.');
            self.digits(u64::from(millis), 3);
        }
        self.buf.push(b'Z');
        self.end_field()
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

    /// The fields, in order.
    pub fn fields(&self) -> impl Iterator<Item = &[u8]> {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let f = &self.buf[start..end];
            start = end;
            f
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let got: Vec<String> = r.fields().map(|f| String::from_utf8(f.to_vec()).unwrap()).collect();
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
                let got = String::from_utf8(r.fields().next().unwrap().to_vec()).unwrap();
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
        let got: Vec<&[u8]> = r.fields().collect();
        assert_eq!(got, vec![&b"5.071920"[..], b"14000.000001", b"0.000005071920"]);
    }

    #[test]
    fn fields_keep_their_order_and_text() {
        let mut r = RowBuf::default();
        r.str("a,b").u64(7).str("").time_utc(&WallClock::fixed_at(0));
        let got: Vec<&[u8]> = r.fields().collect();
        assert_eq!(got, vec![&b"a,b"[..], b"7", b"", b"1970-01-01T00:00:00Z"]);
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
            let got = String::from_utf8(r.fields().next().unwrap().to_vec()).unwrap();
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
            let t = String::from_utf8(r.fields().next().unwrap().to_vec()).unwrap();
            // 2026-12-02T12:46:40.123Z or without the milliseconds.
            assert!(t.len() == 20 || t.len() == 24, "{t}");
            assert!(t.starts_with("20") && t.ends_with('Z') && &t[10..11] == "T", "{t}");
        }
    }
}
