//! Whole frames as bytes, for a pcap tracer: the models move packet descriptors and count bytes;
//! a tracer that wants a capture a person can open in Wireshark turns a descriptor into one of
//! these frames. Addresses come from node ids ([`EthernetII::host_mac`], [`Ipv4::host_address`]),
//! payloads are zero-filled, and every frame is as long as the model counts it, but for the RETH
//! a WRITE FIRST or ONLY frame carries when asked to (`RoceFrameSpec::reth`), as real ones do.

use super::{Aeth, Bth, Cnp, Deth, Ecn, EthernetII, Icrc, Ipv4, MAD_BYTES, PfcFrame, Reth, Udp, WireError};

/// What a RoCEv2 data packet's frame needs: the model's packet descriptor, flattened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoceFrameSpec {
    /// The sending node's id (its addresses derive from it).
    pub src_node: u32,
    /// The receiving node's id.
    pub dst_node: u32,
    /// The sender's queue pair. An RC data packet does not carry it (the responder knows its peer
    /// from the connection); [`RoceFrameSpec::ack`] uses it to address the answer.
    pub src_qp: u32,
    /// The destination queue pair.
    pub dst_qp: u32,
    /// Packet sequence number.
    pub psn: u32,
    /// BTH opcode, e.g. from [`Opcode::write_opcode`](super::Opcode::write_opcode).
    pub opcode: u8,
    /// The BTH AckReq bit.
    pub ack_req: bool,
    /// DSCP codepoint (the traffic class, as CSn).
    pub dscp: u8,
    /// ECN codepoint.
    pub ecn: Ecn,
    /// UDP source port (the flow's entropy for ECMP).
    pub udp_src_port: u16,
    /// Payload bytes (zero-filled in the frame).
    pub payload_len: usize,
    /// The RDMA extended header of a WRITE FIRST or ONLY packet, written between the BTH and the
    /// payload (16 bytes the model's byte counts leave out); `None` writes none.
    pub reth: Option<Reth>,
}

impl RoceFrameSpec {
    /// The acknowledgment of this packet: the reverse direction, to the sender's QP, with this
    /// packet's PSN, class and UDP source port.
    pub fn ack(&self, aeth: Aeth) -> AckFrameSpec {
        AckFrameSpec {
            src_node: self.dst_node,
            dst_node: self.src_node,
            dst_qp: self.src_qp,
            psn: self.psn,
            aeth,
            dscp: self.dscp,
            ecn: self.ecn,
            udp_src_port: self.udp_src_port,
        }
    }
}

/// What a RoCEv2 ACK (or NAK) frame needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckFrameSpec {
    /// The sending node's id (the data's receiver).
    pub src_node: u32,
    /// The receiving node's id (the data's sender).
    pub dst_node: u32,
    /// The destination queue pair.
    pub dst_qp: u32,
    /// The PSN acknowledged (for a NAK, the PSN the responder expects).
    pub psn: u32,
    /// The ACK extended header: ACK or NAK, and the MSN.
    pub aeth: Aeth,
    /// DSCP codepoint.
    pub dscp: u8,
    /// ECN codepoint.
    pub ecn: Ecn,
    /// UDP source port.
    pub udp_src_port: u16,
}

/// What a CNP frame needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CnpFrameSpec {
    /// The node that saw the ECN marks (the data's receiver).
    pub src_node: u32,
    /// The node to slow down (the data's sender).
    pub dst_node: u32,
    /// The destination queue pair (the sender's).
    pub dst_qp: u32,
    /// DSCP codepoint.
    pub dscp: u8,
    /// ECN codepoint.
    pub ecn: Ecn,
    /// UDP source port.
    pub udp_src_port: u16,
}

/// The addressing every RoCEv2 frame shares.
struct Route {
    src_node: u32,
    dst_node: u32,
    dscp: u8,
    ecn: Ecn,
    udp_src_port: u16,
}

/// Builds Ethernet, IPv4 and UDP around `transport_len` bytes that `write` fills, then the ICRC.
fn roce_frame(route: &Route, transport_len: usize, write: impl FnOnce(&mut [u8])) -> Result<Vec<u8>, WireError> {
    let ip_len = Ipv4::LEN + Udp::LEN + transport_len + Icrc::LEN;
    let total_len = u16::try_from(ip_len).map_err(|_| WireError::FrameTooLong { ip_len })?;
    let len = EthernetII::LEN + ip_len;
    let mut frame = vec![0u8; len];
    EthernetII {
        dst: EthernetII::host_mac(route.dst_node),
        src: EthernetII::host_mac(route.src_node),
        ethertype: EthernetII::ETHERTYPE_IPV4,
    }
    .emit(&mut frame);
    let ip = EthernetII::LEN;
    Ipv4 {
        dscp: route.dscp,
        ecn: route.ecn,
        total_len,
        // With DF set the identification serves no reassembly (RFC 6864), so it stays 0.
        identification: 0,
        dont_fragment: true,
        ttl: Ipv4::DEFAULT_TTL,
        src: Ipv4::host_address(route.src_node),
        dst: Ipv4::host_address(route.dst_node),
    }
    .emit(&mut frame[ip..]);
    let udp = ip + Ipv4::LEN;
    Udp {
        src_port: route.udp_src_port,
        dst_port: Udp::ROCEV2_PORT,
        length: total_len - Ipv4::LEN as u16,
    }
    .emit(&mut frame[udp..]);
    let transport = udp + Udp::LEN;
    let icrc_at = len - Icrc::LEN;
    write(&mut frame[transport..icrc_at]);
    Icrc::compute(&frame[ip..icrc_at])?.emit(&mut frame[icrc_at..]);
    Ok(frame)
}

/// A RoCEv2 data packet (RDMA WRITE or SEND) of
/// [`ROCE_DATA_HEADER_BYTES`](super::ROCE_DATA_HEADER_BYTES)` + payload_len` bytes, plus
/// [`Reth::LEN`] with `spec.reth`, and no BTH padding (so a payload that is not a multiple of 4 is
/// not byte-exact RoCEv2; every other field and the ICRC are).
///
/// Fails with [`WireError::FrameTooLong`] if the IP packet would pass 65,535 bytes.
pub fn roce_write_frame(spec: &RoceFrameSpec) -> Result<Vec<u8>, WireError> {
    let route = Route {
        src_node: spec.src_node,
        dst_node: spec.dst_node,
        dscp: spec.dscp,
        ecn: spec.ecn,
        udp_src_port: spec.udp_src_port,
    };
    let bth = Bth {
        ack_req: spec.ack_req,
        ..Bth::new(spec.opcode, spec.dst_qp, spec.psn)
    };
    let reth_len = spec.reth.map_or(0, |_| Reth::LEN);
    // The payload is already zero in the fresh frame.
    roce_frame(&route, Bth::LEN + reth_len + spec.payload_len, |b| {
        bth.emit(b);
        if let Some(reth) = spec.reth {
            reth.emit(&mut b[Bth::LEN..]);
        }
    })
}

/// A RoCEv2 ACK (or NAK) of exactly [`ROCE_ACK_BYTES`](super::ROCE_ACK_BYTES) bytes.
pub fn roce_ack_frame(spec: &AckFrameSpec) -> Vec<u8> {
    let route = Route {
        src_node: spec.src_node,
        dst_node: spec.dst_node,
        dscp: spec.dscp,
        ecn: spec.ecn,
        udp_src_port: spec.udp_src_port,
    };
    let bth = Bth::new(super::Opcode::RC_ACKNOWLEDGE, spec.dst_qp, spec.psn);
    roce_frame(&route, Bth::LEN + Aeth::LEN, |b| {
        bth.emit(b);
        spec.aeth.emit(&mut b[Bth::LEN..]);
    })
    .expect("a 62-byte frame fits IPv4 and has the IPv4 header the ICRC expects")
}

/// A RoCEv2 CNP of exactly [`CNP_BYTES`](super::CNP_BYTES) bytes.
pub fn cnp_frame(spec: &CnpFrameSpec) -> Vec<u8> {
    let route = Route {
        src_node: spec.src_node,
        dst_node: spec.dst_node,
        dscp: spec.dscp,
        ecn: spec.ecn,
        udp_src_port: spec.udp_src_port,
    };
    let cnp = Cnp::new(spec.dst_qp);
    roce_frame(&route, Cnp::LEN, |b| cnp.emit(b))
        .expect("a 74-byte frame fits IPv4 and has the IPv4 header the ICRC expects")
}

/// Which connection manager message a CM frame carries (its MAD's attribute).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmMessage {
    /// REQ, the Initiator's request.
    Request,
    /// REP, the Responder's reply.
    Reply,
    /// RTU, the Initiator's "ready to use".
    ReadyToUse,
}

impl CmMessage {
    /// The MAD attribute id of the message (IBA 12.6: REQ 0x0010, REP 0x0013, RTU 0x0014).
    pub fn attribute_id(self) -> u16 {
        match self {
            CmMessage::Request => 0x0010,
            CmMessage::Reply => 0x0013,
            CmMessage::ReadyToUse => 0x0014,
        }
    }
}

/// What a connection manager frame needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmFrameSpec {
    /// The sending node's id.
    pub src_node: u32,
    /// The receiving node's id.
    pub dst_node: u32,
    /// The message.
    pub message: CmMessage,
    /// The MAD's transaction id, which ties a REQ to its REP and RTU.
    pub transaction_id: u64,
    /// DSCP codepoint.
    pub dscp: u8,
    /// UDP source port.
    pub udp_src_port: u16,
}

/// A connection manager message of exactly [`CM_MESSAGE_BYTES`](super::CM_MESSAGE_BYTES) bytes: a
/// UD SEND ONLY from QP1 to QP1 (the GSI) carrying a 256-byte CM MAD whose common header names the
/// message; the message's own fields are zero, as the model keeps none of them.
pub fn cm_frame(spec: &CmFrameSpec) -> Vec<u8> {
    let route = Route {
        src_node: spec.src_node,
        dst_node: spec.dst_node,
        dscp: spec.dscp,
        ecn: Ecn::NotEct,
        udp_src_port: spec.udp_src_port,
    };
    let bth = Bth::new(super::Opcode::UD_SEND_ONLY, 1, 0);
    let deth = Deth {
        q_key: Deth::GSI_Q_KEY,
        src_qp: 1,
    };
    roce_frame(&route, Bth::LEN + Deth::LEN + MAD_BYTES, |b| {
        bth.emit(b);
        deth.emit(&mut b[Bth::LEN..]);
        let mad = &mut b[Bth::LEN + Deth::LEN..];
        // The MAD common header (IBA 13.4.3): base version 1, class CM (0x07) version 2, method
        // Send (0x03), status 0, class-specific 0, transaction id, attribute id, modifier 0.
        mad[0..4].copy_from_slice(&[1, 0x07, 2, 0x03]);
        mad[8..16].copy_from_slice(&spec.transaction_id.to_be_bytes());
        mad[16..18].copy_from_slice(&spec.message.attribute_id().to_be_bytes());
    })
    .expect("a 322-byte frame fits IPv4 and has the IPv4 header the ICRC expects")
}

/// A PFC frame of [`PFC_FRAME_BYTES`](super::PFC_FRAME_BYTES) bytes from `src_node`, pausing
/// `class` for `quanta` (0 resumes it). Fails with [`WireError::InvalidClass`] past class 7.
pub fn pfc_frame(src_node: u32, class: u8, quanta: u16) -> Result<Vec<u8>, WireError> {
    let frame = PfcFrame {
        src: EthernetII::host_mac(src_node),
        ..PfcFrame::pause(class, quanta)?
    };
    let mut bytes = vec![0u8; PfcFrame::LEN];
    frame.emit(&mut bytes);
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::icrc::tests::CAPTURED_CNP;
    use crate::wire::{CNP_BYTES, Opcode, PFC_FRAME_BYTES, ROCE_ACK_BYTES, ROCE_DATA_HEADER_BYTES};

    fn spec(payload_len: usize) -> RoceFrameSpec {
        RoceFrameSpec {
            src_node: 3,
            dst_node: 12,
            src_qp: 0x11,
            dst_qp: 0x22,
            psn: 1000,
            opcode: Opcode::RC_RDMA_WRITE_MIDDLE,
            ack_req: false,
            dscp: 8,
            ecn: Ecn::Ect0,
            udp_src_port: 0xC123,
            payload_len,
            reth: None,
        }
    }

    #[test]
    fn write_frame_is_58_bytes_plus_payload_and_parses_back() {
        for payload in [0, 144, 4096] {
            let f = roce_write_frame(&spec(payload)).unwrap();
            assert_eq!(f.len(), ROCE_DATA_HEADER_BYTES + payload);
            let eth = EthernetII::parse(&f).unwrap();
            assert_eq!(eth.dst, EthernetII::host_mac(12));
            assert_eq!(eth.src, EthernetII::host_mac(3));
            assert_eq!(eth.ethertype, EthernetII::ETHERTYPE_IPV4);
            let ip = Ipv4::parse(&f[14..]).unwrap(); // verifies the header checksum
            assert_eq!(usize::from(ip.total_len), f.len() - 14);
            assert_eq!((ip.src, ip.dst), ([10, 0, 0, 3], [10, 0, 0, 12]));
            assert_eq!((ip.dscp, ip.ecn), (8, Ecn::Ect0));
            let udp = Udp::parse(&f[34..]).unwrap();
            assert_eq!(udp.dst_port, 4791);
            assert_eq!(usize::from(udp.length), f.len() - 34);
            let bth = Bth::parse(&f[42..]).unwrap();
            assert_eq!(bth, Bth::new(Opcode::RC_RDMA_WRITE_MIDDLE, 0x22, 1000));
            assert!(f[54..f.len() - 4].iter().all(|&b| b == 0));
            assert_eq!(Icrc::verify(&f[14..]), Ok(()));
        }
    }

    #[test]
    fn write_frame_carries_ack_req() {
        let s = RoceFrameSpec {
            ack_req: true,
            opcode: Opcode::RC_RDMA_WRITE_LAST,
            ..spec(144)
        };
        let bth = Bth::parse(&roce_write_frame(&s).unwrap()[42..]).unwrap();
        assert!(bth.ack_req);
        assert_eq!(bth.opcode, Opcode::RC_RDMA_WRITE_LAST);
    }

    #[test]
    fn write_first_carries_its_reth_before_the_payload() {
        let reth = Reth {
            virtual_address: 0x1000,
            r_key: 0x77,
            dma_length: 250_000,
        };
        let s = RoceFrameSpec {
            opcode: Opcode::RC_RDMA_WRITE_FIRST,
            reth: Some(reth),
            ..spec(4096)
        };
        let f = roce_write_frame(&s).unwrap();
        assert_eq!(f.len(), ROCE_DATA_HEADER_BYTES + Reth::LEN + 4096);
        assert_eq!(Reth::parse(&f[54..]), Ok(reth));
        assert!(f[70..f.len() - 4].iter().all(|&b| b == 0));
        assert_eq!(Icrc::verify(&f[14..]), Ok(()));
    }

    #[test]
    fn cm_frame_is_a_ud_send_to_the_gsi() {
        use crate::wire::CM_MESSAGE_BYTES;
        let f = cm_frame(&CmFrameSpec {
            src_node: 3,
            dst_node: 12,
            message: CmMessage::Reply,
            transaction_id: 42,
            dscp: 8,
            udp_src_port: 0xC000,
        });
        assert_eq!(f.len(), CM_MESSAGE_BYTES);
        let bth = Bth::parse(&f[42..]).unwrap();
        assert_eq!((bth.opcode, bth.dest_qp), (Opcode::UD_SEND_ONLY, 1));
        assert_eq!(Deth::parse(&f[54..]).unwrap().q_key, Deth::GSI_Q_KEY);
        // MAD: class CM, attribute REP.
        assert_eq!(f[62 + 1], 0x07);
        assert_eq!(u16::from_be_bytes([f[62 + 16], f[62 + 17]]), 0x0013);
        assert_eq!(Icrc::verify(&f[14..]), Ok(()));
    }

    #[test]
    fn a_payload_past_ipv4s_limit_is_an_error() {
        // IP packet = 20 + 8 + 12 + payload + 4; 65,535 is the largest total length.
        assert!(roce_write_frame(&spec(65_535 - 44)).is_ok());
        assert_eq!(
            roce_write_frame(&spec(65_535 - 43)),
            Err(WireError::FrameTooLong { ip_len: 65_536 })
        );
    }

    #[test]
    fn ack_frame_answers_the_data_packet() {
        let f = roce_ack_frame(&spec(4096).ack(Aeth::ack(7)));
        assert_eq!(f.len(), ROCE_ACK_BYTES);
        let ip = Ipv4::parse(&f[14..]).unwrap();
        assert_eq!((ip.src, ip.dst), ([10, 0, 0, 12], [10, 0, 0, 3]));
        let bth = Bth::parse(&f[42..]).unwrap();
        assert_eq!(bth.opcode, Opcode::RC_ACKNOWLEDGE);
        assert_eq!((bth.dest_qp, bth.psn), (0x11, 1000));
        assert_eq!(Aeth::parse(&f[54..]), Ok(Aeth::ack(7)));
        assert_eq!(Icrc::verify(&f[14..]), Ok(()));
    }

    #[test]
    fn cnp_frame_matches_a_hardware_cnp() {
        // The captured CNP went from 10.0.17.1 to 10.0.18.1, i.e. nodes 0x1101 and 0x1201.
        let f = cnp_frame(&CnpFrameSpec {
            src_node: 0x1101,
            dst_node: 0x1201,
            dst_qp: 0x118,
            dscp: 48,
            ecn: Ecn::Ect0,
            udp_src_port: 0,
        });
        assert_eq!(f.len(), CNP_BYTES);
        // UDP, BTH and reserved bytes are identical; the MACs and the IPv4 identification (and
        // so the IPv4 checksum and the ICRC) differ from the capture's.
        assert_eq!(f[34..70], CAPTURED_CNP[34..70]);
        let ours = Ipv4::parse(&f[14..]).unwrap();
        let theirs = Ipv4::parse(&CAPTURED_CNP[14..]).unwrap();
        assert_eq!(
            ours,
            Ipv4 {
                identification: 0,
                ..theirs
            }
        );
        assert_eq!(Icrc::verify(&f[14..]), Ok(()));
    }

    #[test]
    fn pfc_frame_from_a_node() {
        let f = pfc_frame(9, 1, 0xFFFF).unwrap();
        assert_eq!(f.len(), PFC_FRAME_BYTES);
        let pfc = PfcFrame::parse(&f).unwrap();
        assert_eq!(pfc.src, EthernetII::host_mac(9));
        assert_eq!(pfc.class_enable, 0b10);
        assert_eq!(pfc.quanta[1], 0xFFFF);
        assert_eq!(pfc_frame(9, 9, 0), Err(WireError::InvalidClass { class: 9 }));
    }
}
