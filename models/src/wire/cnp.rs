//! The transport part of a RoCEv2 congestion notification packet (IBA annex A17.9.3): the
//! message a receiver NIC sends back to a sender whose packets arrived ECN-marked, so that its
//! congestion control (DCQCN) slows down. On the wire it is Ethernet, IPv4, UDP, then a BTH with
//! opcode 0x81 and BECN set, 16 reserved bytes, and the ICRC.

use super::{Bth, Opcode, WireError, check_len};

/// A CNP's BTH and reserved bytes (28 bytes); the ICRC that follows covers the whole packet, so
/// the frame builder adds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cnp {
    /// The queue pair to slow down (the sender's QP), 24 bits.
    pub dest_qp: u32,
    /// The partition key of the congested flow.
    pub partition_key: u16,
}

impl Cnp {
    /// BTH 12 + reserved 16, in bytes.
    pub const LEN: usize = Bth::LEN + Self::RESERVED_BYTES;
    /// Reserved bytes after the BTH, zero on the wire.
    pub const RESERVED_BYTES: usize = 16;

    /// A CNP to `dest_qp` with the default partition key.
    pub fn new(dest_qp: u32) -> Self {
        Self {
            dest_qp,
            partition_key: Bth::DEFAULT_PARTITION_KEY,
        }
    }

    /// The CNP's BTH: opcode 0x81, BECN set, PSN 0, every other flag clear.
    pub fn bth(&self) -> Bth {
        Bth {
            becn: true,
            partition_key: self.partition_key,
            ..Bth::new(Opcode::CNP, self.dest_qp, 0)
        }
    }

    /// Writes the BTH and reserved bytes into the first [`Self::LEN`] bytes of `buf`.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::LEN`] (a bug in the caller's buffer arithmetic).
    pub fn emit(&self, buf: &mut [u8]) {
        self.bth().emit(buf);
        buf[Bth::LEN..Self::LEN].fill(0);
    }

    /// Reads a CNP from the first [`Self::LEN`] bytes of `buf`; any opcode but 0x81 is an error.
    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        check_len(buf, Self::LEN, "CNP")?;
        let bth = Bth::parse(buf)?;
        if bth.opcode != Opcode::CNP {
            return Err(WireError::Unsupported {
                header: "CNP",
                field: "BTH opcode",
                value: u64::from(bth.opcode),
                expected: "0x81 (CNP)",
            });
        }
        Ok(Self {
            dest_qp: bth.dest_qp,
            partition_key: bth.partition_key,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::icrc::tests::CAPTURED_CNP;

    #[test]
    fn len_is_28() {
        assert_eq!(Cnp::LEN, 12 + 16);
    }

    #[test]
    fn emit_matches_a_hardware_cnp() {
        let cnp = Cnp::new(0x118);
        let mut b = [0xAAu8; Cnp::LEN];
        cnp.emit(&mut b);
        assert_eq!(b[..], CAPTURED_CNP[42..70]);
        assert_eq!(Cnp::parse(&b), Ok(cnp));
    }

    #[test]
    fn other_opcodes_are_not_cnps() {
        let mut b = [0u8; Cnp::LEN];
        Cnp::new(7).emit(&mut b);
        b[0] = Opcode::RC_ACKNOWLEDGE;
        assert!(matches!(
            Cnp::parse(&b),
            Err(WireError::Unsupported { value: 0x11, .. })
        ));
        assert!(matches!(Cnp::parse(&b[..27]), Err(WireError::Truncated { .. })));
    }
}
