//! Wall-clock time for the records' `time_utc` column: RFC 3339 in UTC, or the fixed instant given
//! by `SOURCE_DATE_EPOCH` so that two runs can be compared byte for byte. Models never read this:
//! only record writers do.

/// The clock the records' `time_utc` reads: the system's, or one fixed instant.
#[derive(Clone, Debug)]
pub struct WallClock {
    fixed: Option<String>,
}

impl WallClock {
    /// Reads `SOURCE_DATE_EPOCH` (whole seconds since 1970) once. A value that is not a number is
    /// ignored, as reproducible-builds tools do.
    pub fn from_env() -> Self {
        let fixed = std::env::var("SOURCE_DATE_EPOCH")
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok());
        WallClock {
            fixed: fixed.map(|s| rfc3339(s, 0)),
        }
    }

    /// The real wall clock, whatever the environment says.
    pub fn system() -> Self {
        WallClock { fixed: None }
    }

    /// A clock that always reads `epoch_secs` seconds after 1970 (as `SOURCE_DATE_EPOCH` would).
    pub fn fixed_at(epoch_secs: i64) -> Self {
        WallClock {
            fixed: Some(rfc3339(epoch_secs, 0)),
        }
    }

    /// The fixed instant's text, when `SOURCE_DATE_EPOCH` set one.
    pub fn fixed(&self) -> Option<&str> {
        self.fixed.as_deref()
    }

    /// Whether the clock reads a fixed instant.
    pub fn is_fixed(&self) -> bool {
        self.fixed.is_some()
    }
}

/// `1970-01-01T00:00:00Z`, with milliseconds when `millis` is not zero.
pub fn rfc3339(epoch_secs: i64, millis: u32) -> String {
    let date_time = rfc3339_seconds(epoch_secs);
    if millis == 0 {
        format!("{date_time}Z")
    } else {
        format!("{date_time}.{millis:03}Z")
    }
}

/// `1970-01-01T00:00:00`: `rfc3339` without fraction and zone, which a caller writing many
/// instants within one second appends itself.
pub fn rfc3339_seconds(epoch_secs: i64) -> String {
    let days = epoch_secs.div_euclid(86_400);
    let secs = epoch_secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (secs / 3600, secs / 60 % 60, secs % 60);
    format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}")
}

/// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400, 0), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_207_306, 5), "2026-12-02T10:28:26.005Z");
        assert_eq!(WallClock::fixed_at(86_399).fixed(), Some("1970-01-01T23:59:59Z"));
    }
}
