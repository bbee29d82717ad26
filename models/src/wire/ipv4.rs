//! The IPv4 header of a RoCEv2 packet (20 bytes, no options), with the two fields the fabric acts
//! on: DSCP (which selects a switch's traffic class: class n is CSn, DSCP 8n) and ECN (which a
//! switch marks CE under congestion). The header checksum is computed on emit and verified on
//! parse, as a real stack does.

use super::{WireError, check_len};

/// The two ECN bits of the IPv4 header (RFC 3168).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Ecn {
    /// Not ECN-capable transport (`00`): a congested switch drops instead of marking.
    #[default]
    NotEct,
    /// ECN-capable transport, codepoint ECT(0) (`10`), what RoCEv2 NICs send.
    Ect0,
    /// ECN-capable transport, codepoint ECT(1) (`01`).
    Ect1,
    /// Congestion experienced (`11`), set by a switch.
    Ce,
}

impl Ecn {
    /// The codepoint as the two low bits of the IPv4 traffic class byte.
    pub const fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        }
    }

    /// The codepoint in the two low bits of `bits` (higher bits ignored).
    pub const fn from_bits(bits: u8) -> Self {
        match bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
}

/// An IPv4 header without options, carrying UDP (20 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4 {
    /// Differentiated services codepoint, 6 bits (higher bits are dropped on emit).
    pub dscp: u8,
    /// ECN codepoint, 2 bits.
    pub ecn: Ecn,
    /// Length of the IP packet (this header and everything after it), in bytes.
    pub total_len: u16,
    /// The identification field.
    pub identification: u16,
    /// The DF flag; RoCEv2 NICs set it (an RDMA packet is never fragmented).
    pub dont_fragment: bool,
    /// Time to live.
    pub ttl: u8,
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
}

impl Ipv4 {
    /// Header size, in bytes (version 4, IHL 5: no options).
    pub const LEN: usize = 20;
    /// The protocol number of UDP, the only payload this header carries.
    pub const PROTOCOL_UDP: u8 = 17;
    /// The TTL the frame builders use, in hops.
    pub const DEFAULT_TTL: u8 = 64;

    /// The IPv4 address of host `node_id`: `10.x.y.z`, where `x.y.z` are the low 24 bits of the
    /// node id, big-endian (host 5 is 10.0.0.5, host 300 is 10.0.1.44). Node ids of 2^24 and
    /// above alias lower ones (the top byte is dropped); fabrics are far smaller than that. Host 0
    /// gets 10.0.0.0, the network address of a real 10/8: harmless in a simulated capture, and
    /// it keeps the address equal to the node id, which is what a reader of a capture wants.
    pub fn host_address(node_id: u32) -> [u8; 4] {
        let id = node_id.to_be_bytes();
        [10, id[1], id[2], id[3]]
    }

    /// The Internet checksum (RFC 1071) of `header`: the ones' complement of the ones' complement
    /// sum of its 16-bit big-endian words. Over a header whose checksum field holds the right
    /// value, it is 0.
    pub fn checksum(header: &[u8]) -> u16 {
        let mut sum: u32 = header
            .chunks(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)])))
            .sum();
        while sum > 0xFFFF {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        !(sum as u16)
    }

    /// Writes the header into the first [`Self::LEN`] bytes of `buf`, with its checksum.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::LEN`] (a bug in the caller's buffer arithmetic).
    pub fn emit(&self, buf: &mut [u8]) {
        let b = &mut buf[..Self::LEN];
        b[0] = 0x45; // version 4, IHL 5 words
        b[1] = (self.dscp << 2) | self.ecn.bits();
        b[2..4].copy_from_slice(&self.total_len.to_be_bytes());
        b[4..6].copy_from_slice(&self.identification.to_be_bytes());
        let flags: u16 = if self.dont_fragment { 0x4000 } else { 0 };
        b[6..8].copy_from_slice(&flags.to_be_bytes());
        b[8] = self.ttl;
        b[9] = Self::PROTOCOL_UDP;
        b[10..12].fill(0);
        b[12..16].copy_from_slice(&self.src);
        b[16..20].copy_from_slice(&self.dst);
        let checksum = Self::checksum(b);
        b[10..12].copy_from_slice(&checksum.to_be_bytes());
    }

    /// Reads a header from the first [`Self::LEN`] bytes of `buf`, verifying its checksum.
    /// Options, fragments and payloads other than UDP are errors: no RoCEv2 packet has them.
    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        check_len(buf, Self::LEN, "IPv4")?;
        let b = &buf[..Self::LEN];
        if b[0] != 0x45 {
            return Err(WireError::Unsupported {
                header: "IPv4",
                field: "version/IHL byte",
                value: u64::from(b[0]),
                expected: "0x45 (version 4, a 20-byte header without options)",
            });
        }
        let flags = u16::from_be_bytes([b[6], b[7]]);
        // Anything but DF (the reserved bit, MF, a fragment offset) means a fragment.
        if flags & !0x4000 != 0 {
            return Err(WireError::Unsupported {
                header: "IPv4",
                field: "flags and fragment offset",
                value: u64::from(flags),
                expected: "0x4000 or 0 (an unfragmented packet)",
            });
        }
        if b[9] != Self::PROTOCOL_UDP {
            return Err(WireError::WrongProtocol {
                expected: Self::PROTOCOL_UDP,
                found: b[9],
            });
        }
        if Self::checksum(b) != 0 {
            let found = u16::from_be_bytes([b[10], b[11]]);
            let mut zeroed = [0u8; Self::LEN];
            zeroed.copy_from_slice(b);
            zeroed[10..12].fill(0);
            return Err(WireError::BadChecksum {
                header: "IPv4",
                found: u32::from(found),
                computed: u32::from(Self::checksum(&zeroed)),
            });
        }
        Ok(Self {
            dscp: b[1] >> 2,
            ecn: Ecn::from_bits(b[1]),
            total_len: u16::from_be_bytes([b[2], b[3]]),
            identification: u16::from_be_bytes([b[4], b[5]]),
            dont_fragment: flags & 0x4000 != 0,
            ttl: b[8],
            src: [b[12], b[13], b[14], b[15]],
            dst: [b[16], b[17], b[18], b[19]],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classic example header (192.168.0.1 -> 192.168.0.199, UDP, 115 bytes) whose checksum
    /// is 0xb861.
    const CLASSIC: [u8; 20] = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8,
        0x00, 0xc7,
    ];

    fn sample() -> Ipv4 {
        Ipv4 {
            dscp: 26,
            ecn: Ecn::Ect0,
            total_len: 4150,
            identification: 0x1234,
            dont_fragment: true,
            ttl: 64,
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
        }
    }

    #[test]
    fn len_is_20() {
        assert_eq!(Ipv4::LEN, 20);
    }

    #[test]
    fn checksum_of_the_classic_header() {
        let mut zeroed = CLASSIC;
        zeroed[10..12].fill(0);
        assert_eq!(Ipv4::checksum(&zeroed), 0xb861);
        assert_eq!(Ipv4::checksum(&CLASSIC), 0);
        let ip = Ipv4::parse(&CLASSIC).unwrap();
        assert_eq!(ip.total_len, 0x73);
        assert_eq!(ip.src, [192, 168, 0, 1]);
        assert_eq!(ip.dst, [192, 168, 0, 199]);
        let mut b = [0u8; 20];
        ip.emit(&mut b);
        assert_eq!(b, CLASSIC);
    }

    #[test]
    fn emit_matches_hand_computed_bytes() {
        // Traffic class byte: DSCP 26 << 2 | ECT(0) 0b10 = 0x6A. Total length 4150 = 0x1036.
        // Checksum: 0x456A + 0x1036 + 0x1234 + 0x4000 + 0x4011 + 0x0A00 + 0x0001 + 0x0A00 + 0x0002
        // = 0xFBE8 (no carry); its complement is 0x0417.
        let expected = [
            0x45, 0x6A, 0x10, 0x36, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x04, 0x17, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        let mut b = [0u8; 20];
        sample().emit(&mut b);
        assert_eq!(b, expected);
    }

    #[test]
    fn round_trip() {
        let mut b = [0u8; 20];
        for ecn in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
            let ip = Ipv4 { ecn, ..sample() };
            ip.emit(&mut b);
            assert_eq!(Ipv4::parse(&b), Ok(ip));
        }
    }

    #[test]
    fn ecn_codepoints_follow_rfc_3168() {
        assert_eq!(Ecn::Ect0.bits(), 0b10);
        assert_eq!(Ecn::Ect1.bits(), 0b01);
        assert_eq!(Ecn::from_bits(0b11), Ecn::Ce);
        assert_eq!(Ecn::from_bits(0xFC), Ecn::NotEct);
    }

    #[test]
    fn a_corrupted_byte_fails_the_checksum() {
        let mut b = CLASSIC;
        b[8] = 0x3f; // TTL decremented without updating the checksum
        assert_eq!(
            Ipv4::parse(&b),
            Err(WireError::BadChecksum {
                header: "IPv4",
                found: 0xb861,
                computed: 0xb961
            })
        );
    }

    #[test]
    fn rejects_what_roce_never_sends() {
        let mut b = [0u8; 20];
        sample().emit(&mut b);
        let mut tcp = b;
        tcp[9] = 6;
        assert_eq!(
            Ipv4::parse(&tcp),
            Err(WireError::WrongProtocol { expected: 17, found: 6 })
        );
        let mut options = b;
        options[0] = 0x46;
        assert!(matches!(
            Ipv4::parse(&options),
            Err(WireError::Unsupported {
                field: "version/IHL byte",
                ..
            })
        ));
        let mut fragment = b;
        fragment[6] = 0x20; // MF
        assert!(matches!(Ipv4::parse(&fragment), Err(WireError::Unsupported { .. })));
        assert!(matches!(Ipv4::parse(&b[..19]), Err(WireError::Truncated { .. })));
    }

    #[test]
    fn host_address_is_10_and_the_node_id() {
        assert_eq!(Ipv4::host_address(5), [10, 0, 0, 5]);
        assert_eq!(Ipv4::host_address(300), [10, 0, 1, 44]);
        assert_eq!(Ipv4::host_address(0x00AB_CDEF), [10, 0xAB, 0xCD, 0xEF]);
    }
}
