//! The InfiniBand transport headers RoCEv2 carries over UDP: the base transport header (BTH) every
//! packet starts with, the RDMA extended header (RETH) of a WRITE's first packet, the ACK extended
//! header (AETH) of an acknowledgment and the datagram extended header (DETH) of a UD message
//! (the connection manager's). Layouts follow the IBA specification, volume 1, chapter 9.

use super::{WireError, check_len, read_u24, write_u24};

/// BTH opcodes the model uses (IBA table 35), and the opcode sequence of an RDMA WRITE.
///
/// The top three bits name the transport (000 RC, 011 UD, 100 the RoCEv2 CNP), the low five the
/// operation.
#[derive(Debug, Clone, Copy)]
pub struct Opcode;

impl Opcode {
    /// RC SEND Only.
    pub const RC_SEND_ONLY: u8 = 0x04;
    /// RC RDMA WRITE First.
    pub const RC_RDMA_WRITE_FIRST: u8 = 0x06;
    /// RC RDMA WRITE Middle.
    pub const RC_RDMA_WRITE_MIDDLE: u8 = 0x07;
    /// RC RDMA WRITE Last.
    pub const RC_RDMA_WRITE_LAST: u8 = 0x08;
    /// RC RDMA WRITE Only.
    pub const RC_RDMA_WRITE_ONLY: u8 = 0x0A;
    /// RC Acknowledge (ACK or NAK, by the AETH).
    pub const RC_ACKNOWLEDGE: u8 = 0x11;
    /// UD SEND Only (connection manager datagrams).
    pub const UD_SEND_ONLY: u8 = 0x64;
    /// RoCEv2 congestion notification packet (IBA annex A17).
    pub const CNP: u8 = 0x81;

    /// The opcode of packet `packet_index` (from 0) of an RDMA WRITE cut into `packet_count`
    /// packets: ONLY for a one-packet message, otherwise FIRST, then MIDDLE, then LAST.
    ///
    /// An index at or past the last packet gets LAST, and a count of 0 is read as 1 (ONLY), so
    /// the function is total; callers never ask for either.
    pub fn write_opcode(packet_index: u64, packet_count: u64) -> u8 {
        if packet_count <= 1 {
            Self::RC_RDMA_WRITE_ONLY
        } else if packet_index == 0 {
            Self::RC_RDMA_WRITE_FIRST
        } else if packet_index + 1 < packet_count {
            Self::RC_RDMA_WRITE_MIDDLE
        } else {
            Self::RC_RDMA_WRITE_LAST
        }
    }
}

/// The base transport header (12 bytes).
///
/// Fields wider on the struct than on the wire (pad count 2 bits, transport version 4 bits,
/// destination QP and PSN 24 bits) keep only their low bits on emit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Bth {
    /// The operation (`Opcode`).
    pub opcode: u8,
    /// The solicited event bit.
    pub solicited_event: bool,
    /// The migration request bit.
    pub migreq: bool,
    /// Bytes of padding that round the payload up to a multiple of 4 (0 to 3).
    pub pad_count: u8,
    /// Transport header version, 4 bits.
    pub transport_version: u8,
    /// Partition key.
    pub partition_key: u16,
    /// Forward ECN: congestion seen on the way to this packet's destination.
    pub fecn: bool,
    /// Backward ECN: set in a CNP, telling the sender to slow down.
    pub becn: bool,
    /// Destination queue pair, 24 bits.
    pub dest_qp: u32,
    /// Asks the responder to acknowledge this packet.
    pub ack_req: bool,
    /// Packet sequence number, 24 bits.
    pub psn: u32,
}

impl Bth {
    /// Header size, in bytes.
    pub const LEN: usize = 12;
    /// The default (full-membership) partition key.
    pub const DEFAULT_PARTITION_KEY: u16 = 0xFFFF;

    /// A BTH with the given opcode, destination QP and PSN, the default partition key and every
    /// flag clear.
    pub fn new(opcode: u8, dest_qp: u32, psn: u32) -> Self {
        Self {
            opcode,
            solicited_event: false,
            migreq: false,
            pad_count: 0,
            transport_version: 0,
            partition_key: Self::DEFAULT_PARTITION_KEY,
            fecn: false,
            becn: false,
            dest_qp,
            ack_req: false,
            psn,
        }
    }

    /// Writes the header into the first [`Self::LEN`] bytes of `buf`; reserved bits are 0.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::LEN`] (a bug in the caller's buffer arithmetic).
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0] = self.opcode;
        buf[1] = (u8::from(self.solicited_event) << 7)
            | (u8::from(self.migreq) << 6)
            | ((self.pad_count & 0b11) << 4)
            | (self.transport_version & 0x0F);
        buf[2..4].copy_from_slice(&self.partition_key.to_be_bytes());
        buf[4] = (u8::from(self.fecn) << 7) | (u8::from(self.becn) << 6);
        write_u24(&mut buf[5..8], self.dest_qp);
        buf[8] = u8::from(self.ack_req) << 7;
        write_u24(&mut buf[9..12], self.psn);
    }

    /// Reads a header from the first [`Self::LEN`] bytes of `buf`. Reserved bits are ignored, as
    /// the IBA asks of a receiver.
    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        check_len(buf, Self::LEN, "BTH")?;
        Ok(Self {
            opcode: buf[0],
            solicited_event: buf[1] & 0x80 != 0,
            migreq: buf[1] & 0x40 != 0,
            pad_count: (buf[1] >> 4) & 0b11,
            transport_version: buf[1] & 0x0F,
            partition_key: u16::from_be_bytes([buf[2], buf[3]]),
            fecn: buf[4] & 0x80 != 0,
            becn: buf[4] & 0x40 != 0,
            dest_qp: read_u24(&buf[5..8]),
            ack_req: buf[8] & 0x80 != 0,
            psn: read_u24(&buf[9..12]),
        })
    }
}

/// The RDMA extended header of a WRITE FIRST or ONLY packet (16 bytes): where the message goes in
/// the responder's memory. The model's byte counts leave it out (see
/// [`ROCE_DATA_HEADER_BYTES`](super::ROCE_DATA_HEADER_BYTES)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reth {
    /// Where the message starts in the responder's memory.
    pub virtual_address: u64,
    /// The memory region's remote key.
    pub r_key: u32,
    /// Length of the whole message, in bytes.
    pub dma_length: u32,
}

impl Reth {
    /// Header size, in bytes.
    pub const LEN: usize = 16;

    /// Writes the header into the first [`Self::LEN`] bytes of `buf`.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::LEN`] (a bug in the caller's buffer arithmetic).
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0..8].copy_from_slice(&self.virtual_address.to_be_bytes());
        buf[8..12].copy_from_slice(&self.r_key.to_be_bytes());
        buf[12..16].copy_from_slice(&self.dma_length.to_be_bytes());
    }

    /// Reads a header from the first [`Self::LEN`] bytes of `buf`.
    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        check_len(buf, Self::LEN, "RETH")?;
        let mut va = [0u8; 8];
        va.copy_from_slice(&buf[0..8]);
        Ok(Self {
            virtual_address: u64::from_be_bytes(va),
            r_key: u32::from_be_bytes([buf[8], buf[9], buf[10], buf[11]]),
            dma_length: u32::from_be_bytes([buf[12], buf[13], buf[14], buf[15]]),
        })
    }
}

/// What an AETH syndrome says (IBA 9.7.5.1.1): bits 6-5 give the kind, bits 4-0 its argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AethKind {
    /// Positive acknowledgment, with the end-to-end credit count (31 means "no credit
    /// information").
    Ack {
        /// The credit count, 5 bits.
        credits: u8,
    },
    /// Receiver not ready: retry after the encoded timer.
    RnrNak {
        /// The encoded timer, 5 bits.
        timer: u8,
    },
    /// Negative acknowledgment; code 0 is a PSN sequence error (go back N).
    Nak {
        /// The NAK code, 5 bits.
        code: u8,
    },
    /// The reserved kind `10`.
    Reserved,
}

/// The ACK extended header (4 bytes): a syndrome and the message sequence number, the count of
/// messages the responder has completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Aeth {
    /// The syndrome byte (`AethKind` reads it).
    pub syndrome: u8,
    /// Message sequence number, 24 bits.
    pub msn: u32,
}

impl Aeth {
    /// Header size, in bytes.
    pub const LEN: usize = 4;
    /// ACK with credit count 31, "invalid": the model has no end-to-end credits, so its
    /// responder sends what a responder without them sends.
    pub const SYNDROME_ACK: u8 = 0b000_11111;
    /// NAK, PSN sequence error: the requester goes back to the PSN this NAK carries.
    pub const SYNDROME_NAK_PSN_SEQUENCE_ERROR: u8 = 0b011_00000;
    /// RNR NAK; the low five bits hold the timer.
    pub const SYNDROME_RNR_NAK: u8 = 0b001_00000;

    /// A positive acknowledgment up to message `msn`.
    pub fn ack(msn: u32) -> Self {
        Self {
            syndrome: Self::SYNDROME_ACK,
            msn,
        }
    }

    /// A NAK for a PSN sequence error (a packet arrived out of order).
    pub fn nak_psn_sequence_error(msn: u32) -> Self {
        Self {
            syndrome: Self::SYNDROME_NAK_PSN_SEQUENCE_ERROR,
            msn,
        }
    }

    /// A receiver-not-ready NAK with the 5-bit encoded `timer` (higher bits dropped).
    pub fn rnr_nak(msn: u32, timer: u8) -> Self {
        Self {
            syndrome: Self::SYNDROME_RNR_NAK | (timer & 0x1F),
            msn,
        }
    }

    /// Decodes the syndrome.
    pub fn kind(&self) -> AethKind {
        let arg = self.syndrome & 0x1F;
        match (self.syndrome >> 5) & 0b11 {
            0b00 => AethKind::Ack { credits: arg },
            0b01 => AethKind::RnrNak { timer: arg },
            0b11 => AethKind::Nak { code: arg },
            _ => AethKind::Reserved,
        }
    }

    /// Writes the header into the first [`Self::LEN`] bytes of `buf`.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::LEN`] (a bug in the caller's buffer arithmetic).
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0] = self.syndrome;
        write_u24(&mut buf[1..4], self.msn);
    }

    /// Reads a header from the first [`Self::LEN`] bytes of `buf`.
    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        check_len(buf, Self::LEN, "AETH")?;
        Ok(Self {
            syndrome: buf[0],
            msn: read_u24(&buf[1..4]),
        })
    }
}

/// The datagram extended header of a UD packet (8 bytes): the queue key and the sender's QP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Deth {
    /// The queue key.
    pub q_key: u32,
    /// Source queue pair, 24 bits.
    pub src_qp: u32,
}

impl Deth {
    /// Header size, in bytes.
    pub const LEN: usize = 8;
    /// The well-known Q_Key of the general services interface (QP1), which connection manager
    /// messages use.
    pub const GSI_Q_KEY: u32 = 0x8001_0000;

    /// Writes the header into the first [`Self::LEN`] bytes of `buf`.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::LEN`] (a bug in the caller's buffer arithmetic).
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0..4].copy_from_slice(&self.q_key.to_be_bytes());
        buf[4] = 0;
        write_u24(&mut buf[5..8], self.src_qp);
    }

    /// Reads a header from the first [`Self::LEN`] bytes of `buf`.
    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        check_len(buf, Self::LEN, "DETH")?;
        Ok(Self {
            q_key: u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]),
            src_qp: read_u24(&buf[5..8]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lengths() {
        assert_eq!(Bth::LEN, 12);
        assert_eq!(Reth::LEN, 8 + 4 + 4);
        assert_eq!(Aeth::LEN, 4);
        assert_eq!(Deth::LEN, 8);
    }

    #[test]
    fn bth_matches_hand_computed_bytes() {
        let bth = Bth {
            opcode: Opcode::RC_RDMA_WRITE_LAST,
            solicited_event: true,
            migreq: true,
            pad_count: 2,
            transport_version: 0,
            partition_key: 0xFFFF,
            fecn: true,
            becn: false,
            dest_qp: 0x00_1234,
            ack_req: true,
            psn: 0xAB_CDEF,
        };
        // byte 1: SE 1, M 1, pad 10, tver 0000 = 0b1110_0000 = 0xE0; byte 4: FECN = 0x80;
        // byte 8: AckReq = 0x80.
        let expected = [0x08, 0xE0, 0xFF, 0xFF, 0x80, 0x00, 0x12, 0x34, 0x80, 0xAB, 0xCD, 0xEF];
        let mut b = [0u8; Bth::LEN];
        bth.emit(&mut b);
        assert_eq!(b, expected);
        assert_eq!(Bth::parse(&b), Ok(bth));
    }

    #[test]
    fn bth_parses_a_captured_cnp_header() {
        // The BTH of a CNP captured on a ConnectX-4 Lx: opcode 0x81, P_Key 0xFFFF, BECN,
        // destination QP 0x118, PSN 0.
        let b = [0x81, 0x00, 0xFF, 0xFF, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00];
        let bth = Bth::parse(&b).unwrap();
        assert_eq!(bth.opcode, Opcode::CNP);
        assert!(bth.becn && !bth.fecn && !bth.ack_req);
        assert_eq!(bth.dest_qp, 0x118);
        assert_eq!(bth.psn, 0);
        let expected = Bth {
            becn: true,
            ..Bth::new(Opcode::CNP, 0x118, 0)
        };
        assert_eq!(bth, expected);
    }

    #[test]
    fn bth_ignores_reserved_bits_and_truncates_wide_fields() {
        let mut b = [0u8; Bth::LEN];
        Bth::new(Opcode::RC_ACKNOWLEDGE, 0xFF00_0001, 0x0100_0002).emit(&mut b);
        let parsed = Bth::parse(&b).unwrap();
        assert_eq!((parsed.dest_qp, parsed.psn), (1, 2));
        b[4] |= 0x3F;
        b[8] |= 0x7F;
        assert_eq!(Bth::parse(&b), Ok(parsed));
        assert!(matches!(Bth::parse(&b[..11]), Err(WireError::Truncated { .. })));
    }

    #[test]
    fn write_opcode_for_one_packet() {
        assert_eq!(Opcode::write_opcode(0, 1), Opcode::RC_RDMA_WRITE_ONLY);
        assert_eq!(Opcode::write_opcode(0, 0), Opcode::RC_RDMA_WRITE_ONLY);
    }

    #[test]
    fn write_opcode_for_62_packets() {
        // The spec's example: 250,000 bytes at MSS 4,096 is 62 packets.
        let ops: Vec<u8> = (0..62).map(|i| Opcode::write_opcode(i, 62)).collect();
        let count = |op| ops.iter().filter(|&&o| o == op).count();
        assert_eq!(ops[0], Opcode::RC_RDMA_WRITE_FIRST);
        assert_eq!(ops[61], Opcode::RC_RDMA_WRITE_LAST);
        assert_eq!(count(Opcode::RC_RDMA_WRITE_FIRST), 1);
        assert_eq!(count(Opcode::RC_RDMA_WRITE_MIDDLE), 60);
        assert_eq!(count(Opcode::RC_RDMA_WRITE_LAST), 1);
        assert_eq!(Opcode::write_opcode(99, 62), Opcode::RC_RDMA_WRITE_LAST);
        // Two packets: no MIDDLE.
        assert_eq!(Opcode::write_opcode(1, 2), Opcode::RC_RDMA_WRITE_LAST);
    }

    #[test]
    fn reth_round_trip() {
        let reth = Reth {
            virtual_address: 0x0123_4567_89AB_CDEF,
            r_key: 0xDEAD_BEEF,
            dma_length: 250_000,
        };
        let mut b = [0u8; Reth::LEN];
        reth.emit(&mut b);
        assert_eq!(&b[..8], &[0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF]);
        assert_eq!(&b[12..], &250_000u32.to_be_bytes());
        assert_eq!(Reth::parse(&b), Ok(reth));
    }

    #[test]
    fn aeth_constructors_and_round_trip() {
        assert_eq!(Aeth::ack(5).kind(), AethKind::Ack { credits: 31 });
        assert_eq!(Aeth::nak_psn_sequence_error(5).kind(), AethKind::Nak { code: 0 });
        assert_eq!(Aeth::rnr_nak(5, 0x3F).kind(), AethKind::RnrNak { timer: 0x1F });
        assert_eq!(Aeth { syndrome: 0x40, msn: 0 }.kind(), AethKind::Reserved);
        let aeth = Aeth::nak_psn_sequence_error(0x01_0203);
        let mut b = [0u8; Aeth::LEN];
        aeth.emit(&mut b);
        assert_eq!(b, [0x60, 0x01, 0x02, 0x03]);
        assert_eq!(Aeth::parse(&b), Ok(aeth));
    }

    #[test]
    fn deth_round_trip() {
        let deth = Deth {
            q_key: Deth::GSI_Q_KEY,
            src_qp: 1,
        };
        let mut b = [0xFFu8; Deth::LEN];
        deth.emit(&mut b);
        assert_eq!(b, [0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01]);
        assert_eq!(Deth::parse(&b), Ok(deth));
    }
}
