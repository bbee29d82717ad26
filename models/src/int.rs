//! In-band network telemetry (INT): hop records that switches push into the data packets of
//! queue pairs whose controller asks for them (`models::cc::Feedback::int`), echoed back to the
//! sender in the ACK that answers the packet (HPCC, Li et al., SIGCOMM 2019).
//!
//! The records do not ride in `Packet` (copied whole on every hop, for every packet of every
//! run): they live in the fabric's [`IntTable`], a slab of hop stacks that exists only when a
//! controller asks for INT, and a packet carries the index of its stack in `Packet::int`
//! (0: none). The sending NIC opens a stack for each data packet; every switch that sends the
//! packet on pushes one [`IntHop`] (`models::switch::record_hop`); the receiving NIC hands the
//! stack to the ACK that answers the packet (or closes it if none does); the sending NIC reads
//! it from the ACK, gives the hops to the controller (`CongestionControl::on_int`) and closes it.
//!
//! On the wire, a packet with INT carries the header whole from its first hop, as the HPCC
//! authors' ns-3 code sends it (`IntHeader::GetStaticSize`: `MAX_HOPS` hop records of
//! `HOP_BYTES` and a 2-byte hop count, 42 B): the frame's size does not change on the way, so
//! every serializer and buffer sees the size the receiver gets. The ACK echoing it carries the
//! same 42 B.

use engine::SimTime;
use engine::units::Rate;
use std::sync::Mutex;

/// Bytes of one hop record on the wire: HPCC's INT metadata per hop (§4.3 of the paper: 8 B,
/// as `IntHop` in the authors' ns-3 `int-header.h`: 64 bits of rate, time, bytes, queue).
pub const HOP_BYTES: u32 = 8;
/// Hop records an INT header has room for (ns-3 `IntHeader::maxHop`); more hops are not
/// recorded.
pub const MAX_HOPS: usize = 5;
/// Bytes the INT header adds to a data packet or an ACK: `MAX_HOPS` records and a 2-byte hop
/// count (ns-3 `IntHeader::GetStaticSize()`, 42 B).
pub const HEADER_BYTES: u32 = HOP_BYTES * MAX_HOPS as u32 + 2;

/// What one switch egress port reports as a packet leaves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntHop {
    /// When the packet's first bit left the port.
    pub time: SimTime,
    /// Bytes the port had sent before this packet (its transmit counter).
    pub tx_bytes: u64,
    /// Bytes waiting at the port once the packet left its queue.
    pub qlen: u64,
    /// The port's line rate.
    pub rate: Rate,
}

impl Default for IntHop {
    fn default() -> Self {
        IntHop {
            time: SimTime::ZERO,
            tx_bytes: 0,
            qlen: 0,
            rate: Rate(1),
        }
    }
}

/// One packet's hop records, in path order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hops {
    hops: [IntHop; MAX_HOPS],
    len: u8,
}

impl Hops {
    /// The records, first hop first.
    pub fn as_slice(&self) -> &[IntHop] {
        &self.hops[..self.len as usize]
    }
    /// Appends a hop; false (and nothing recorded) once `MAX_HOPS` are there.
    pub fn push(&mut self, hop: IntHop) -> bool {
        let Some(slot) = self.hops.get_mut(self.len as usize) else {
            return false;
        };
        *slot = hop;
        self.len += 1;
        true
    }
}

impl<'a> FromIterator<&'a IntHop> for Hops {
    fn from_iter<I: IntoIterator<Item = &'a IntHop>>(iter: I) -> Self {
        let mut h = Hops::default();
        for hop in iter {
            h.push(*hop);
        }
        h
    }
}

/// The fabric's hop stacks (`FabricIndex::int`), one per packet that carries INT. Shared by the
/// switches and the NICs of one world (one shard), which take turns on one thread: the lock is
/// never contended, it only lets the table sit behind the fabric's shared index.
#[derive(Debug, Default)]
pub struct IntTable(Mutex<Slab>);

#[derive(Debug, Default)]
struct Slab {
    stacks: Vec<Hops>,
    free: Vec<u32>,
}

impl IntTable {
    fn slab(&self) -> std::sync::MutexGuard<'_, Slab> {
        // A poisoned lock means a panic elsewhere, which ends the run anyway.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
    /// A new empty stack: its id for `Packet::int` (never 0).
    pub fn open(&self) -> u32 {
        let mut s = self.slab();
        match s.free.pop() {
            Some(i) => {
                s.stacks[i as usize] = Hops::default();
                i + 1
            }
            None => {
                s.stacks.push(Hops::default());
                s.stacks.len() as u32
            }
        }
    }
    /// Pushes `hop` on stack `id` (ignored for 0, an unknown id or a full stack).
    pub fn push(&self, id: u32, hop: IntHop) {
        if let Some(h) = self.slab().stacks.get_mut((id as usize).wrapping_sub(1)) {
            h.push(hop);
        }
    }
    /// A copy of stack `id` (empty for 0 or an unknown id).
    pub fn hops(&self, id: u32) -> Hops {
        let s = self.slab();
        s.stacks.get((id as usize).wrapping_sub(1)).copied().unwrap_or_default()
    }
    /// Stack `id`'s records, and frees it for reuse.
    pub fn close(&self, id: u32) -> Hops {
        let mut s = self.slab();
        let i = (id as usize).wrapping_sub(1);
        let Some(h) = s.stacks.get(i).copied() else {
            return Hops::default();
        };
        s.free.push(i as u32);
        h
    }
    /// Stacks open now (opened, not closed): packets with INT in flight, for tests.
    pub fn open_stacks(&self) -> usize {
        let s = self.slab();
        s.stacks.len() - s.free.len()
    }
}

/// Present (inserted by a NIC plugin at build) when a controller asks for INT: the fabric then
/// builds its `IntTable`. Without it there is no table and no packet carries INT.
#[derive(bevy_ecs::prelude::Resource, Clone, Copy, Debug, Default)]
pub struct IntRequested;

/// Asks for INT (a NIC plugin whose controller needs it, at build, after the fabric's plugin):
/// the fabric builds its table and runs the switch models with their INT test
/// (`SwitchModel::arrive::<true>`), which a run without INT does not carry.
pub fn request(app: &mut engine::app::App) {
    app.insert_resource(IntRequested);
    crate::fabric::tap::instrument(app);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(t: u64) -> IntHop {
        IntHop {
            time: SimTime(t),
            tx_bytes: t,
            qlen: 0,
            rate: Rate::gbps(400),
        }
    }

    #[test]
    fn stacks_open_push_close_and_are_reused() {
        let t = IntTable::default();
        let (a, b) = (t.open(), t.open());
        assert_eq!((a, b), (1, 2));
        t.push(a, hop(1));
        t.push(a, hop(2));
        t.push(0, hop(9));
        assert_eq!(t.hops(a).as_slice(), &[hop(1), hop(2)]);
        assert!(t.hops(b).as_slice().is_empty());
        assert_eq!(t.close(a).as_slice().len(), 2);
        assert_eq!(t.open_stacks(), 1);
        // The freed slot comes back empty.
        assert_eq!(t.open(), a);
        assert!(t.hops(a).as_slice().is_empty());
    }

    #[test]
    fn a_stack_holds_max_hops_and_the_header_is_42_bytes() {
        let mut h = Hops::default();
        for i in 0..MAX_HOPS as u64 {
            assert!(h.push(hop(i)));
        }
        assert!(!h.push(hop(99)));
        assert_eq!(h.as_slice().len(), MAX_HOPS);
        assert_eq!(HEADER_BYTES, 42);
    }
}
