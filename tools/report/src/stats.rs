//! The figures the report shows, computed from the rows alone: latency percentiles (nearest
//! rank), CDFs, the mean latency breakdown, goodput per interval. Each pair's figures cover the
//! WQEs that completed in the recording window, as the spec says to read rdma-perf.

use crate::load::{RunData, WqeRow};
use std::collections::BTreeMap;

/// The percentiles the report tabulates.
pub const PERCENTILES: [f64; 3] = [50.0, 99.0, 99.9];

/// The names of the latency breakdown's parts, in the rdma-perf columns' order.
pub const PARTS: [&str; 5] = ["doorbell", "NIC wait", "fetch", "network", "ACK"];

/// The nearest-rank percentile `p` (0-100] of `sorted` (ascending, not empty): the smallest value
/// with at least p% of the values at or below it.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    // p x n / 100 is often a whole number that binary floating point misses by an ulp
    // (99.9 x 1000 / 100 = 999.0000000000001): that ulp must not raise the rank.
    let rank = (p * sorted.len() as f64 / 100.0 - 1e-9).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// One group of WQEs (a pair, or all of them): what the tables show.
#[derive(Clone, Debug)]
pub struct Latency {
    /// Latencies in microseconds, ascending.
    pub sorted_usec: Vec<f64>,
    /// The mean of each breakdown part, in microseconds.
    pub mean_parts_usec: [f64; 5],
    /// Payload bytes of the WQEs.
    pub bytes: u64,
}

impl Latency {
    fn of<'a>(rows: impl Iterator<Item = &'a WqeRow>) -> Self {
        let mut sorted_usec = Vec::new();
        let mut sums = [0.0; 5];
        let mut bytes = 0;
        for r in rows {
            sorted_usec.push(r.latency_usec);
            for (s, p) in sums.iter_mut().zip(r.parts_usec) {
                *s += p;
            }
            bytes += r.bytes;
        }
        sorted_usec.sort_by(f64::total_cmp);
        let n = sorted_usec.len().max(1) as f64;
        Self {
            sorted_usec,
            mean_parts_usec: sums.map(|s| s / n),
            bytes,
        }
    }

    /// The WQEs counted.
    pub fn count(&self) -> usize {
        self.sorted_usec.len()
    }

    /// Percentile `p` in microseconds, or `None` without WQEs.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        (!self.sorted_usec.is_empty()).then(|| percentile(&self.sorted_usec, p))
    }

    /// The CDF at most `points` points: `(latency, fraction at or below it)`.
    pub fn cdf(&self, points: usize) -> Vec<(f64, f64)> {
        let n = self.sorted_usec.len();
        if n == 0 {
            return Vec::new();
        }
        let step = n.div_ceil(points.max(1)).max(1);
        let mut out: Vec<(f64, f64)> = (0..n)
            .step_by(step)
            .map(|i| (self.sorted_usec[i], (i + 1) as f64 / n as f64))
            .collect();
        if out.last().is_none_or(|&(_, f)| f < 1.0) {
            out.push((self.sorted_usec[n - 1], 1.0));
        }
        out
    }
}

/// The report's latency figures: per pair `(initiator, responder)` and over all pairs.
#[derive(Clone, Debug)]
pub struct Latencies {
    /// Per pair, in pair order.
    pub pairs: BTreeMap<(u32, u32), Latency>,
    /// All WQEs of the window.
    pub overall: Latency,
    /// The window `[start, end]` in seconds the WQEs completed in.
    pub window: (f64, f64),
}

/// Whether a completion at `t` lies in the window (both ends included, as the spec's filter).
pub fn in_window(t: f64, (start, end): (f64, f64)) -> bool {
    t >= start && t <= end
}

/// The latency figures of `run`'s WQEs that completed in its recording window.
pub fn latencies(run: &RunData) -> Latencies {
    let window = run.window();
    let rows: Vec<&WqeRow> = run.wqes.iter().filter(|r| in_window(r.done_sec, window)).collect();
    let mut by_pair: BTreeMap<(u32, u32), Vec<&WqeRow>> = BTreeMap::new();
    for r in &rows {
        by_pair.entry((r.initiator, r.responder)).or_default().push(r);
    }
    Latencies {
        pairs: by_pair
            .into_iter()
            .map(|(k, v)| (k, Latency::of(v.into_iter())))
            .collect(),
        overall: Latency::of(rows.into_iter()),
        window,
    }
}

/// Goodput per pair over time: the payload of the WQEs each pair completed in each beacon
/// interval, x 8 / the interval, in Gbps, at the interval's end. Intervals end at the beacon's
/// ticks.
pub fn goodput_over_time(run: &RunData) -> BTreeMap<(u32, u32), Vec<(f64, f64)>> {
    let ticks: Vec<f64> = run.beacon.rows.iter().map(|(t, _)| *t).collect();
    let mut out: BTreeMap<(u32, u32), Vec<f64>> = BTreeMap::new();
    for r in &run.wqes {
        // The interval (t[i-1], t[i]] the completion falls in; completions after the last tick
        // belong to no interval.
        let i = ticks.partition_point(|&t| t < r.done_sec);
        if i < ticks.len() {
            out.entry((r.initiator, r.responder))
                .or_insert_with(|| vec![0.0; ticks.len()])[i] += r.bytes as f64;
        }
    }
    out.into_iter()
        .map(|(k, bytes)| {
            let series = ticks
                .iter()
                .enumerate()
                .map(|(i, &t)| {
                    let width = t - if i == 0 { 0.0 } else { ticks[i - 1] };
                    (t, if width > 0.0 { bytes[i] * 8.0 / width / 1e9 } else { 0.0 })
                })
                .collect();
            (k, series)
        })
        .collect()
}

/// A running total's increase over each beacon interval, at the interval's end.
pub fn per_interval(times: &[f64], totals: &[f64]) -> Vec<(f64, f64)> {
    let mut prev = 0.0;
    times
        .iter()
        .zip(totals)
        .map(|(&t, &v)| {
            let d = v - prev;
            prev = v;
            (t, d)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=1000).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 500.0);
        assert_eq!(percentile(&v, 99.0), 990.0);
        assert_eq!(percentile(&v, 99.9), 999.0);
        assert_eq!(percentile(&v, 100.0), 1000.0);
        assert_eq!(percentile(&[7.0], 99.9), 7.0);
        // 3 values: p50 is the 2nd (ceil(1.5)), p99 the 3rd.
        assert_eq!(percentile(&[1.0, 2.0, 3.0], 50.0), 2.0);
        assert_eq!(percentile(&[1.0, 2.0, 3.0], 99.0), 3.0);
    }

    #[test]
    fn intervals_of_running_totals() {
        assert_eq!(
            per_interval(&[1.0, 2.0, 3.0], &[5.0, 5.0, 9.0]),
            vec![(1.0, 5.0), (2.0, 0.0), (3.0, 4.0)]
        );
    }
}
