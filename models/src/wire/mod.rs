//! RoCEv2 wire formats, apart from any state (smoltcp style).
//!
//! Each header is a plain struct that knows its size (`LEN`), writes exactly that many bytes in
//! network byte order (`emit`) and reads them back (`parse`). Nothing here knows about queue pairs,
//! NICs or time: the models count bytes with the size constants below, and a tracer that wants real
//! bytes (a pcap capture) builds whole frames with [`frames`] and writes them with [`PcapWriter`].
//!
//! A RoCEv2 data packet on the wire, as the model counts it:
//!
//! ```text
//! | Ethernet 14 | IPv4 20 | UDP 8 | BTH 12 | payload | ICRC 4 |
//! ```
//!
//! The Ethernet FCS (4 bytes), preamble and inter-frame gap (20 bytes) are not part of any size
//! here, as in the spec's 58 header bytes per packet.
//!
//! ```
//! use models::wire::{Bth, Opcode, ROCE_DATA_HEADER_BYTES};
//!
//! let bth = Bth::new(Opcode::write_opcode(0, 62), 0x12, 7);
//! let mut bytes = [0u8; Bth::LEN];
//! bth.emit(&mut bytes);
//! assert_eq!(Bth::parse(&bytes), Ok(bth));
//! assert_eq!(ROCE_DATA_HEADER_BYTES, 58);
//! ```

mod cnp;
mod ethernet;
pub mod frames;
mod ib;
mod icrc;
mod ipv4;
mod pcap;
mod pfc;
mod udp;

pub use cnp::Cnp;
pub use ethernet::EthernetII;
pub use ib::{Aeth, AethKind, Bth, Deth, Opcode, Reth};
pub use icrc::{Icrc, crc32};
pub use ipv4::{Ecn, Ipv4};
pub use pcap::PcapWriter;
pub use pfc::PfcFrame;
pub use udp::Udp;

/// Header bytes the model counts per RoCEv2 data packet, in bytes: Ethernet 14 + IPv4 20 + UDP 8 +
/// BTH 12 + ICRC 4 = 58 (the spec's figure).
///
/// A real RDMA WRITE FIRST or ONLY packet also carries a 16-byte RETH (remote address, R_Key,
/// length), which the spec's 58 bytes per packet leave out; the model follows the spec, so every
/// data packet costs `58 + payload` bytes whatever its opcode.
pub const ROCE_DATA_HEADER_BYTES: usize = EthernetII::LEN + Ipv4::LEN + Udp::LEN + Bth::LEN + Icrc::LEN;

/// Bytes of a RoCEv2 ACK (or NAK), in bytes: the 58 data-packet header bytes + AETH 4 = 62. An ACK
/// carries no payload.
pub const ROCE_ACK_BYTES: usize = ROCE_DATA_HEADER_BYTES + Aeth::LEN;

/// Bytes of a RoCEv2 congestion notification packet, in bytes: Ethernet 14 + IPv4 20 + UDP 8 +
/// BTH 12 + 16 reserved + ICRC 4 = 74 (above the 60-byte Ethernet minimum, so never padded).
pub const CNP_BYTES: usize = EthernetII::LEN + Ipv4::LEN + Udp::LEN + Cnp::LEN + Icrc::LEN;

/// Bytes of an 802.1Qbb PFC frame, in bytes: Ethernet 14 + opcode 2 + class-enable vector 2 +
/// 8 x 2 pause quanta = 34, padded to the 60-byte minimum Ethernet frame (FCS excluded).
pub const PFC_FRAME_BYTES: usize = PfcFrame::LEN;

/// Size of an InfiniBand management datagram (MAD), in bytes: the payload of a connection manager
/// message.
pub const MAD_BYTES: usize = 256;

/// Bytes of one connection manager message (request, response or acknowledgment), in bytes: a UD
/// SEND ONLY to the GSI queue pair carrying one MAD: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 +
/// DETH 8 + MAD 256 + ICRC 4 = 322.
pub const CM_MESSAGE_BYTES: usize =
    EthernetII::LEN + Ipv4::LEN + Udp::LEN + Bth::LEN + Deth::LEN + MAD_BYTES + Icrc::LEN;

/// Why bytes could not be read as a header, or a frame could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The buffer is shorter than the header.
    #[error("{header}: the buffer holds {got} bytes but the header needs {needed}")]
    Truncated {
        /// The header being read.
        header: &'static str,
        /// Bytes it needs.
        needed: usize,
        /// Bytes there are.
        got: usize,
    },
    /// A checksum does not match the bytes.
    #[error("{header}: checksum {found:#x} in the bytes, {computed:#x} computed from them")]
    BadChecksum {
        /// The header (or trailer) being read.
        header: &'static str,
        /// The checksum in the bytes.
        found: u32,
        /// The checksum computed from them.
        computed: u32,
    },
    /// An Ethernet frame of another ethertype.
    #[error("Ethernet: ethertype {found:#06x}, expected {expected:#06x}")]
    WrongEthertype {
        /// The ethertype expected.
        expected: u16,
        /// The ethertype found.
        found: u16,
    },
    /// An IPv4 packet of another protocol than UDP.
    #[error("IPv4: protocol {found}, expected {expected} (UDP, which RoCEv2 runs over)")]
    WrongProtocol {
        /// The protocol expected (17, UDP).
        expected: u8,
        /// The protocol found.
        found: u8,
    },
    /// A field holds a value this model does not support.
    #[error("{header}: {field} is {value:#x}, expected {expected}")]
    Unsupported {
        /// The header.
        header: &'static str,
        /// The field.
        field: &'static str,
        /// Its value.
        value: u64,
        /// What is supported.
        expected: &'static str,
    },
    /// A priority class above 7.
    #[error("priority class {class} is out of range: PFC classes are 0 to 7")]
    InvalidClass {
        /// The class given.
        class: u8,
    },
    /// A frame too long for IPv4's total length.
    #[error("an IP packet of {ip_len} bytes does not fit IPv4's 16-bit total length (at most 65535)")]
    FrameTooLong {
        /// The IP packet's length in bytes.
        ip_len: usize,
    },
}

/// Fails with [`WireError::Truncated`] unless `buf` holds at least `needed` bytes.
fn check_len(buf: &[u8], needed: usize, header: &'static str) -> Result<(), WireError> {
    if buf.len() < needed {
        return Err(WireError::Truncated {
            header,
            needed,
            got: buf.len(),
        });
    }
    Ok(())
}

/// Reads a 24-bit big-endian field (QP numbers, PSNs, MSNs).
fn read_u24(b: &[u8]) -> u32 {
    u32::from_be_bytes([0, b[0], b[1], b[2]])
}

/// Writes the low 24 bits of `v` big-endian; higher bits do not exist on the wire.
fn write_u24(b: &mut [u8], v: u32) {
    b.copy_from_slice(&v.to_be_bytes()[1..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_header_is_the_specs_58_bytes() {
        assert_eq!(14 + 20 + 8 + 12 + 4, 58);
        assert_eq!(ROCE_DATA_HEADER_BYTES, 58);
        // The spec's worked example: 250,000 bytes in 62 packets put 253,596 bytes on the wire.
        assert_eq!(250_000 + 62 * ROCE_DATA_HEADER_BYTES, 253_596);
    }

    #[test]
    fn control_packet_sizes() {
        assert_eq!(ROCE_ACK_BYTES, 58 + 4);
        assert_eq!(CNP_BYTES, 14 + 20 + 8 + 12 + 16 + 4);
        assert_eq!(CNP_BYTES, 74);
        assert_eq!(PFC_FRAME_BYTES, 60);
        assert_eq!(CM_MESSAGE_BYTES, 14 + 20 + 8 + 12 + 8 + 256 + 4);
        assert_eq!(CM_MESSAGE_BYTES, 322);
    }

    #[test]
    fn u24_round_trip_drops_high_bits() {
        let mut b = [0u8; 3];
        write_u24(&mut b, 0xAB12_3456);
        assert_eq!(b, [0x12, 0x34, 0x56]);
        assert_eq!(read_u24(&b), 0x12_3456);
    }

    #[test]
    fn truncated_error_names_the_header() {
        let err = check_len(&[0; 3], 12, "BTH").unwrap_err();
        assert_eq!(err.to_string(), "BTH: the buffer holds 3 bytes but the header needs 12");
    }
}
