//! One egress port of a switch: eight class FIFOs, which of them the downstream has paused, and
//! the scheduler that picks the next packet (strict priority or deficit-weighted round robin).
//! Bitmasks of non-empty and paused classes keep the choice to a few instructions.

use crate::packet::Packet;
use std::collections::VecDeque;

/// A packet waiting at an egress port, and the ingress port it came in on (its bytes count
/// against that port's PFC counter until it leaves).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Queued {
    pub pkt: Packet,
    pub in_port: u16,
}

/// Egress state of one port.
#[derive(Debug, Default)]
pub(crate) struct EgressPort {
    pub queues: [VecDeque<Queued>; 8],
    pub queue_bytes: [u64; 8],
    /// Bit c: class c has packets.
    pub nonempty: u8,
    /// Bit c: the downstream sent PAUSE for class c and no RESUME yet.
    pub paused: u8,
    /// A `fabric.switch_tx` event is pending for this port's link direction.
    pub tx_pending: bool,
    /// DWRR: bytes each class may still send this round, the class being served, and whether it
    /// has had its quantum for this visit.
    deficit: [u64; 8],
    current: u8,
    credited: bool,
}

impl EgressPort {
    /// Classes with packets that may be sent now.
    #[inline]
    pub fn eligible(&self) -> u8 {
        self.nonempty & !self.paused
    }

    #[inline]
    pub fn push(&mut self, q: Queued) {
        let c = q.pkt.class as usize;
        self.queue_bytes[c] += q.pkt.bytes as u64;
        self.queues[c].push_back(q);
        self.nonempty |= 1 << c;
    }

    /// Removes the head of class `c`.
    #[inline]
    fn pop(&mut self, c: usize) -> Queued {
        let q = self.queues[c].pop_front().expect("scheduler picked an empty class");
        self.queue_bytes[c] -= q.pkt.bytes as u64;
        if self.queues[c].is_empty() {
            self.nonempty &= !(1 << c);
        }
        q
    }

    /// Strict priority: the highest eligible class.
    #[inline]
    pub fn pop_strict(&mut self) -> Option<Queued> {
        let e = self.eligible();
        if e == 0 {
            return None;
        }
        Some(self.pop(7 - e.leading_zeros() as usize))
    }

    /// Deficit round robin (Shreedhar and Varghese, 1996) over the eligible classes: a class
    /// visited gets `quanta[c]` bytes of credit and sends while its head fits; a class that
    /// empties or is paused loses what is left, so it cannot save up for a burst.
    pub fn pop_dwrr(&mut self, quanta: &[u64; 8]) -> Option<Queued> {
        let e = self.eligible();
        if e == 0 {
            return None;
        }
        loop {
            let c = self.current as usize;
            if e & (1 << c) == 0 {
                self.deficit[c] = 0;
                self.next_class();
                continue;
            }
            if !self.credited {
                self.deficit[c] += quanta[c];
                self.credited = true;
            }
            let head = self.queues[c].front().expect("eligible class has a head").pkt.bytes as u64;
            if head <= self.deficit[c] {
                self.deficit[c] -= head;
                let q = self.pop(c);
                if self.nonempty & (1 << c) == 0 {
                    self.deficit[c] = 0;
                    self.next_class();
                }
                return Some(q);
            }
            self.next_class();
        }
    }

    #[inline]
    fn next_class(&mut self) {
        self.current = (self.current + 1) & 7;
        self.credited = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(class: u8, bytes: u32, psn: u32) -> Queued {
        Queued {
            pkt: Packet {
                class,
                bytes,
                psn,
                ..Default::default()
            },
            in_port: 0,
        }
    }

    #[test]
    fn strict_priority_serves_the_highest_unpaused_class() {
        let mut p = EgressPort::default();
        p.push(pkt(0, 100, 1));
        p.push(pkt(5, 100, 2));
        p.push(pkt(3, 100, 3));
        assert_eq!(p.pop_strict().unwrap().pkt.psn, 2);
        p.paused = 1 << 3;
        assert_eq!(p.pop_strict().unwrap().pkt.psn, 1, "class 3 is paused");
        assert!(p.pop_strict().is_none(), "only the paused class is left");
        assert_eq!(p.queue_bytes[3], 100);
        p.paused = 0;
        assert_eq!(p.pop_strict().unwrap().pkt.psn, 3);
        assert_eq!((p.nonempty, p.queue_bytes), (0, [0; 8]));
    }

    #[test]
    fn dwrr_shares_bytes_by_weight() {
        // Classes 0 and 1 always backlogged, weights 1 and 3, 1000 B packets and a 3000 B
        // quantum: per round class 0 sends 3 packets and class 1 sends 9, so bytes go 1:3.
        let mut p = EgressPort::default();
        let quanta = [3000, 9000, 3000, 3000, 3000, 3000, 3000, 3000];
        let mut sent = [0u64; 2];
        for i in 0..1200 {
            p.push(pkt(0, 1000, i));
            p.push(pkt(1, 1000, i));
            let q = p.pop_dwrr(&quanta).unwrap();
            sent[q.pkt.class as usize] += q.pkt.bytes as u64;
        }
        assert_eq!(sent[0] + sent[1], 1_200_000);
        assert_eq!(sent[1], 3 * sent[0]);
    }

    #[test]
    fn dwrr_skips_paused_and_empty_classes() {
        let mut p = EgressPort::default();
        let quanta = [9216; 8];
        p.push(pkt(2, 1000, 1));
        p.push(pkt(6, 1000, 2));
        p.paused = 1 << 2;
        assert_eq!(p.pop_dwrr(&quanta).unwrap().pkt.psn, 2);
        assert!(p.pop_dwrr(&quanta).is_none());
        p.paused = 0;
        assert_eq!(p.pop_dwrr(&quanta).unwrap().pkt.psn, 1);
    }
}
