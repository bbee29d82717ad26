//! Packets: plain values carried by link events and held in queues, never entities (tens of
//! millions pass through a run). A packet carries what forwarding, PFC, ECN and the transport
//! need; its header bytes are in `bytes` (the wire size), and `wire` knows how to emit them.

use engine::SimTime;

/// What a frame is, as far as switches and NICs care.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
#[repr(u8)]
pub enum PacketKind {
    /// RDMA WRITE data (FIRST, MIDDLE, LAST or ONLY: see `opcode`). `aux` is the WQE's length in
    /// bytes (capped at 2^32 - 1, the RETH's DMA length), for tracers; 0 from a NIC that does not
    /// say.
    #[default]
    Data,
    /// A RoCE ACK (AETH syndrome ACK), cumulative up to `psn`.
    Ack,
    /// A RoCE NAK (PSN sequence error): resend from `psn`.
    Nak,
    /// Connection setup, step 1: the Initiator's request. `qp` is unused; `aux` is the
    /// Initiator's queue pair number.
    ConnectRequest,
    /// Step 2: the Responder's response; `qp` is the Initiator's QPN, `aux` the Responder's.
    ConnectResponse,
    /// Step 3: the Initiator's acknowledgment (ready to use); `qp` is the Responder's QPN.
    ConnectAck,
    /// An 802.1Qbb PFC frame: link-local, never forwarded. `class` is the class it pauses or
    /// resumes; `aux` is 1 for PAUSE, 0 for RESUME.
    Pfc,
    /// A test-kit frame (offered load in fabric tests).
    Probe,
    /// A RoCEv2 congestion notification packet (BTH opcode 0x81), from the NIC that received
    /// CE-marked data back to its sender; `qp` is the sender's queue pair (`models::cc`).
    Cnp,
}

impl PacketKind {
    /// Every kind, in discriminant order.
    pub const ALL: [PacketKind; 9] = [
        PacketKind::Data,
        PacketKind::Ack,
        PacketKind::Nak,
        PacketKind::ConnectRequest,
        PacketKind::ConnectResponse,
        PacketKind::ConnectAck,
        PacketKind::Pfc,
        PacketKind::Probe,
        PacketKind::Cnp,
    ];

    /// The kind whose discriminant (`kind as u8`) is `v`.
    pub fn from_u8(v: u8) -> Option<PacketKind> {
        Self::ALL.get(v as usize).copied()
    }
}

/// ECN codepoints in the IPv4 header.
pub mod ecn {
    /// Not ECN-capable.
    pub const NOT_ECT: u8 = 0;
    /// ECN-capable transport, codepoint 1.
    pub const ECT1: u8 = 1;
    /// ECN-capable transport, codepoint 0.
    pub const ECT0: u8 = 2;
    /// Congestion experienced: a switch marked it.
    pub const CE: u8 = 3;
}

/// One frame on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Packet {
    /// Hash of the flow's 5-tuple, for ECMP (`topology::routing::flow_hash`).
    pub flow: u64,
    /// When the sender put the first bit of this frame on its first wire.
    pub sent_at: SimTime,
    /// Source and destination hosts (node ids).
    pub src: u32,
    /// The destination host (node id).
    pub dst: u32,
    /// Destination queue pair number on the destination NIC.
    pub qp: u32,
    /// Packet sequence number (data), or the acknowledged / expected PSN (ACK, NAK).
    pub psn: u32,
    /// Bytes on the wire, headers included.
    pub bytes: u32,
    /// Payload bytes (RDMA data carried).
    pub payload: u32,
    /// Kind-specific word (see `PacketKind`).
    pub aux: u32,
    /// What the packet is.
    pub kind: PacketKind,
    /// BTH opcode (`wire::ib::opcode`).
    pub opcode: u8,
    /// Traffic class 0-7; the DSCP is CS(class), 8 x class.
    pub class: u8,
    /// ECN codepoint (`ecn::*`).
    pub ecn: u8,
    /// BTH AckReq bit.
    pub ack_req: bool,
    /// The packet's INT hop stack in the fabric's `IntTable` (`models::int`); 0 (every packet
    /// unless a controller asks for INT): none. Fits in what was padding: the packet's size and
    /// copy do not change.
    pub int: u32,
}

impl Packet {
    /// The DSCP codepoint: class n is sent as CSn.
    pub fn dscp(&self) -> u8 {
        self.class * 8
    }
    /// Class from a DSCP codepoint, as switches and receiving NICs take it.
    pub fn class_of_dscp(dscp: u8) -> u8 {
        (dscp / 8).min(7)
    }
    /// Whether a switch marked it CE.
    pub fn is_ce(&self) -> bool {
        self.ecn == ecn::CE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dscp_is_class_selector() {
        for class in 0..8u8 {
            let p = Packet {
                class,
                ..Default::default()
            };
            assert_eq!(p.dscp(), 8 * class);
            assert_eq!(Packet::class_of_dscp(p.dscp()), class);
        }
    }

    #[test]
    fn packets_stay_small() {
        // Queues hold millions of these; keep them within one cache line.
        assert!(std::mem::size_of::<Packet>() <= 64);
        assert_eq!(std::mem::size_of::<Packet>(), 56);
    }
}
