//! Units every plugin's config shares: durations, byte sizes and bit rates, with their RON forms.
//!
//! - `Duration`: a number of seconds (`0.001`) or a string with a unit (`"1us"`, `"0.5s"`, `"20ps"`).
//! - `Size`: a number of bytes (`250000`) or a string (`"64B"`, `"4KiB"`, `"1MB"`, `"32MiB"`).
//! - `Rate`: bits per second as a number or a string (`"400Gbps"`, `"25Gbps"`, `"100Mbps"`).
//!
//! A value with an unknown unit, a negative value or one that does not fit is a deserialization
//! error whose message says what was expected, so the loader can point at it.

use crate::time::SimTime;
use serde::{Deserialize, Deserializer, Serialize, Serializer, de};
use std::fmt;

/// A span of simulated time. Deserializes from seconds or a string with a unit.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct Duration(pub SimTime);

/// A number of bytes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct Size(pub u64);

/// A bit rate in bits per second; never zero once loaded.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Rate(pub u64);

impl Duration {
    /// `ps` picoseconds.
    pub const fn from_ps(ps: u64) -> Self {
        Duration(SimTime(ps))
    }
    /// `ns` nanoseconds.
    pub const fn from_ns(ns: u64) -> Self {
        Duration(SimTime::from_ns(ns))
    }
    /// `us` microseconds.
    pub const fn from_us(us: u64) -> Self {
        Duration(SimTime::from_us(us))
    }
    /// As a `SimTime` span.
    pub const fn time(self) -> SimTime {
        self.0
    }
    /// In seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.0.as_secs_f64()
    }
}

impl Size {
    /// In bytes.
    pub const fn bytes(self) -> u64 {
        self.0
    }
}

impl Rate {
    /// `g` gigabits per second.
    pub const fn gbps(g: u64) -> Self {
        Rate(g * 1_000_000_000)
    }
    /// In bits per second.
    pub const fn bps(self) -> u64 {
        self.0
    }

    /// Time to put `bytes` on a wire at this rate: `bytes x 8 / rate`, in picoseconds. Exact where
    /// it divides (253,596 B at 400 Gbps is 5,071,920 ps); otherwise rounded up, so a serializer
    /// never runs faster than its rate.
    #[inline]
    pub fn serialization_time(self, bytes: u64) -> SimTime {
        const BIT_PS: u64 = 8 * SimTime::PS_PER_SEC;
        // Packets are far below 2.3 MB, where bytes x 8e12 still fits a u64: one hardware
        // division instead of a software u128 one (this runs for every packet at every hop).
        if bytes <= u64::MAX / BIT_PS {
            return SimTime((bytes * BIT_PS).div_ceil(self.0));
        }
        let num = bytes as u128 * BIT_PS as u128;
        SimTime(num.div_ceil(self.0 as u128) as u64)
    }

    /// Picoseconds per byte when that is a whole number (400 Gbps: 20), for serializers that
    /// cache it and multiply instead of dividing.
    pub fn exact_ps_per_byte(self) -> Option<u64> {
        let bit_ps = 8 * SimTime::PS_PER_SEC;
        bit_ps.is_multiple_of(self.0).then(|| bit_ps / self.0)
    }

    /// Bytes this rate carries in `t` (rounded down).
    pub fn bytes_in(self, t: SimTime) -> u64 {
        (t.0 as u128 * self.0 as u128 / (8 * SimTime::PS_PER_SEC as u128)) as u64
    }
}

/// Splits `"12.5Gbps"` into `(12.5, "Gbps")`.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == 'e' || *c == '-' || *c == '+'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    // "1e" alone is not a number; back off an exponent marker glued to the unit ("1ms" is fine).
    let (num, unit) = s.split_at(end);
    let value: f64 = num.parse().ok()?;
    Some((value, unit.trim()))
}

impl std::str::FromStr for Duration {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "`{s}` is not a duration: write seconds (0.001) or a number with one of the units ps, ns, us, ms, s (\"1us\")"
            )
        };
        let (value, unit) = split_number(s).ok_or_else(bad)?;
        let scale = match unit {
            "ps" => 1e-12,
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" | "" => 1.0,
            _ => return Err(bad()),
        };
        secs_to_duration(value * scale).map_err(|e| format!("`{s}`: {e}"))
    }
}

fn secs_to_duration(secs: f64) -> Result<Duration, String> {
    if secs < 0.0 {
        return Err("a duration cannot be negative".into());
    }
    SimTime::from_secs_f64(secs)
        .map(Duration)
        .ok_or_else(|| "the duration is not a finite number of seconds below 1.8e7 (about 213 days)".into())
}

impl std::str::FromStr for Size {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "`{s}` is not a size: write bytes (250000) or a number with one of the units B, KB, KiB, MB, MiB, GB, GiB (\"4KiB\")"
            )
        };
        let (value, unit) = split_number(s).ok_or_else(bad)?;
        let scale: f64 = match unit {
            "B" | "" => 1.0,
            "KB" | "kB" => 1e3,
            "KiB" => 1024.0,
            "MB" => 1e6,
            "MiB" => 1024.0 * 1024.0,
            "GB" => 1e9,
            "GiB" => 1024.0 * 1024.0 * 1024.0,
            _ => return Err(bad()),
        };
        let bytes = value * scale;
        if bytes < 0.0 || !bytes.is_finite() || bytes >= TWO_POW_64 {
            return Err(format!("`{s}`: {SIZE_RANGE}"));
        }
        if bytes.fract() != 0.0 {
            return Err(format!("`{s}` is not a whole number of bytes"));
        }
        Ok(Size(bytes as u64))
    }
}

impl std::str::FromStr for Rate {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "`{s}` is not a rate: write bits per second (4e11) or a number with one of the units bps, Kbps, Mbps, Gbps, Tbps (\"400Gbps\")"
            )
        };
        let (value, unit) = split_number(s).ok_or_else(bad)?;
        let scale = match unit {
            "bps" | "" => 1.0,
            "Kbps" | "kbps" => 1e3,
            "Mbps" => 1e6,
            "Gbps" => 1e9,
            "Tbps" => 1e12,
            _ => return Err(bad()),
        };
        rate_from_bps(value * scale).map_err(|e| format!("`{s}`: {e}"))
    }
}

fn rate_from_bps(bps: f64) -> Result<Rate, String> {
    if !bps.is_finite() || bps < 1.0 {
        return Err("a rate must be at least 1 bit per second".into());
    }
    if bps >= TWO_POW_64 {
        return Err("a rate must be below 2^64 bits per second (18446744073709551616)".into());
    }
    Ok(Rate(bps.round() as u64))
}

/// 2^64, exactly: `u64::MAX as f64` rounds up to it, so a bound `<= u64::MAX as f64` let 2^64
/// itself through and `as u64` then saturated it to 2^64 - 1 (issue #14). Every f64 below it
/// converts exactly.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

const SIZE_RANGE: &str = "a size must be a whole number of bytes from 0 to 2^64 - 1 (18446744073709551615)";

/// Accepts a number or a string, and hands each to the type's parser.
struct NumOrStr<T>(std::marker::PhantomData<T>, &'static str);

macro_rules! number_or_string {
    ($ty:ty, $expecting:literal, |$n:ident| $from_num:expr, $from_u64:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(NumOrStr::<$ty>(std::marker::PhantomData, $expecting))
            }
        }
        impl<'de> de::Visitor<'de> for NumOrStr<$ty> {
            type Value = $ty;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(self.1)
            }
            fn visit_f64<E: de::Error>(self, $n: f64) -> Result<$ty, E> {
                $from_num.map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                $from_u64(v).map_err(E::custom)
            }
            // ron hands integers past u64 over as 128-bit ones: always out of range here.
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<$ty, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Err(E::custom(format!("{v} is above 2^64 - 1 (18446744073709551615)"))),
                }
            }
            fn visit_i128<E: de::Error>(self, v: i128) -> Result<$ty, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) if v < 0 => self.visit_f64(v as f64),
                    Err(_) => Err(E::custom(format!("{v} is above 2^64 - 1 (18446744073709551615)"))),
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                self.visit_f64(v as f64)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                v.parse().map_err(E::custom)
            }
        }
    };
}

number_or_string!(
    Duration,
    "a duration: seconds (0.001) or a string such as \"1us\"",
    |n| { secs_to_duration(n) },
    |v: u64| secs_to_duration(v as f64)
);
number_or_string!(
    Size,
    "a size: bytes (250000) or a string such as \"4KiB\"",
    |n| {
        if n >= 0.0 && n.fract() == 0.0 && n < TWO_POW_64 {
            Ok(Size(n as u64))
        } else {
            Err(format!("{n}: {SIZE_RANGE}"))
        }
    },
    |v: u64| Ok::<_, String>(Size(v))
);
number_or_string!(
    Rate,
    "a rate: bits per second or a string such as \"400Gbps\"",
    |n| rate_from_bps(n),
    |v: u64| if v == 0 { rate_from_bps(0.0) } else { Ok(Rate(v)) }
);

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}ps", self.0.0))
    }
}
impl Serialize for Size {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}
impl Serialize for Rate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}B", self.0)
    }
}
impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_multiple_of(1_000_000_000) {
            write!(f, "{}Gbps", self.0 / 1_000_000_000)
        } else if self.0.is_multiple_of(1_000_000) {
            write!(f, "{}Mbps", self.0 / 1_000_000)
        } else {
            write!(f, "{}bps", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_example_serialization_is_exact() {
        // 250,000 B of payload + 62 packets x 58 B of headers, at 400 Gbps: 20 ps a byte.
        assert_eq!(Rate::gbps(400).serialization_time(253_596), SimTime(5_071_920));
        assert_eq!(Rate::gbps(400).serialization_time(1), SimTime(20));
        // 1 byte at 3 bps does not divide: rounded up.
        assert_eq!(Rate(3).serialization_time(1), SimTime(2_666_666_666_667));
        // Both paths (u64 below 2.3 MB, u128 above) agree with the formula.
        for bytes in [0u64, 1, 4154, 2_305_843, 2_305_844, 10_000_000_000] {
            for rate in [Rate::gbps(400), Rate(504_000_000_000), Rate(3)] {
                let exact = (bytes as u128 * 8_000_000_000_000).div_ceil(rate.0 as u128) as u64;
                assert_eq!(rate.serialization_time(bytes), SimTime(exact), "{bytes} B at {rate}");
            }
        }
        assert_eq!(Rate::gbps(400).exact_ps_per_byte(), Some(20));
        assert_eq!(Rate(504_000_000_000).exact_ps_per_byte(), None);
    }

    #[test]
    fn parses_units() {
        assert_eq!("1us".parse::<Duration>(), Ok(Duration::from_us(1)));
        assert_eq!("0.5s".parse::<Duration>(), Ok(Duration(SimTime(500_000_000_000))));
        assert_eq!("20ps".parse::<Duration>(), Ok(Duration::from_ps(20)));
        assert_eq!("64B".parse::<Size>(), Ok(Size(64)));
        assert_eq!("4KiB".parse::<Size>(), Ok(Size(4096)));
        assert_eq!("1MB".parse::<Size>(), Ok(Size(1_000_000)));
        assert_eq!("400Gbps".parse::<Rate>(), Ok(Rate::gbps(400)));
        assert_eq!("25Gbps".parse::<Rate>(), Ok(Rate::gbps(25)));
        assert!("1 furlong".parse::<Duration>().unwrap_err().contains("not a duration"));
        assert!("4KB/s".parse::<Size>().is_err());
        assert!("400Gbit".parse::<Rate>().is_err());
        assert!("-1us".parse::<Duration>().is_err());
        assert!("0bps".parse::<Rate>().is_err());
    }

    #[test]
    fn deserializes_from_ron_numbers_and_strings() {
        let d: Duration = ron::from_str("0.001").unwrap();
        assert_eq!(d, Duration(SimTime(1_000_000_000)));
        let d: Duration = ron::from_str("\"1us\"").unwrap();
        assert_eq!(d, Duration::from_us(1));
        let s: Size = ron::from_str("250000").unwrap();
        assert_eq!(s, Size(250_000));
        let r: Rate = ron::from_str("\"400Gbps\"").unwrap();
        assert_eq!(r, Rate::gbps(400));
        let err = ron::from_str::<Duration>("-0.5").unwrap_err();
        assert!(err.to_string().contains("negative"), "{err}");
        let err = ron::from_str::<Rate>("\"400Gbit\"").unwrap_err();
        assert!(err.to_string().contains("not a rate"), "{err}");
    }

    #[test]
    fn integers_past_u64_are_refused_and_u64_max_is_kept_exactly() {
        // 2^64 as a number, a float, and a string: each one past the largest u64.
        for text in [
            "18446744073709551616",
            "18446744073709551616.0",
            "\"18446744073709551616\"",
            "1.9e19",
        ] {
            let size = ron::from_str::<Size>(text).unwrap_err().to_string();
            assert!(size.contains("2^64 - 1"), "{text}: {size}");
            let rate = ron::from_str::<Rate>(text).unwrap_err().to_string();
            assert!(rate.contains("2^64"), "{text}: {rate}");
        }
        // 2^64 - 1 fits: kept exactly, not rounded through f64 (which would make it 2^64).
        assert_eq!(ron::from_str::<Size>("18446744073709551615").unwrap(), Size(u64::MAX));
        assert_eq!(ron::from_str::<Rate>("18446744073709551615").unwrap(), Rate(u64::MAX));
        assert!(
            ron::from_str::<Rate>("0")
                .unwrap_err()
                .to_string()
                .contains("at least 1 bit")
        );
    }
}
