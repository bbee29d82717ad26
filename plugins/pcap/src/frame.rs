//! A packet descriptor as the bytes of its frame. The models keep what forwarding and the
//! transport need, not every header field, so a few fields are derived here (and documented in
//! the crate's README): the UDP source port from the flow hash, a WRITE FIRST's RETH from the
//! message length the NIC puts in `aux`, CM transaction ids from the queue pair numbers.

use models::Packet;
use models::packet::{PacketKind, ecn};
use models::wire::frames::{
    AckFrameSpec, CmFrameSpec, CmMessage, CnpFrameSpec, RoceFrameSpec, cm_frame, cnp_frame, pfc_frame, roce_ack_frame,
    roce_write_frame,
};
use models::wire::{Aeth, Ecn, Opcode, Reth};

/// The pause time a PAUSE frame carries, in quanta: the most there is, as the models' PAUSE holds
/// until a RESUME (quanta 0) lifts it.
pub const PAUSE_QUANTA: u16 = 0xFFFF;

/// Added to the model's queue pair numbers in a capture: the model numbers queue pairs from 0, but
/// on the wire QP0 and QP1 are the subnet manager's and the GSI's, whose payload Wireshark reads
/// as management datagrams. Model queue pair 5 is 0x000105 in a capture.
pub const CAPTURE_QPN_OFFSET: u32 = 0x100;

/// The R_Key every RETH in a capture carries: the model has no memory regions.
pub const CAPTURE_R_KEY: u32 = 0x1000;

/// The UDP source port of a packet's flow: RoCEv2 takes it from 49152-65535 per flow, and the
/// model keeps the flow's hash, so the port is the hash folded into that range (stable per flow).
pub fn udp_source_port(flow: u64) -> u16 {
    let folded = (flow ^ (flow >> 14) ^ (flow >> 28) ^ (flow >> 42)) as u16;
    0xC000 | (folded & 0x3FFF)
}

fn ecn_of(p: &Packet) -> Ecn {
    Ecn::from_bits(p.ecn)
}

/// The bytes of `p`'s frame; `None` for a frame no real port sends (a test kit's probe).
pub fn frame_bytes(p: &Packet) -> Option<Vec<u8>> {
    let port = udp_source_port(p.flow);
    match p.kind {
        PacketKind::Data => {
            let first = matches!(p.opcode, Opcode::RC_RDMA_WRITE_FIRST | Opcode::RC_RDMA_WRITE_ONLY);
            let spec = RoceFrameSpec {
                src_node: p.src,
                dst_node: p.dst,
                src_qp: 0,
                dst_qp: p.qp + CAPTURE_QPN_OFFSET,
                psn: p.psn,
                opcode: p.opcode,
                ack_req: p.ack_req,
                dscp: p.dscp(),
                ecn: ecn_of(p),
                udp_src_port: port,
                payload_len: p.payload as usize,
                reth: first.then_some(Reth {
                    virtual_address: 0,
                    r_key: CAPTURE_R_KEY,
                    dma_length: p.aux,
                }),
            };
            roce_write_frame(&spec).ok()
        }
        PacketKind::Ack | PacketKind::Nak => {
            // The model keeps no MSN; 0 is what a responder reports before any message completes.
            let aeth = if p.kind == PacketKind::Ack {
                Aeth::ack(0)
            } else {
                Aeth::nak_psn_sequence_error(0)
            };
            Some(roce_ack_frame(&AckFrameSpec {
                src_node: p.src,
                dst_node: p.dst,
                dst_qp: p.qp + CAPTURE_QPN_OFFSET,
                psn: p.psn,
                aeth,
                dscp: p.dscp(),
                ecn: ecn_of(p),
                udp_src_port: port,
            }))
        }
        PacketKind::Cnp => Some(cnp_frame(&CnpFrameSpec {
            src_node: p.src,
            dst_node: p.dst,
            dst_qp: p.qp + CAPTURE_QPN_OFFSET,
            dscp: p.dscp(),
            ecn: Ecn::from_bits(ecn::NOT_ECT),
            udp_src_port: port,
        })),
        PacketKind::ConnectRequest | PacketKind::ConnectResponse | PacketKind::ConnectAck => {
            let (message, initiator_qp) = match p.kind {
                PacketKind::ConnectRequest => (CmMessage::Request, p.aux),
                PacketKind::ConnectResponse => (CmMessage::Reply, p.qp),
                _ => (CmMessage::ReadyToUse, p.aux),
            };
            // One transaction per connection: the Initiator's node and queue pair name it.
            let initiator = if p.kind == PacketKind::ConnectResponse {
                p.dst
            } else {
                p.src
            };
            Some(cm_frame(&CmFrameSpec {
                src_node: p.src,
                dst_node: p.dst,
                message,
                transaction_id: (u64::from(initiator) << 32) | u64::from(initiator_qp + CAPTURE_QPN_OFFSET),
                dscp: p.dscp(),
                udp_src_port: port,
            }))
        }
        PacketKind::Pfc => {
            let quanta = if p.aux == 1 { PAUSE_QUANTA } else { 0 };
            pfc_frame(p.src, p.class, quanta).ok()
        }
        PacketKind::Probe => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use models::wire::{Bth, EthernetII, Icrc, Ipv4, PfcFrame, ROCE_DATA_HEADER_BYTES};

    fn data(opcode: u8, payload: u32) -> Packet {
        Packet {
            flow: 0xDEAD_BEEF_1234,
            src: 2,
            dst: 9,
            qp: 5,
            psn: 77,
            bytes: payload + 58,
            payload,
            aux: 250_000,
            kind: PacketKind::Data,
            opcode,
            class: 1,
            ecn: ecn::ECT0,
            ..Default::default()
        }
    }

    #[test]
    fn a_middle_frame_is_as_long_as_the_model_counts_it() {
        let f = frame_bytes(&data(Opcode::RC_RDMA_WRITE_MIDDLE, 4096)).unwrap();
        assert_eq!(f.len(), 4096 + ROCE_DATA_HEADER_BYTES);
        assert_eq!(Ipv4::parse(&f[14..]).unwrap().dscp, 8);
        let bth = Bth::parse(&f[42..]).unwrap();
        assert_eq!((bth.psn, bth.dest_qp), (77, 5 + CAPTURE_QPN_OFFSET));
        assert_eq!(Icrc::verify(&f[14..]), Ok(()));
    }

    #[test]
    fn a_first_frame_carries_the_message_length() {
        let f = frame_bytes(&data(Opcode::RC_RDMA_WRITE_FIRST, 4096)).unwrap();
        assert_eq!(f.len(), 4096 + ROCE_DATA_HEADER_BYTES + Reth::LEN);
        assert_eq!(Reth::parse(&f[54..]).unwrap().dma_length, 250_000);
    }

    #[test]
    fn pause_and_resume_quanta() {
        let pfc = |aux| Packet {
            kind: PacketKind::Pfc,
            src: 17,
            class: 1,
            aux,
            ..Default::default()
        };
        let pause = PfcFrame::parse(&frame_bytes(&pfc(1)).unwrap()).unwrap();
        assert_eq!((pause.class_enable, pause.quanta[1]), (0b10, PAUSE_QUANTA));
        assert_eq!(pause.src, EthernetII::host_mac(17));
        let resume = PfcFrame::parse(&frame_bytes(&pfc(0)).unwrap()).unwrap();
        assert_eq!(resume.quanta[1], 0);
    }

    #[test]
    fn ports_stay_in_the_dynamic_range() {
        for flow in [0, 1, u64::MAX, 0x1234_5678_9ABC_DEF0] {
            assert!(udp_source_port(flow) >= 0xC000);
        }
        assert_eq!(udp_source_port(7), udp_source_port(7));
    }
}
