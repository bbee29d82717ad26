//! The 802.1Qbb priority flow control frame: a MAC control frame that asks the link partner to
//! stop sending one or more traffic classes for a time, counted in quanta of 512 bit times. A
//! switch or NIC sends one when an ingress buffer of a class passes its XOFF threshold, and a
//! "resume" (quanta 0) when it drains below XON.

use engine::SimTime;
use engine::units::Rate;

use super::{EthernetII, WireError, check_len};

/// A PFC frame, Ethernet header included, padded to the 60-byte minimum frame (FCS excluded).
///
/// ```text
/// | dst 01:80:C2:00:00:01 | src | 0x8808 | opcode 0x0101 | class-enable vector | 8 x quanta | pad |
/// |          6            |  6  |   2    |       2       |          2          |     16     |  26 |
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PfcFrame {
    /// MAC of the port that sends the frame.
    pub src: [u8; 6],
    /// Bit n set: the quanta for class n apply. Only the low 8 bits are defined.
    pub class_enable: u16,
    /// Pause time per class, in quanta of 512 bit times; 0 resumes the class.
    pub quanta: [u16; 8],
}

impl PfcFrame {
    /// Frame size, in bytes: the Ethernet minimum without FCS.
    pub const LEN: usize = 60;
    /// The reserved multicast address of MAC control frames, never forwarded by a bridge.
    pub const DST: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01];
    /// The MAC control opcode of a PFC frame (0x0001 is the 802.3x pause of the whole link).
    pub const OPCODE: u16 = 0x0101;
    /// The longest pause, in quanta.
    pub const MAX_QUANTA: u16 = 0xFFFF;
    /// Bytes of the frame before padding: Ethernet 14 + opcode 2 + vector 2 + quanta 16.
    const PAYLOAD_END: usize = EthernetII::LEN + 2 + 2 + 16;

    /// A frame that pauses `class` for `quanta` (source MAC zero; set [`Self::src`]).
    pub fn pause(class: u8, quanta: u16) -> Result<Self, WireError> {
        if class > 7 {
            return Err(WireError::InvalidClass { class });
        }
        let mut all = [0u16; 8];
        all[usize::from(class)] = quanta;
        Ok(Self {
            src: [0; 6],
            class_enable: 1 << class,
            quanta: all,
        })
    }

    /// A frame that lets `class` send again (pause with quanta 0).
    pub fn resume(class: u8) -> Result<Self, WireError> {
        Self::pause(class, 0)
    }

    /// How long `quanta` pause a link of `rate`: one quantum is 512 bit times (64 bytes), so
    /// 0xFFFF quanta at 400 Gbps are 65,535 x 1.28 ns = 83.88 us. A zero rate never resumes
    /// ([`SimTime::MAX`]).
    pub fn pause_time(quanta: u16, rate: Rate) -> SimTime {
        if rate.bps() == 0 {
            return SimTime::MAX;
        }
        rate.serialization_time(u64::from(quanta) * 64)
    }

    /// Writes the frame into the first [`Self::LEN`] bytes of `buf`, padding with zeros.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::LEN`] (a bug in the caller's buffer arithmetic).
    pub fn emit(&self, buf: &mut [u8]) {
        EthernetII {
            dst: Self::DST,
            src: self.src,
            ethertype: EthernetII::ETHERTYPE_MAC_CONTROL,
        }
        .emit(buf);
        let mut at = EthernetII::LEN;
        buf[at..at + 2].copy_from_slice(&Self::OPCODE.to_be_bytes());
        buf[at + 2..at + 4].copy_from_slice(&self.class_enable.to_be_bytes());
        at += 4;
        for q in self.quanta {
            buf[at..at + 2].copy_from_slice(&q.to_be_bytes());
            at += 2;
        }
        buf[Self::PAYLOAD_END..Self::LEN].fill(0);
    }

    /// Reads a frame from the first [`Self::LEN`] bytes of `buf`: the ethertype must be MAC
    /// control, the destination the PFC address, the opcode 0x0101. Padding is not checked.
    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        check_len(buf, Self::LEN, "PFC")?;
        let eth = EthernetII::parse(buf)?;
        if eth.ethertype != EthernetII::ETHERTYPE_MAC_CONTROL {
            return Err(WireError::WrongEthertype {
                expected: EthernetII::ETHERTYPE_MAC_CONTROL,
                found: eth.ethertype,
            });
        }
        if eth.dst != Self::DST {
            return Err(WireError::Unsupported {
                header: "PFC",
                field: "destination MAC",
                value: eth.dst.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b)),
                expected: "01:80:C2:00:00:01",
            });
        }
        let be16 = |at: usize| u16::from_be_bytes([buf[at], buf[at + 1]]);
        let opcode = be16(EthernetII::LEN);
        if opcode != Self::OPCODE {
            return Err(WireError::Unsupported {
                header: "PFC",
                field: "MAC control opcode",
                value: u64::from(opcode),
                expected: "0x0101 (priority flow control)",
            });
        }
        let mut quanta = [0u16; 8];
        for (n, q) in quanta.iter_mut().enumerate() {
            *q = be16(EthernetII::LEN + 4 + 2 * n);
        }
        Ok(Self {
            src: eth.src,
            class_enable: be16(EthernetII::LEN + 2),
            quanta,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn len_is_the_ethernet_minimum() {
        assert_eq!(PfcFrame::LEN, 60);
        assert_eq!(PfcFrame::PAYLOAD_END, 34);
    }

    #[test]
    fn pause_frame_layout() {
        let frame = PfcFrame {
            src: [0x02, 0, 0, 0, 0, 0x09],
            ..PfcFrame::pause(3, 0xABCD).unwrap()
        };
        let mut b = [0xEEu8; PfcFrame::LEN];
        frame.emit(&mut b);
        let mut expected = [0u8; 60];
        expected[..14].copy_from_slice(&[0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0x02, 0, 0, 0, 0, 0x09, 0x88, 0x08]);
        expected[14..18].copy_from_slice(&[0x01, 0x01, 0x00, 0x08]); // opcode, vector bit 3
        // Quanta of class 3 at 18 + 2 x 3 = 24; the rest, then the padding, are zero.
        expected[24..26].copy_from_slice(&[0xAB, 0xCD]);
        assert_eq!(b, expected);
        assert_eq!(PfcFrame::parse(&b), Ok(frame));
    }

    #[test]
    fn resume_is_quanta_zero() {
        let r = PfcFrame::resume(7).unwrap();
        assert_eq!(r.class_enable, 0x80);
        assert_eq!(r.quanta, [0; 8]);
        let mut b = [0u8; PfcFrame::LEN];
        r.emit(&mut b);
        assert_eq!(PfcFrame::parse(&b), Ok(r));
    }

    #[test]
    fn class_out_of_range_is_an_error() {
        assert_eq!(PfcFrame::pause(8, 1), Err(WireError::InvalidClass { class: 8 }));
    }

    #[test]
    fn parse_rejects_other_frames() {
        let mut b = [0u8; PfcFrame::LEN];
        PfcFrame::pause(0, 1).unwrap().emit(&mut b);
        let mut ip = b;
        ip[12..14].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(
            PfcFrame::parse(&ip),
            Err(WireError::WrongEthertype {
                expected: 0x8808,
                found: 0x0800
            })
        );
        let mut link_pause = b;
        link_pause[14] = 0x00; // opcode 0x0001, 802.3x
        assert!(matches!(
            PfcFrame::parse(&link_pause),
            Err(WireError::Unsupported { value: 0x0001, .. })
        ));
        let mut unicast = b;
        unicast[5] = 0x02;
        assert!(matches!(
            PfcFrame::parse(&unicast),
            Err(WireError::Unsupported {
                field: "destination MAC",
                ..
            })
        ));
        assert!(matches!(PfcFrame::parse(&b[..59]), Err(WireError::Truncated { .. })));
    }

    #[test]
    fn pause_time_is_512_bit_times_per_quantum() {
        // 512 bits at 400 Gbps = 1.28 ns = 1280 ps.
        assert_eq!(PfcFrame::pause_time(1, Rate::gbps(400)), SimTime::from_ps(1_280));
        assert_eq!(
            PfcFrame::pause_time(0xFFFF, Rate::gbps(400)),
            SimTime::from_ps(65_535 * 1_280)
        );
        assert_eq!(PfcFrame::pause_time(0, Rate::gbps(400)), SimTime::ZERO);
    }
}
