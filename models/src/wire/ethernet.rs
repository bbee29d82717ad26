//! The Ethernet II header that starts every frame in the fabric: RoCEv2 packets (over IPv4) and PFC
//! MAC control frames. No VLAN tag: the model carries the traffic class in the IPv4 DSCP, not in a
//! PCP, so frames stay untagged.

use super::{WireError, check_len};

/// An Ethernet II header: destination MAC, source MAC, ethertype (14 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EthernetII {
    /// Destination MAC address.
    pub dst: [u8; 6],
    /// Source MAC address.
    pub src: [u8; 6],
    /// What the payload is (`0x0800` IPv4, `0x8808` MAC control).
    pub ethertype: u16,
}

impl EthernetII {
    /// Header size, in bytes.
    pub const LEN: usize = 14;
    /// Ethertype of an IPv4 packet (RoCEv2 runs over IPv4/UDP).
    pub const ETHERTYPE_IPV4: u16 = 0x0800;
    /// Ethertype of a MAC control frame (PFC, 802.3 pause).
    pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;

    /// The MAC address of host `node_id`: `02:00:` followed by the node id's four bytes,
    /// big-endian (host 5 is `02:00:00:00:00:05`). `02` marks a locally administered unicast
    /// address, so it cannot clash with a vendor's; every u32 id maps to its own address.
    ///
    /// Frames carry the end hosts' MACs at every hop: the model does not rewrite MACs at each
    /// routed hop as a real IP fabric would, which keeps a capture readable end to end.
    pub fn host_mac(node_id: u32) -> [u8; 6] {
        let id = node_id.to_be_bytes();
        [0x02, 0x00, id[0], id[1], id[2], id[3]]
    }

    /// Writes the header into the first [`Self::LEN`] bytes of `buf`.
    ///
    /// # Panics
    /// If `buf` is shorter than [`Self::LEN`] (a bug in the caller's buffer arithmetic).
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0..6].copy_from_slice(&self.dst);
        buf[6..12].copy_from_slice(&self.src);
        buf[12..14].copy_from_slice(&self.ethertype.to_be_bytes());
    }

    /// Reads a header from the first [`Self::LEN`] bytes of `buf`. Any ethertype is accepted; the
    /// caller checks the one it expects.
    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        check_len(buf, Self::LEN, "Ethernet")?;
        let mut dst = [0; 6];
        let mut src = [0; 6];
        dst.copy_from_slice(&buf[0..6]);
        src.copy_from_slice(&buf[6..12]);
        Ok(Self {
            dst,
            src,
            ethertype: u16::from_be_bytes([buf[12], buf[13]]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn len_is_14() {
        assert_eq!(EthernetII::LEN, 6 + 6 + 2);
    }

    #[test]
    fn emit_writes_fields_in_order() {
        let eth = EthernetII {
            dst: [1, 2, 3, 4, 5, 6],
            src: [7, 8, 9, 10, 11, 12],
            ethertype: EthernetII::ETHERTYPE_IPV4,
        };
        let mut b = [0u8; EthernetII::LEN];
        eth.emit(&mut b);
        assert_eq!(b, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x08, 0x00]);
        assert_eq!(EthernetII::parse(&b), Ok(eth));
    }

    #[test]
    fn host_mac_is_local_unicast_and_distinct() {
        assert_eq!(EthernetII::host_mac(5), [0x02, 0, 0, 0, 0, 5]);
        assert_eq!(EthernetII::host_mac(0x0102_0304), [0x02, 0, 1, 2, 3, 4]);
        let mac = EthernetII::host_mac(7);
        assert_eq!(mac[0] & 0x01, 0, "unicast");
        assert_eq!(mac[0] & 0x02, 0x02, "locally administered");
    }

    #[test]
    fn short_buffer_is_an_error() {
        assert_eq!(
            EthernetII::parse(&[0; 13]),
            Err(WireError::Truncated {
                header: "Ethernet",
                needed: 14,
                got: 13
            })
        );
    }
}
