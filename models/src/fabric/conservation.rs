//! Every data packet accounted for: what the hosts sent, per traffic class, is what reached a
//! host's NIC, plus what the fabric dropped (by cause), plus what is still on a link or in a
//! switch queue when the run stops. The fabric counts as packets move (one add per hop, one per
//! delivery, drops off the hot path) and checks the balance at the end of every run
//! (`check_conservation`, in the `Finish` phase); a run whose balance fails, or that dropped a
//! lossless class for any reason but exceeded headroom, is a bug the summary reports (exit 1).

use super::Fabric;
use super::link::Tally;
use crate::packet::{Packet, PacketKind};
use crate::switch::Switches;
use bevy_ecs::prelude::*;
use engine::prelude::*;
use serde::Serialize;

/// Why the fabric dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// A lossy class's egress queue limit or the lossy share of the buffer was full.
    LossyLimit = 0,
    /// A lossless class's ingress counter passed XOFF + headroom, or the buffer was full: PFC
    /// could not hold the sender back (the headroom is too small for the link's delay).
    Headroom = 1,
    /// No route to the destination.
    NoRoute = 2,
    /// A fault the scenario injected (a link down, a loss rate).
    Fault = 3,
}

impl DropCause {
    /// The causes a switch counts (all but injected faults).
    pub const SWITCH: usize = 3;
}

/// Data packets delivered to hosts' NICs, per class: counted by the fabric's handler, published
/// here whenever the event loop pauses.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub struct Delivered(pub [Tally; 8]);

/// Data packets dropped by injected faults, per class: the fault injector publishes them here
/// whenever the event loop pauses.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub struct FaultDrops(pub [Tally; 8]);

/// One traffic class's balance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ClassBalance {
    /// The traffic class.
    pub class: u8,
    /// Whether PFC protects it (its drops are then violations, but for headroom).
    pub lossless: bool,
    /// Data the hosts' NICs put on the wire.
    pub sent: Tally,
    /// Data delivered to hosts.
    pub delivered: Tally,
    /// Dropped at a switch over the lossy limit.
    pub dropped_lossy_limit: Tally,
    /// Dropped at a switch past the PFC headroom.
    pub dropped_headroom: Tally,
    /// Dropped at a switch with no route.
    pub dropped_no_route: Tally,
    /// Lost to injected faults.
    pub dropped_fault: Tally,
    /// Still in queues or on links at the end.
    pub in_flight: Tally,
}

impl std::ops::AddAssign<&ClassBalance> for ClassBalance {
    /// Adds another world's figures for the same class (the shards of one run).
    fn add_assign(&mut self, o: &ClassBalance) {
        self.lossless = o.lossless;
        self.sent += o.sent;
        self.delivered += o.delivered;
        self.dropped_lossy_limit += o.dropped_lossy_limit;
        self.dropped_headroom += o.dropped_headroom;
        self.dropped_no_route += o.dropped_no_route;
        self.dropped_fault += o.dropped_fault;
        self.in_flight += o.in_flight;
    }
}

impl ClassBalance {
    /// Every drop, whatever its cause.
    pub fn dropped(&self) -> Tally {
        let mut d = self.dropped_lossy_limit;
        d += self.dropped_headroom;
        d += self.dropped_no_route;
        d += self.dropped_fault;
        d
    }
    /// delivered + dropped + in flight, to compare with `sent`.
    pub fn accounted(&self) -> Tally {
        let mut a = self.delivered;
        a += self.dropped();
        a += self.in_flight;
        a
    }
}

/// The run's conservation figures and the verdict.
#[derive(Resource, Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct Conservation {
    /// Every class that carried data, in class order.
    pub classes: Vec<ClassBalance>,
    /// PFC frames the switches sent.
    pub switch_pfc_pause_sent: u64,
    /// PFC resume frames the switches sent.
    pub switch_pfc_resume_sent: u64,
    /// What is wrong, one line each; empty when the balance holds.
    pub violations: Vec<String>,
    /// Lossless classes that lost packets to exceeded headroom: reported, not a violation (the
    /// switch's settings, not the simulator, are at fault).
    pub warnings: Vec<String>,
}

impl Conservation {
    /// Whether the balance holds (no violations).
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
    }
    /// Totals over classes: (sent, delivered, dropped, in flight).
    pub fn totals(&self) -> [Tally; 4] {
        let mut t = [Tally::default(); 4];
        for c in &self.classes {
            t[0] += c.sent;
            t[1] += c.delivered;
            t[2] += c.dropped();
            t[3] += c.in_flight;
        }
        t
    }
}

/// The balance now, from the world between segments (switches and NICs back in it). In a shard,
/// the packets other shards sent it count as sent, and those it shipped to them as in flight, so
/// that its own balance holds.
pub fn measure(world: &World) -> Conservation {
    measure_with(world, true)
}

/// The figures of this world alone: a shard's add up with the other shards' to the whole run's
/// (what the beacon's columns show).
pub fn measure_own(world: &World) -> Conservation {
    measure_with(world, false)
}

fn measure_with(world: &World, fold_crossed: bool) -> Conservation {
    let Some(fabric) = world.get_resource::<Fabric>() else {
        return Conservation::default();
    };
    let fabric = &fabric.0;
    let lossless = world.get_resource::<Switches>().map_or([false; 8], |s| s.lossless);
    let mut bal: [ClassBalance; 8] = std::array::from_fn(|c| ClassBalance {
        class: c as u8,
        lossless: lossless[c],
        ..Default::default()
    });
    if let Some(ports) = world.get_resource::<engine::store::Store<crate::nic::HostPort>>() {
        for p in ports.rows() {
            for (b, t) in bal.iter_mut().zip(p.wire.data_by_class) {
                b.sent += t;
            }
        }
    }
    let delivered = world.get_resource::<Delivered>().copied().unwrap_or_default();
    let faults = world.get_resource::<FaultDrops>().copied().unwrap_or_default();
    // A shard: what other shards sent it counts as sent here, what it shipped as in flight.
    let crossed = world
        .get_resource::<crate::shard::port::CrossedPackets>()
        .filter(|_| fold_crossed)
        .map(|c| c.get());
    for (c, b) in bal.iter_mut().enumerate() {
        b.delivered = delivered.0[c];
        b.dropped_fault = faults.0[c];
        if let Some(x) = &crossed {
            b.sent += x.received[c];
            b.in_flight += x.out[c];
        }
    }
    let in_flight = |b: &mut [ClassBalance; 8], p: &Packet| {
        if p.kind == PacketKind::Data {
            b[(p.class & 7) as usize].in_flight.add(p.bytes as u64);
        }
    };
    let (mut pause, mut resume) = (0, 0);
    for (_, sw) in Switches::counters(world) {
        for (c, b) in bal.iter_mut().enumerate() {
            b.dropped_lossy_limit += sw.data_drops[DropCause::LossyLimit as usize][c];
            b.dropped_headroom += sw.data_drops[DropCause::Headroom as usize][c];
            b.dropped_no_route += sw.data_drops[DropCause::NoRoute as usize][c];
        }
        pause += sw.pfc_pause_sent;
        resume += sw.pfc_resume_sent;
    }
    Switches::for_each_queued(world, &mut |p| in_flight(&mut bal, p));
    if let Some(q) = world.get_resource::<EventQueue>() {
        for d in 0..fabric.dir_to.len() as u32 {
            for p in q.channel_values(fabric.kinds.packet, d) {
                in_flight(&mut bal, p);
            }
        }
    }
    judge(bal, pause, resume)
}

/// The verdict on each class's balance.
pub fn judge(bal: [ClassBalance; 8], pause: u64, resume: u64) -> Conservation {
    let mut out = Conservation {
        switch_pfc_pause_sent: pause,
        switch_pfc_resume_sent: resume,
        ..Default::default()
    };
    for b in bal {
        if b.sent == Tally::default() && b.accounted() == Tally::default() {
            continue;
        }
        let acc = b.accounted();
        if b.sent != acc {
            out.violations.push(format!(
                "class {}: sent {} packets ({} B) but delivered {} + dropped {} + in flight {} = {} packets ({} B)",
                b.class,
                b.sent.packets,
                b.sent.bytes,
                b.delivered.packets,
                b.dropped().packets,
                b.in_flight.packets,
                acc.packets,
                acc.bytes
            ));
        }
        if b.lossless {
            let lost = b.dropped_lossy_limit.packets + b.dropped_no_route.packets;
            if lost > 0 {
                out.violations.push(format!(
                    "class {} is lossless but {} data packets were dropped ({} for a lossy limit, {} for no route)",
                    b.class, lost, b.dropped_lossy_limit.packets, b.dropped_no_route.packets
                ));
            }
            if b.dropped_headroom.packets > 0 {
                out.warnings.push(format!(
                    "class {} is lossless but {} data packets exceeded a switch's PFC headroom \
                     (PfcHeadroom is too small for the links' delay)",
                    b.class, b.dropped_headroom.packets
                ));
            }
        }
        out.classes.push(b);
    }
    out
}

/// `Finish`: the end-of-run balance, as a resource for the summary and the manifest.
pub fn check_conservation(world: &mut World) {
    let c = measure(world);
    world.insert_resource(c);
}

/// Beacon columns: the running balance of data packets, summed over classes.
pub fn register_beacon_columns(app: &mut App) {
    app.add_beacon_column("data_sent", |w| measure_own(w).totals()[0].packets);
    app.add_beacon_column("data_delivered", |w| measure_own(w).totals()[1].packets);
    app.add_beacon_column("data_dropped", |w| measure_own(w).totals()[2].packets);
    app.add_beacon_column("data_in_flight", |w| measure_own(w).totals()[3].packets);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(packets: u64, bytes: u64) -> Tally {
        Tally { packets, bytes }
    }

    fn balances() -> [ClassBalance; 8] {
        let mut b: [ClassBalance; 8] = std::array::from_fn(|c| ClassBalance {
            class: c as u8,
            lossless: c == 0,
            ..Default::default()
        });
        // Class 0 (lossless): 10 sent, 7 delivered, 3 on the wire. Class 1 (lossy): 5 sent, 2
        // delivered, 2 dropped at a full queue, 1 lost to an injected fault.
        b[0].sent = t(10, 41_540);
        b[0].delivered = t(7, 29_078);
        b[0].in_flight = t(3, 12_462);
        b[1].sent = t(5, 500);
        b[1].delivered = t(2, 200);
        b[1].dropped_lossy_limit = t(2, 200);
        b[1].dropped_fault = t(1, 100);
        b
    }

    #[test]
    fn a_balance_that_adds_up_holds_and_lists_only_classes_with_traffic() {
        let c = judge(balances(), 4, 3);
        assert!(c.ok(), "{:?}", c.violations);
        assert!(c.warnings.is_empty());
        assert_eq!(c.classes.iter().map(|b| b.class).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(c.totals(), [t(15, 42_040), t(9, 29_278), t(3, 300), t(3, 12_462)]);
    }

    #[test]
    fn a_packet_unaccounted_for_is_a_violation_in_packets_or_bytes() {
        let mut b = balances();
        b[0].delivered = t(6, 29_078);
        assert_eq!(judge(b, 0, 0).violations.len(), 1);
        let mut b = balances();
        b[1].delivered = t(2, 199);
        let c = judge(b, 0, 0);
        assert!(
            c.violations[0].starts_with("class 1: sent 5 packets (500 B)"),
            "{:?}",
            c.violations
        );
    }

    #[test]
    fn a_lossless_class_may_lose_only_to_exceeded_headroom_which_is_a_warning() {
        let mut b = balances();
        b[0].in_flight = t(2, 8_308);
        b[0].dropped_headroom = t(1, 4_154);
        let c = judge(b, 0, 0);
        assert!(c.ok(), "{:?}", c.violations);
        assert_eq!(c.warnings.len(), 1);
        let mut b = balances();
        b[0].in_flight = t(2, 8_308);
        b[0].dropped_no_route = t(1, 4_154);
        let c = judge(b, 0, 0);
        assert!(c.violations[0].contains("lossless"), "{:?}", c.violations);
    }
}
