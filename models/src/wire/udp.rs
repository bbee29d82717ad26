//! The UDP header of a RoCEv2 packet. The destination port 4791 marks RoCEv2; the source port is
//! free, and NICs vary it per queue pair so that switches spread connections over ECMP paths.

use super::{WireError, check_len};

/// A UDP header (8 bytes). The checksum is always 0 on emit: RoCEv2 over IPv4 may leave it unset,
/// because the ICRC already covers the transport headers and the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Udp {
    /// Source port: the flow's entropy for ECMP.
    pub src_port: u16,
    /// Destination port (4791 for RoCEv2).
    pub dst_port: u16,
    /// Length of this header and its payload, in bytes.
    pub length: u16,
}

impl Udp {
    /// Header size, in bytes.
    pub const LEN: usize = 8;
    /// The IANA port of RoCEv2.
    pub const ROCEV2_PORT: u16 = 4791;

    /// Writes the header into the first [`Self::LEN`] bytes of `buf`, with checksum 0.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::LEN`] (a bug in the caller's buffer arithmetic).
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        buf[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        buf[4..6].copy_from_slice(&self.length.to_be_bytes());
        buf[6..8].fill(0);
    }

    /// Reads a header from the first [`Self::LEN`] bytes of `buf`. The checksum is not verified
    /// (a RoCEv2 receiver relies on the ICRC), and any port is accepted.
    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        check_len(buf, Self::LEN, "UDP")?;
        Ok(Self {
            src_port: u16::from_be_bytes([buf[0], buf[1]]),
            dst_port: u16::from_be_bytes([buf[2], buf[3]]),
            length: u16::from_be_bytes([buf[4], buf[5]]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn len_is_8() {
        assert_eq!(Udp::LEN, 8);
    }

    #[test]
    fn emit_and_parse() {
        let udp = Udp {
            src_port: 0xC000,
            dst_port: Udp::ROCEV2_PORT,
            length: 44,
        };
        let mut b = [0xAAu8; Udp::LEN];
        udp.emit(&mut b);
        // 4791 = 0x12B7; the checksum bytes are cleared whatever the buffer held.
        assert_eq!(b, [0xC0, 0x00, 0x12, 0xB7, 0x00, 0x2C, 0x00, 0x00]);
        assert_eq!(Udp::parse(&b), Ok(udp));
        assert!(matches!(Udp::parse(&b[..7]), Err(WireError::Truncated { .. })));
    }
}
