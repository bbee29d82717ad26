//! A minimal classic-pcap writer, so that a tracer can hand a run's frames to Wireshark or tshark.
//! Nanosecond timestamps (magic 0xa1b23c4d) keep back-to-back 400 Gbps packets, 1.28 ns apart for
//! the smallest, in order and distinct. Simulated time is passed in: the writer never reads a
//! clock.

use std::io::{self, Write};

use engine::SimTime;

/// Writes a classic pcap stream (all fields little-endian) of Ethernet frames.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
}

impl<W: Write> PcapWriter<W> {
    /// The magic number of a pcap file with nanosecond timestamps.
    pub const MAGIC_NANOS: u32 = 0xA1B2_3C4D;
    /// Link type of Ethernet frames (without FCS).
    pub const LINKTYPE_ETHERNET: u32 = 1;
    /// Largest frame recorded whole, in bytes (tcpdump's default); longer frames are cut to this
    /// length, their original length still recorded.
    pub const SNAPLEN: u32 = 262_144;

    /// Starts a pcap stream on `out` by writing the 24-byte file header.
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut header = [0u8; 24];
        header[0..4].copy_from_slice(&Self::MAGIC_NANOS.to_le_bytes());
        header[4..6].copy_from_slice(&2u16.to_le_bytes()); // version 2.4
        header[6..8].copy_from_slice(&4u16.to_le_bytes());
        // Bytes 8..16: time zone offset and timestamp accuracy, both 0.
        header[16..20].copy_from_slice(&Self::SNAPLEN.to_le_bytes());
        header[20..24].copy_from_slice(&Self::LINKTYPE_ETHERNET.to_le_bytes());
        out.write_all(&header)?;
        Ok(Self { out })
    }

    /// Records `frame` as seen at `time`. Picoseconds below a nanosecond are dropped (pcap's
    /// resolution); a u64 of picoseconds is at most ~1.8e7 seconds, so the seconds always fit.
    pub fn write_packet(&mut self, time: SimTime, frame: &[u8]) -> io::Result<()> {
        let ps = time.ps();
        let secs = (ps / SimTime::PS_PER_SEC) as u32;
        let nanos = ((ps % SimTime::PS_PER_SEC) / 1_000) as u32;
        let orig_len = u32::try_from(frame.len()).unwrap_or(u32::MAX);
        let incl_len = orig_len.min(Self::SNAPLEN);
        let mut record = [0u8; 16];
        record[0..4].copy_from_slice(&secs.to_le_bytes());
        record[4..8].copy_from_slice(&nanos.to_le_bytes());
        record[8..12].copy_from_slice(&incl_len.to_le_bytes());
        record[12..16].copy_from_slice(&orig_len.to_le_bytes());
        self.out.write_all(&record)?;
        self.out.write_all(&frame[..incl_len as usize])
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The underlying writer (not flushed).
    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Ecn;
    use crate::wire::frames::{RoceFrameSpec, pfc_frame, roce_write_frame};

    fn le32(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    #[test]
    fn written_capture_parses_back() {
        let data = roce_write_frame(&RoceFrameSpec {
            src_node: 0,
            dst_node: 1,
            src_qp: 1,
            dst_qp: 2,
            psn: 0,
            opcode: crate::wire::Opcode::RC_RDMA_WRITE_ONLY,
            ack_req: true,
            dscp: 0,
            ecn: Ecn::Ect0,
            udp_src_port: 49152,
            payload_len: 144,
            reth: None,
        })
        .unwrap();
        let pfc = pfc_frame(1, 0, 100).unwrap();
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        // 1.5 s + 2 ns + 345 ps: the picoseconds below a nanosecond are dropped.
        w.write_packet(SimTime::from_ps(1_500_000_002_345), &data).unwrap();
        w.write_packet(SimTime::from_us(2_000_001), &pfc).unwrap();
        let b = w.into_inner();

        assert_eq!(b.len(), 24 + (16 + 202) + (16 + 60));
        assert_eq!(&b[0..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(u16::from_le_bytes([b[4], b[5]]), 2);
        assert_eq!(u16::from_le_bytes([b[6], b[7]]), 4);
        assert_eq!(le32(&b, 16), 262_144);
        assert_eq!(le32(&b, 20), 1);

        let mut at = 24;
        let mut records = Vec::new();
        while at < b.len() {
            let (secs, nanos, incl, orig) = (le32(&b, at), le32(&b, at + 4), le32(&b, at + 8), le32(&b, at + 12));
            assert_eq!(incl, orig);
            let body = &b[at + 16..at + 16 + incl as usize];
            records.push((secs, nanos, body.to_vec()));
            at += 16 + incl as usize;
        }
        assert_eq!(at, b.len());
        assert_eq!(records.len(), 2);
        assert_eq!(records[0], (1, 500_000_002, data));
        assert_eq!(records[1], (2, 1_000, pfc));
    }

    #[test]
    fn frames_past_the_snaplen_are_cut() {
        let big = vec![0xABu8; PcapWriter::<Vec<u8>>::SNAPLEN as usize + 10];
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.write_packet(SimTime::ZERO, &big).unwrap();
        let b = w.into_inner();
        assert_eq!(le32(&b, 24 + 8), 262_144);
        assert_eq!(le32(&b, 24 + 12), 262_154);
        assert_eq!(b.len(), 24 + 16 + 262_144);
    }
}
