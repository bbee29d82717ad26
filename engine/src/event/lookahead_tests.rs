//! The lookahead front and its calendar change no order: a queue run with them gives the same
//! events, in the same order, as one without, whatever the front's length and the calendar's
//! shape, and however events land (before the front's last, in the bucket being taken, in a later
//! one, past the calendar's year, in the far heap, at the same time as others).

use super::*;

/// A run of a queue whose handler schedules 0 to 2 events per event, at delays drawn from a fixed
/// stream: 0, 1, a few ps, up to 3 us, or past the far horizon; from one of several sources. With
/// `calendar` (shift, buckets), the lookahead's calendar has that shape. Returns each event's
/// (time, target, data) in the order popped.
fn trace(lookahead: usize, calendar: Option<(u32, usize)>) -> Vec<(u64, u32, u64)> {
    let mut q = EventQueue::new();
    q.set_lookahead(lookahead);
    if let Some((shift, buckets)) = calendar {
        q.use_calendar(shift, buckets);
    }
    let sources: Vec<SourceId> = (0..5).map(|_| q.add_source()).collect();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut data = 0;
    for _ in 0..20 {
        let r = next();
        q.schedule(
            SimTime(r % 1000),
            sources[(r % 5) as usize],
            EventKind(0),
            (r % 7) as u32,
            data,
        );
        data += 1;
    }
    let mut out = Vec::new();
    while out.len() < 20_000 {
        let ev = if lookahead > 0 {
            q.pop_ahead(SimTime::MAX)
        } else {
            q.pop_before(SimTime::MAX)
        };
        let Some(ev) = ev else { break };
        q.check_front();
        // What the front shows is in order and not before now.
        let mut last = ev.time;
        for i in 0..lookahead {
            if let Some(a) = q.ahead(i) {
                assert!(a.time >= last, "the front out of order");
                last = a.time;
            }
        }
        out.push((ev.time.0, ev.target, ev.data));
        for _ in 0..1 + (next() % 3 == 0) as u64 {
            let r = next();
            let delay = match r % 5 {
                0 => 0,
                1 => 1,
                2 => r % 50,
                3 => r % 3_000_000,
                _ => FAR_HORIZON.0 + r % 5000,
            };
            let at = SimTime(ev.time.0 + delay);
            q.schedule(at, sources[(r >> 8) as usize % 5], EventKind(0), (r % 7) as u32, data);
            data += 1;
            if let Some(t) = q.peek_time() {
                assert!(t >= ev.time);
            }
            q.check_front();
        }
    }
    assert!(out.len() > 1000, "the run ended early: {} events", out.len());
    out
}

#[test]
fn the_lookahead_changes_no_order() {
    let plain = trace(0, None);
    for n in [1, 2, 4, 16, MAX_LOOKAHEAD] {
        assert!(trace(n, None) == plain, "lookahead {n} popped another order");
    }
    // Buckets of 16 ps and 1 ns, years of 1 ns to 16 us: events in the bucket being taken, in
    // later ones, and past the year (to the far heap).
    for (shift, buckets) in [(4, 64), (10, 1), (10, 16), (10, 1 << 14)] {
        assert!(
            trace(16, Some((shift, buckets))) == plain,
            "a calendar of {buckets} buckets of 2^{shift} ps popped another order"
        );
    }
}

#[test]
fn turning_the_lookahead_on_and_off_keeps_every_event() {
    let mut q = EventQueue::new();
    let s = q.add_source();
    for t in [5, 3, 9, 1, 7] {
        q.schedule(SimTime(t), s, EventKind(0), 0, t);
    }
    q.set_lookahead(4);
    assert_eq!(q.pop_ahead(SimTime::MAX).map(|e| e.data), Some(1));
    assert_eq!((q.pending(), q.peek_time()), (4, Some(SimTime(3))));
    assert_eq!(q.ahead(3).map(|e| e.data), Some(9));
    // An event before the front's last goes into the front, in its place.
    q.schedule(SimTime(4), s, EventKind(0), 0, 4);
    let shown: Vec<u64> = (0..4).filter_map(|i| q.ahead(i)).map(|e| e.data).collect();
    assert_eq!(shown, vec![3, 4, 5, 7]);
    q.set_lookahead(0);
    let rest: Vec<u64> = std::iter::from_fn(|| q.pop_before(SimTime::MAX))
        .map(|e| e.data)
        .collect();
    assert_eq!(rest, vec![3, 4, 5, 7, 9]);
}
