//! A link direction: one serializer and the propagation behind it. Packets are launched onto it
//! by whoever owns the egress (a switch port or a NIC), which decides what to send next. The packets
//! propagating on it wait in an engine channel (a FIFO inside the event queue with at most one
//! pending arrival event), so the far end takes its packet without touching this entity.

use crate::packet::Packet;
use engine::prelude::*;

/// One direction of a full-duplex link: in its host's `HostPort` or its switch's `Switch`.
#[derive(Debug)]
pub struct LinkDirection {
    /// Dense id: link `l`'s direction a->b is `2l`, b->a is `2l + 1`.
    pub id: u32,
    /// The sending node (topology node index; hosts come first).
    pub from_node: u32,
    /// The sending node's port this direction leaves from.
    pub from_port: u16,
    /// The receiving node (topology node index).
    pub to_node: u32,
    /// The receiving node's port this direction arrives at.
    pub to_port: u16,
    /// The serializer's rate (bits per second).
    pub rate: Rate,
    /// `rate` as whole picoseconds per byte, when it is one (400 Gbps: 20 ps).
    ps_per_byte: Option<u64>,
    /// Propagation delay, plus the receiving switch's forwarding latency (folded in here so a
    /// packet costs one arrival event per hop; the switch then has it at the time it could
    /// forward it).
    pub delay: SimTime,
    /// When the last bit of the last launched packet leaves the sender.
    pub busy_until: SimTime,
    /// The channel its packets propagate in (channel number `id`).
    channel: ChannelKey<Packet>,
    /// Packets launched on it, of every kind (data, control, PFC).
    pub packets: u64,
    /// Wire bytes of those packets, headers included.
    pub bytes: u64,
    /// RDMA data packets among `packets`.
    pub data_packets: u64,
    /// Of them, per traffic class, packets and bytes, on a host's direction only
    /// (`launch_from_host`): what the run's conservation check counts as sent.
    pub data_by_class: [Tally; 8],
}

/// A count of packets and their bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tally {
    /// Packets counted.
    pub packets: u64,
    /// Their bytes, summed.
    pub bytes: u64,
}

impl Tally {
    /// Counts one packet of `bytes`.
    #[inline]
    pub fn add(&mut self, bytes: u64) {
        self.packets += 1;
        self.bytes += bytes;
    }
}

impl std::ops::AddAssign for Tally {
    fn add_assign(&mut self, o: Tally) {
        self.packets += o.packets;
        self.bytes += o.bytes;
    }
}

impl std::ops::SubAssign for Tally {
    fn sub_assign(&mut self, o: Tally) {
        self.packets -= o.packets;
        self.bytes -= o.bytes;
    }
}

/// The data word of a direction's arrival events: the node and port it arrives at, so that the
/// handler of an arrival reads them from the event, not from a table indexed by direction (at
/// `k: 32`, one cache line fewer per hop).
#[inline]
pub fn arrival_word(node: u32, port: u16) -> u64 {
    u64::from(node) << 16 | u64::from(port)
}

/// The node and port an arrival event's data word (`arrival_word`) names.
#[inline]
pub fn arrival_at(data: u64) -> (u32, u16) {
    ((data >> 16) as u32, data as u16)
}

impl LinkDirection {
    /// Starts loading the fields a launch touches, which span several cache lines (warming a
    /// launch: `Handler::prefetch`).
    #[inline]
    pub fn warm(&self) {
        use engine::prefetch::prefetch;
        prefetch(&self.busy_until);
        prefetch(&self.ps_per_byte);
        prefetch(&self.delay);
        prefetch(&self.packets);
        prefetch(&self.data_packets);
        prefetch(&self.channel);
        prefetch(&self.id);
    }

    /// A direction with its own event source and channel; its arrivals are `arrive` events
    /// targeted at `id`, which must be the next channel number of `channel`'s type.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        q: &mut EventQueue,
        id: u32,
        from: (u32, u16),
        to: (u32, u16),
        rate: Rate,
        delay: SimTime,
        arrive: EventKind,
        channel: ChannelKey<Packet>,
    ) -> Self {
        let chan = q.add_channel(channel, arrive, id, arrival_word(to.0, to.1));
        assert_eq!(chan, id, "link directions are built in id order");
        // Arrivals are scheduled about a delay ahead (plus serialization and any wait for the
        // serializer): keep them out of the queue's far heap, which is for timers.
        q.keep_near(SimTime(delay.0.saturating_mul(2)));
        LinkDirection {
            id,
            from_node: from.0,
            from_port: from.1,
            to_node: to.0,
            to_port: to.1,
            rate,
            ps_per_byte: rate.exact_ps_per_byte(),
            delay,
            busy_until: SimTime::ZERO,
            channel,
            packets: 0,
            bytes: 0,
            data_packets: 0,
            data_by_class: [Tally::default(); 8],
        }
    }

    /// Schedules the sender's `kind` event for this direction at `at` (a switch port's next
    /// send), targeted at `id`, from the direction's own source: the one its channel numbers its
    /// arrivals with (`EventQueue::schedule_as`), so both keep one order.
    #[inline]
    pub fn schedule_send(&self, q: &mut EventQueue, at: SimTime, kind: EventKind, data: u64) {
        q.schedule_as(self.channel, self.id, at, kind, self.id, data);
    }

    /// Is the serializer free at `now`?
    #[inline]
    pub fn idle_at(&self, now: SimTime) -> bool {
        self.busy_until <= now
    }

    /// Serializes `pkt` from `max(start, busy_until)`: `bytes x 8 / rate`, then the delay. Returns
    /// the time the last bit leaves the sender (when the owner may launch the next packet).
    /// Inlined into every caller, with the channel's `send`: a packet built or modified in
    /// registers is then stored straight into its channel slot (see `EventQueue::send`).
    #[inline(always)]
    pub fn launch(&mut self, q: &mut EventQueue, start: SimTime, pkt: Packet) -> SimTime {
        let begin = start.max(self.busy_until);
        let ser = match self.ps_per_byte {
            Some(p) => SimTime(pkt.bytes as u64 * p),
            None => slow_serialization(self.rate, pkt.bytes),
        };
        let end = begin + ser;
        self.busy_until = end;
        self.packets += 1;
        self.bytes += pkt.bytes as u64;
        self.data_packets += (pkt.kind == crate::packet::PacketKind::Data) as u64;
        q.send(self.channel, self.id, end + self.delay, pkt);
        end
    }

    /// `launch` for a host's NIC putting `pkt` on its link: also tallies data packets per class,
    /// what the run's conservation check counts as sent. A NIC that calls plain `launch` fails
    /// that check (nothing sent, yet delivered); switches do, since only hosts' sends are counted.
    #[inline(always)]
    pub fn launch_from_host(&mut self, q: &mut EventQueue, start: SimTime, pkt: Packet) -> SimTime {
        if pkt.kind == crate::packet::PacketKind::Data {
            self.data_by_class[(pkt.class & 7) as usize].add(pkt.bytes as u64);
        }
        self.launch(q, start, pkt)
    }
}

/// A rate that is not a whole number of picoseconds per byte: a division, kept out of `launch`
/// (which runs for every packet at every hop) so that its common path stays small.
#[cold]
#[inline(never)]
fn slow_serialization(rate: Rate, bytes: u32) -> SimTime {
    rate.serialization_time(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_then_propagation_one_pending_event() {
        let mut q = EventQueue::new();
        let key = q.add_channel_type::<Packet>();
        let mut d = LinkDirection::new(
            &mut q,
            0,
            (0, 0),
            (1, 0),
            Rate::gbps(400),
            SimTime::from_us(1),
            EventKind(0),
            key,
        );
        let pkt = |psn| Packet {
            bytes: 4154,
            psn,
            ..Default::default()
        };
        let end1 = d.launch(&mut q, SimTime::ZERO, pkt(1));
        // 4154 B x 20 ps = 83,080 ps on the wire.
        assert_eq!(end1, SimTime(83_080));
        let end2 = d.launch(&mut q, SimTime::ZERO, pkt(2));
        assert_eq!(end2, SimTime(166_160), "the second waits for the first");
        assert_eq!(q.pending(), 1, "one pending arrival per direction");
        assert_eq!(q.channel_len(key, 0), 2);
        let ev = q.pop_before(SimTime::MAX).unwrap();
        assert_eq!((ev.time, ev.target), (SimTime(83_080 + 1_000_000), 0));
        assert_eq!(q.receive(key, 0).psn, 1);
        let ev = q.pop_before(SimTime::MAX).unwrap();
        assert_eq!(ev.time, SimTime(166_160 + 1_000_000));
        assert_eq!(q.receive(key, 0).psn, 2);
        assert_eq!((q.pending(), q.channel_len(key, 0)), (0, 0));
        assert_eq!((d.packets, d.bytes), (2, 8308));
    }

    #[test]
    fn each_arrival_names_the_node_and_port_it_reaches() {
        // Handlers take where a packet arrives from its event's word, not from a table: every
        // arrival, the first of an idle direction and each next head, must name the far end, up
        // to the largest node and port numbers.
        let mut q = EventQueue::new();
        let key = q.add_channel_type::<Packet>();
        let ends = [(1, 0), (70_000, 3), (u32::MAX, u16::MAX)];
        let mut dirs: Vec<LinkDirection> = (0..3u32)
            .map(|id| {
                LinkDirection::new(
                    &mut q,
                    id,
                    (9, 1),
                    ends[id as usize],
                    Rate::gbps(400),
                    SimTime(1000),
                    EventKind(0),
                    key,
                )
            })
            .collect();
        for d in &mut dirs {
            for _ in 0..2 {
                d.launch(&mut q, SimTime::ZERO, Packet::default());
            }
        }
        let mut seen = 0;
        while let Some(ev) = q.pop_before(SimTime::MAX) {
            assert_eq!(
                arrival_at(ev.data),
                ends[ev.target as usize],
                "arrival on {}",
                ev.target
            );
            q.receive(key, ev.target);
            seen += 1;
        }
        assert_eq!(seen, 6);
    }

    #[test]
    fn a_long_link_keeps_its_arrivals_in_the_main_heap() {
        // 20 us is past the queue's default far horizon (16.8 us); the link raises it.
        let mut q = EventQueue::new();
        let key = q.add_channel_type::<Packet>();
        let delay = SimTime::from_us(20);
        assert!(delay > engine::event::FAR_HORIZON);
        let mut d = LinkDirection::new(&mut q, 0, (0, 0), (1, 0), Rate::gbps(400), delay, EventKind(0), key);
        let pkt = Packet {
            bytes: 4154,
            ..Default::default()
        };
        d.launch(&mut q, SimTime::ZERO, pkt);
        assert_eq!((q.pending(), q.pending_far()), (1, 0));
        // A timer twice as far still goes to the far heap.
        let s = q.add_source();
        q.schedule(SimTime::from_us(41), s, EventKind(1), 0, 0);
        assert_eq!((q.pending(), q.pending_far()), (2, 1));
    }
}
