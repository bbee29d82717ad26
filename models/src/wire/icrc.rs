//! The invariant CRC that ends every RoCEv2 packet, and the CRC-32 it is built on.
//!
//! The ICRC covers what no switch may change on the way: IBA annex A17 (RoCEv2) computes it as the
//! standard CRC-32 (Ethernet's: reflected, polynomial 0xEDB88320, initial and final value all
//! ones) over a 64-bit dummy LRH of all ones, then the IPv4 header, UDP header, BTH and everything
//! after them up to the ICRC, with the fields a router rewrites (IPv4 DSCP/ECN, TTL and header
//! checksum, the UDP checksum, and the BTH byte holding FECN/BECN/resv6) taken as all ones. So a
//! switch that marks ECN or decrements TTL leaves the ICRC valid.

use super::{Bth, Ipv4, Udp, WireError, check_len};

const POLY: u32 = 0xEDB8_8320;

/// The byte-at-a-time table of the reflected CRC-32, built at compile time.
const TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

/// Runs the CRC register over `bytes` without the final inversion, so a CRC can be computed over
/// pieces.
fn update(mut crc: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        crc = TABLE[((crc ^ u32::from(b)) & 0xFF) as usize] ^ (crc >> 8);
    }
    crc
}

/// The standard CRC-32 of `data` (as in Ethernet, zip and zlib): `crc32(b"123456789")` is
/// `0xCBF43926`.
pub fn crc32(data: &[u8]) -> u32 {
    !update(!0, data)
}

/// The invariant CRC (4 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Icrc {
    /// The CRC, as it is emitted.
    pub value: u32,
}

impl Icrc {
    /// Trailer size, in bytes.
    pub const LEN: usize = 4;

    /// Bytes of the headers in which some fields are masked: IPv4, UDP and BTH.
    const MASKED_HEAD: usize = Ipv4::LEN + Udp::LEN + Bth::LEN;

    /// The ICRC of an IPv4 RoCEv2 packet: `ip_packet` runs from the first byte of the IPv4 header
    /// to the last byte before the ICRC (the Ethernet header is not covered).
    pub fn compute(ip_packet: &[u8]) -> Result<Self, WireError> {
        check_len(ip_packet, Self::MASKED_HEAD, "ICRC-covered packet")?;
        if ip_packet[0] != 0x45 {
            // With IPv4 options the UDP and BTH offsets move; RoCEv2 packets carry none.
            return Err(WireError::Unsupported {
                header: "IPv4",
                field: "version/IHL byte",
                value: u64::from(ip_packet[0]),
                expected: "0x45 (version 4, a 20-byte header without options)",
            });
        }
        let mut head = [0u8; Self::MASKED_HEAD];
        head.copy_from_slice(&ip_packet[..Self::MASKED_HEAD]);
        head[1] = 0xFF; // DSCP and ECN
        head[8] = 0xFF; // TTL
        head[10..12].fill(0xFF); // IPv4 header checksum
        let udp = Ipv4::LEN;
        head[udp + 6..udp + 8].fill(0xFF); // UDP checksum
        let bth = udp + Udp::LEN;
        head[bth + 4] = 0xFF; // FECN, BECN, resv6
        let crc = update(!0, &[0xFF; 8]); // the dummy LRH
        let crc = update(crc, &head);
        let crc = update(crc, &ip_packet[Self::MASKED_HEAD..]);
        Ok(Self { value: !crc })
    }

    /// Checks the ICRC at the end of `ip_packet_with_icrc` (the IPv4 header through the ICRC).
    pub fn verify(ip_packet_with_icrc: &[u8]) -> Result<(), WireError> {
        let len = ip_packet_with_icrc.len();
        check_len(
            ip_packet_with_icrc,
            Self::MASKED_HEAD + Self::LEN,
            "ICRC-covered packet",
        )?;
        let (covered, trailer) = ip_packet_with_icrc.split_at(len - Self::LEN);
        let found = Self::parse(trailer)?;
        let computed = Self::compute(covered)?;
        if found != computed {
            return Err(WireError::BadChecksum {
                header: "ICRC",
                found: found.value,
                computed: computed.value,
            });
        }
        Ok(())
    }

    /// Writes the ICRC into the first [`Self::LEN`] bytes of `buf`, least significant byte first.
    ///
    /// Unlike the headers, the ICRC goes out in the CRC's own bit order, as the Ethernet FCS does;
    /// Linux's rdma_rxe, Wireshark/scapy and ConnectX hardware all agree on this byte order.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::LEN`] (a bug in the caller's buffer arithmetic).
    pub fn emit(&self, buf: &mut [u8]) {
        buf[..Self::LEN].copy_from_slice(&self.value.to_le_bytes());
    }

    /// Reads an ICRC from the first [`Self::LEN`] bytes of `buf` (not verified: see
    /// [`Self::verify`]).
    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        check_len(buf, Self::LEN, "ICRC")?;
        Ok(Self {
            value: u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]),
        })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A CNP captured on a Mellanox ConnectX-4 Lx (from scapy's RoCE regression tests): 10.0.17.1
    /// to 10.0.18.1, DSCP 48, ECT(0), destination QP 0x118, ICRC bytes 82 fd 00 2a.
    pub(in crate::wire) const CAPTURED_CNP: [u8; 74] = [
        0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32, 0x08, 0x00, // Eth
        0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00,
        0x12, 0x01, // IPv4
        0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, // UDP
        0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00, // BTH
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // reserved
        0x82, 0xfd, 0x00, 0x2a, // ICRC
    ];

    #[test]
    fn crc32_known_vectors() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"The quick brown fox jumps over the lazy dog"), 0x414F_A339);
    }

    #[test]
    fn dummy_lrh_seed_matches_rdma_rxe() {
        // Linux's soft-RoCE starts its ICRC from 0xdebb20e3: the register after 8 bytes of 0xFF.
        assert_eq!(update(!0, &[0xFF; 8]), 0xDEBB_20E3);
    }

    #[test]
    fn icrc_of_a_hardware_cnp() {
        let ip = &CAPTURED_CNP[14..];
        let covered = &ip[..ip.len() - Icrc::LEN];
        assert_eq!(Icrc::compute(covered), Ok(Icrc { value: 0x2A00_FD82 }));
        assert_eq!(Icrc::verify(ip), Ok(()));
        let mut b = [0u8; 4];
        Icrc { value: 0x2A00_FD82 }.emit(&mut b);
        assert_eq!(b, [0x82, 0xfd, 0x00, 0x2a]);
        assert_eq!(Icrc::parse(&b), Ok(Icrc { value: 0x2A00_FD82 }));
    }

    #[test]
    fn masked_fields_do_not_change_the_icrc() {
        let mut ip = CAPTURED_CNP[14..].to_vec();
        ip[1] = 0x03; // DSCP 0, ECN CE
        ip[8] = 0x01; // TTL
        ip[10] = 0x12; // IPv4 checksum
        ip[26] = 0x55; // UDP checksum
        ip[28 + 4] = 0x80; // FECN instead of BECN
        assert_eq!(Icrc::verify(&ip), Ok(()));
    }

    #[test]
    fn covered_fields_do_change_the_icrc() {
        let mut ip = CAPTURED_CNP[14..].to_vec();
        ip[28 + 11] = 0x01; // PSN
        assert!(matches!(
            Icrc::verify(&ip),
            Err(WireError::BadChecksum {
                header: "ICRC",
                found: 0x2A00_FD82,
                ..
            })
        ));
        assert!(matches!(Icrc::verify(&ip[..43]), Err(WireError::Truncated { .. })));
    }
}
