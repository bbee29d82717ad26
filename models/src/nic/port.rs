//! A host's port as the NIC sees it: the PCIe link and the link direction it sends on, which the
//! fabric builds and lends to the NIC's handler, and the arrival step every NIC runs on the
//! packets reaching its host.

use crate::fabric::FabricKinds;
use crate::fabric::conservation::Delivered;
use crate::fabric::faults::{FaultPart, FaultState, HostFaults};
use crate::fabric::link::{LinkDirection, Tally, arrival_at};
use crate::packet::{Packet, PacketKind};
use crate::pcie::PcieLink;
use bevy_ecs::prelude::*;
use engine::prelude::*;

/// Host `h`'s port: row `h` of the `Store<HostPort>` the fabric builds, tied to the host's
/// entity. The NIC's handler holds the store while events run (`engine::store::Held`): the
/// fabric never touches a host's port then.
#[derive(Debug)]
pub struct HostPort {
    /// The host's PCIe link between its memory and its NIC.
    pub pcie: PcieLink,
    /// The direction the host sends on; put every frame on it with `launch_from_host`.
    pub wire: LinkDirection,
}

/// The contract's arrival step: a NIC's handler of `NicContract::arrive` passes each event to
/// `accept`, which takes the packet from its link direction's channel and says which host it
/// reached. It counts the data packets delivered (the run's conservation check) and applies
/// the faults injected on links into hosts, so every NIC gets both without knowing of them.
pub struct HostIngress {
    channel: ChannelKey<Packet>,
    delivered: [Tally; 8],
    /// Faults on links into hosts; `None` without (one predictable branch per arrival).
    faults: Option<Box<FaultState>>,
}

impl HostIngress {
    /// Built by the NIC's handler at its first event, once the fabric is built.
    pub fn new(world: &mut World) -> Self {
        HostIngress {
            channel: world.resource::<FabricKinds>().packet,
            delivered: Default::default(),
            faults: world.remove_resource::<HostFaults>().and_then(|f| f.0).map(Box::new),
        }
    }

    /// Warming an arrival `ahead` events before it (`engine::dispatch::Handler::prefetch`): the
    /// link direction's channel (5 and more), then the channel's head (4); returns the host the
    /// packet reaches, and from 4 down its packet, for the NIC's own warming.
    #[inline]
    pub fn warm<'q>(&self, q: &'q EventQueue, ev: &SimEvent, ahead: usize) -> Option<(u32, Option<&'q Packet>)> {
        if ahead >= 5 {
            q.prefetch_channel(self.channel, ev.target);
            return None;
        }
        let host = arrival_at(ev.data).0;
        if ahead == 4 {
            q.warm_channel(self.channel, ev.target);
            return Some((host, None));
        }
        Some((host, q.channel_head(self.channel, ev.target)))
    }

    /// The packet an `arrive` event announces and the host it reached; `None` when an injected
    /// fault lost it (counted).
    #[inline]
    pub fn accept(&mut self, q: &mut EventQueue, ev: &SimEvent) -> Option<(u32, Packet)> {
        if let Some(f) = self.faults.as_deref_mut()
            && f.drop_head(q, self.channel, ev.target)
        {
            return None;
        }
        let pkt = q.receive(self.channel, ev.target);
        if pkt.kind == PacketKind::Data {
            self.delivered[(pkt.class & 7) as usize].add(pkt.bytes as u64);
        }
        Some((arrival_at(ev.data).0, pkt))
    }

    /// Publishes the counts (call it from the handler's `pause`).
    pub fn publish(&self, world: &mut World) {
        world.insert_resource(Delivered(self.delivered));
        if let Some(f) = &self.faults {
            f.publish(world, FaultPart::Hosts);
        }
    }
}
