//! fio's I/O pattern beyond one block size over one range, as fio's
//! `io_u.c` makes it: block sizes by direction, drawn from a range or a
//! split (`get_next_buflen`); the random map that has a random workload
//! touch each block once per pass (`get_next_rand_offset`,
//! `mark_random_map`, over `lib/axmap.c`); sequential I/O with holes and
//! random I/O that changes offset every N requests (`rw=write:4k`,
//! `rw=randread:8`: `get_next_seq_offset`, `get_next_offset`).

use serde::{Deserialize, Serialize};
use std::fmt;

/// How one direction's request sizes are drawn (fio's `bs`, `bsrange`,
/// `bssplit`), in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BsDraw {
    /// Every request this size (`bs=4k`).
    Fixed(u64),
    /// `bsrange=MIN-MAX`: fio's draw, `min + max * u` rounded down to a
    /// multiple of `min` and capped at `max` (`get_next_buflen`).
    Range {
        /// The smallest size (also the alignment of random offsets).
        min: u64,
        /// The largest size.
        max: u64,
    },
    /// `bssplit=4k/10:64k/90`: sizes with the percentage of requests of
    /// each (adding up to 100).
    Split(Vec<(u64, u32)>),
}

impl BsDraw {
    /// The smallest size it draws.
    pub fn min(&self) -> u64 {
        match self {
            BsDraw::Fixed(b) => *b,
            BsDraw::Range { min, .. } => *min,
            BsDraw::Split(v) => v.iter().map(|e| e.0).min().unwrap_or(0),
        }
    }
    /// The largest size it draws.
    pub fn max(&self) -> u64 {
        match self {
            BsDraw::Fixed(b) => *b,
            BsDraw::Range { max, .. } => *max,
            BsDraw::Split(v) => v.iter().map(|e| e.0).max().unwrap_or(0),
        }
    }
    /// Every size it can draw is a positive multiple of 512 bytes, ranges
    /// are ordered and a split's percentages add up to 100.
    pub fn check(&self) -> Result<(), String> {
        let ok = |b: u64| b > 0 && b.is_multiple_of(512) && b <= u32::MAX as u64 * 512 / 2;
        match self {
            BsDraw::Fixed(b) if !ok(*b) => Err(format!(
                "{b}: a block size must be a positive multiple of 512 bytes"
            )),
            BsDraw::Range { min, max } if !ok(*min) || !ok(*max) || min > max => Err(format!(
                "{min}-{max}: a range of positive multiples of 512 bytes, low to high"
            )),
            BsDraw::Split(v) if v.is_empty() || v.iter().any(|e| !ok(e.0)) => {
                Err("a split's sizes must be positive multiples of 512 bytes".into())
            }
            BsDraw::Split(v) if v.iter().map(|e| e.1 as u64).sum::<u64>() != 100 => Err(format!(
                "a split's percentages must add up to 100, got {}",
                v.iter().map(|e| e.1 as u64).sum::<u64>()
            )),
            _ => Ok(()),
        }
    }
}

impl fmt::Display for BsDraw {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            BsDraw::Fixed(b) => write!(f, "{b}"),
            BsDraw::Range { min, max } => write!(f, "{min}-{max}"),
            BsDraw::Split(v) => {
                for (i, (b, p)) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(":")?;
                    }
                    write!(f, "{b}/{p}")?;
                }
                Ok(())
            }
        }
    }
}

/// Request sizes by direction (read, write, trim), as fio's
/// comma-separated `bs`, `bsrange` and `bssplit` give them. Written in a
/// configuration as bytes, `"READ,WRITE,TRIM"`, each a size (`4096`), a
/// range (`4096-16384`) or a split (`4096/50:65536/50`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSizes(pub [BsDraw; 3]);

impl BlockSizes {
    /// Parse the configuration's form (see the type); an error says why.
    pub fn parse(s: &str) -> Result<BlockSizes, String> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        if parts.len() != 3 {
            return Err(format!(
                "{:?}: expected three sizes, READ,WRITE,TRIM",
                ssd_core::units::clip(s)
            ));
        }
        let num = |t: &str| {
            t.trim()
                .parse::<u64>()
                .map_err(|_| format!("{:?}: expected bytes", ssd_core::units::clip(t)))
        };
        let one = |p: &str| -> Result<BsDraw, String> {
            let d = if p.contains('/') {
                let mut v = Vec::new();
                for e in p.split(':') {
                    let (b, pct) = e
                        .split_once('/')
                        .ok_or_else(|| format!("{e:?}: expected SIZE/PERCENT"))?;
                    let pct = num(pct)?;
                    v.push((num(b)?, u32::try_from(pct.min(1000)).unwrap_or(1000)));
                }
                BsDraw::Split(v)
            } else if let Some((a, b)) = p.split_once('-') {
                BsDraw::Range {
                    min: num(a)?,
                    max: num(b)?,
                }
            } else {
                BsDraw::Fixed(num(p)?)
            };
            d.check()?;
            Ok(d)
        };
        Ok(BlockSizes([one(parts[0])?, one(parts[1])?, one(parts[2])?]))
    }
    /// The smallest size of any direction (fio's `rw_min_bs`: the unit of
    /// the random map).
    pub fn min(&self) -> u64 {
        self.0.iter().map(BsDraw::min).min().unwrap_or(512)
    }
    /// The largest size of any direction (fio's `td_max_bs`).
    pub fn max(&self) -> u64 {
        self.0.iter().map(BsDraw::max).max().unwrap_or(512)
    }
}

impl fmt::Display for BlockSizes {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{},{},{}", self.0[0], self.0[1], self.0[2])
    }
}
impl Serialize for BlockSizes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}
impl<'de> Deserialize<'de> for BlockSizes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        BlockSizes::parse(&String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// fio's random map (`lib/axmap.c`): one bit per block of the smallest
/// block size, set when a random request covers the block, so that a
/// random workload touches each block once per pass. A second level has a
/// bit per full word, so that finding the next free block is a scan of
/// `blocks / 4096` words at worst.
#[derive(Clone, Debug)]
pub struct RandomMap {
    words: Vec<u64>,
    full: Vec<u64>,
    bits: u64,
}

impl RandomMap {
    /// A map of `bits` blocks, all free.
    pub fn new(bits: u64) -> RandomMap {
        let w = bits.div_ceil(64) as usize;
        RandomMap {
            words: vec![0; w],
            full: vec![0; w.div_ceil(64)],
            bits,
        }
    }
    /// Its blocks.
    pub fn bits(&self) -> u64 {
        self.bits
    }
    /// Every block free again (a new pass: fio's `fio_file_reset`).
    pub fn reset(&mut self) {
        self.words.fill(0);
        self.full.fill(0);
    }
    /// Whether block `b` is taken (a block past the map is free, as
    /// `axmap_isset` has it).
    pub fn is_set(&self, b: u64) -> bool {
        b < self.bits && self.words[(b / 64) as usize] & (1 << (b % 64)) != 0
    }
    fn word_mask(&self, w: usize) -> u64 {
        // The last word's bits past the map count as taken.
        let last = self.bits.div_ceil(64) as usize - 1;
        if w == last && !self.bits.is_multiple_of(64) {
            !((1u64 << (self.bits % 64)) - 1)
        } else {
            0
        }
    }
    fn mark_full(&mut self, w: usize) {
        if (self.words[w] | self.word_mask(w)) == u64::MAX {
            self.full[w / 64] |= 1 << (w % 64);
        }
    }
    /// Take up to `nr` blocks from `b` on, stopping at the first one taken
    /// already or at the map's end (`axmap_set_nr`); how many were taken.
    pub fn set_nr(&mut self, b: u64, nr: u64) -> u64 {
        let mut n = 0;
        while n < nr && b + n < self.bits && !self.is_set(b + n) {
            let i = b + n;
            let w = (i / 64) as usize;
            self.words[w] |= 1 << (i % 64);
            self.mark_full(w);
            n += 1;
        }
        n
    }
    /// The first free block at or after `from`, if any before the end.
    fn first_free(&self, from: u64) -> Option<u64> {
        if from >= self.bits {
            return None;
        }
        let mut w = (from / 64) as usize;
        let below = (1u64 << (from % 64)) - 1;
        let free = !(self.words[w] | self.word_mask(w) | below);
        if free != 0 {
            return Some(w as u64 * 64 + free.trailing_zeros() as u64);
        }
        w += 1;
        let words = self.words.len();
        while w < words {
            let f = w / 64;
            let not_full = !self.full[f] & (u64::MAX << (w % 64));
            if not_full == 0 {
                w = (f + 1) * 64;
                continue;
            }
            let w2 = f * 64 + not_full.trailing_zeros() as usize;
            if w2 >= words {
                return None;
            }
            let free = !(self.words[w2] | self.word_mask(w2));
            return Some(w2 as u64 * 64 + free.trailing_zeros() as u64);
        }
        None
    }
    /// The next free block after `b`, wrapping to the map's start
    /// (`axmap_next_free`); None when every block is taken.
    pub fn next_free(&self, b: u64) -> Option<u64> {
        if b >= self.bits {
            return None;
        }
        let next = if b + 1 == self.bits { 0 } else { b + 1 };
        self.first_free(next)
            .or_else(|| (next != 0).then(|| self.first_free(0)).flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssd_core::rng::SimRngExt;

    #[test]
    fn map_sets_runs_and_finds_free_blocks_with_wrap() {
        let mut m = RandomMap::new(200);
        assert_eq!(m.set_nr(10, 4), 4);
        assert_eq!(m.set_nr(8, 4), 2, "stops at the first taken block");
        assert!(m.is_set(13) && !m.is_set(14));
        assert_eq!(m.next_free(9), Some(14));
        assert_eq!(m.set_nr(190, 20), 10, "stops at the end");
        assert_eq!(m.next_free(199), Some(0), "wraps");
        for b in 0..200 {
            m.set_nr(b, 1);
        }
        assert_eq!(m.next_free(5), None);
        m.reset();
        assert_eq!(m.next_free(199), Some(0));
    }

    #[test]
    fn map_next_free_agrees_with_a_scan() {
        use rand::Rng;
        let mut r = ssd_core::rng::SimRng::from_seed_label(3, "map test");
        for bits in [1u64, 63, 64, 65, 4095, 4096, 4097, 9000] {
            let mut m = RandomMap::new(bits);
            let mut v = vec![false; bits as usize];
            for _ in 0..bits * 2 {
                let b = r.gen_range(0..bits);
                let n = r.gen_range(1..5);
                let got = m.set_nr(b, n);
                let mut want = 0;
                while want < n && b + want < bits && !v[(b + want) as usize] {
                    v[(b + want) as usize] = true;
                    want += 1;
                }
                assert_eq!(got, want);
                let q = r.gen_range(0..bits);
                let scan = (1..=bits).map(|k| (q + k) % bits).find(|&i| !v[i as usize]);
                assert_eq!(m.next_free(q), scan, "bits {bits} from {q}");
            }
        }
    }

    /// fio's random map: a random pass touches each block once; without
    /// it (`norandommap`) a pass misses about 1/e of them.
    #[test]
    fn a_random_pass_touches_each_block_once_with_the_map() {
        use crate::workload::{FioGen, RequestSource, RwMode, WorkloadConfig};
        let touched = |norandommap: bool| {
            let w = WorkloadConfig {
                rw: RwMode::RandWrite,
                size: Some(ssd_core::Size(16 << 20)),
                number_ios: None,
                norandommap,
                ..Default::default()
            };
            let mut g = FioGen::new(&w, 1 << 30, 5);
            let mut lbas: Vec<u64> = std::iter::from_fn(|| g.next_request())
                .map(|r| r.unwrap().lba)
                .collect();
            let n = lbas.len();
            lbas.sort_unstable();
            lbas.dedup();
            (n, lbas.len())
        };
        assert_eq!(touched(false), (4096, 4096));
        let (n, distinct) = touched(true);
        assert_eq!(n, 4096);
        assert!((2500..2700).contains(&distinct), "{distinct}");
    }

    /// fio's `rw=read:-8k` (a negative `ddir_seq_add`): from 0, then from
    /// the end backwards, each request 8k before the end of the last, as
    /// fio 3.33's own I/O log of that job has them (blocks 0, 254, 253...).
    #[test]
    fn a_negative_skip_reads_backwards_from_the_end() {
        use crate::workload::{FioGen, RequestSource, RwMode, WorkloadConfig};
        let w = WorkloadConfig {
            rw: RwMode::Read,
            size: Some(ssd_core::Size(1 << 20)),
            number_ios: None,
            ddir_seq_add: ssd_core::Size(8192),
            ddir_seq_back: true,
            ..Default::default()
        };
        let mut g = FioGen::new(&w, 1 << 30, 1);
        let blocks: Vec<u64> = std::iter::from_fn(|| g.next_request())
            .map(|r| r.unwrap().lba / 8)
            .collect();
        assert_eq!(blocks.len(), 256);
        assert_eq!(&blocks[..5], &[0, 254, 253, 252, 251]);
    }

    /// fio's strided zones, as fio 3.33's own I/O log of the same job has
    /// them: 2 MiB in each 1 MiB zone (the position wraps inside it), then
    /// on by zonerange + zoneskip; on a device of 8 MiB the zones wrap to the
    /// start at its end (`setup_strided_zone_mode`).
    #[test]
    fn strided_zones_walk_the_device_as_fio_does() {
        use crate::workload::{FioGen, RequestSource, RwMode, WorkloadConfig};
        use ssd_core::Size;
        let zoned = |size: u64, zonesize: u64, zoneskip: u64, device: u64| {
            let w = WorkloadConfig {
                rw: RwMode::Write,
                size: Some(Size(size)),
                number_ios: None,
                zonesize: Size(zonesize),
                zonerange: Size(1 << 20),
                zoneskip: Size(zoneskip),
                ..Default::default()
            };
            let mut g = FioGen::new(&w, device, 1);
            std::iter::from_fn(|| g.next_request())
                .map(|r| r.unwrap().lba * 512)
                .collect::<Vec<u64>>()
        };
        let offs = zoned(16 << 20, 2 << 20, 1 << 20, 1 << 30);
        assert_eq!(offs.len(), 4096);
        for (i, o) in offs.iter().enumerate() {
            // 512 requests a zone, each zone's 256 blocks twice.
            let zone = (i / 512) as u64;
            assert_eq!(
                *o,
                zone * (2 << 20) + (i % 256) as u64 * 4096,
                "request {i}"
            );
        }
        // Zones every 4 MiB of an 8 MiB device: 0, 4 MiB, then 0 again.
        let offs = zoned(4 << 20, 1 << 20, 3 << 20, 8 << 20);
        let starts: Vec<u64> = offs.chunks(256).map(|c| c[0]).collect();
        assert_eq!(starts, [0, 4 << 20, 0, 4 << 20]);
    }

    /// fio's mixed job (`workload.rwmix_cycle`): each direction walks from
    /// the start on its own (`last_pos[ddir]`), and a direction it switches
    /// to holds until its requests reach the other's times its share
    /// (`get_rw_ddir`, `set_rwmix_bytes`).
    #[test]
    fn a_mixed_job_cycles_as_fio_does() {
        use crate::workload::{FioGen, IoOp, RequestSource, RwMode, WorkloadConfig};
        let run = |rw: RwMode, cycle: bool| {
            let w = WorkloadConfig {
                rw,
                rwmixread: 70,
                size: Some(ssd_core::Size(16 << 20)),
                number_ios: None,
                rwmix_cycle: cycle,
                ..Default::default()
            };
            let mut g = FioGen::new(&w, 1 << 30, 3);
            std::iter::from_fn(|| g.next_request())
                .map(|r| r.unwrap())
                .collect::<Vec<_>>()
        };
        let reqs = run(RwMode::Rw, true);
        for op in [IoOp::Read, IoOp::Write] {
            let lbas: Vec<u64> = reqs.iter().filter(|r| r.op == op).map(|r| r.lba).collect();
            assert!(lbas.len() > 1000);
            assert!(
                lbas.iter().enumerate().all(|(i, &l)| l == i as u64 * 8),
                "{op:?} walks from 0 on its own"
            );
        }
        // Without the cycle a sequential mix shares one position.
        let shared = run(RwMode::Rw, false);
        assert!(shared
            .iter()
            .enumerate()
            .all(|(i, r)| r.lba == i as u64 * 8));
        // The cycle's rule: after a switch to writes, writes go on until
        // they reach the reads so far times 30 %.
        let reqs = run(RwMode::RandRw, true);
        let (mut issued, mut until, mut cur) = ([0u64; 2], 0u64, 0usize);
        for r in &reqs {
            let d = (r.op == IoOp::Write) as usize;
            if issued[cur] < until {
                assert_eq!(d, cur, "switched before {until} requests");
            }
            if d != cur {
                until = issued[cur] * [70, 30][d] / 100;
                cur = d;
            }
            issued[d] += 1;
        }
        let reads = issued[0] as f64 / reqs.len() as f64;
        assert!((0.67..0.73).contains(&reads), "{reads}");
    }

    /// A time-based mixed job (`get_next_seq_offset` with `time_based`):
    /// the writes, 16 times the reads' size, wrap at the end of `size` on
    /// their own while the reads go on, as in fio 3.33's I/O log of it.
    #[test]
    fn a_time_based_direction_wraps_alone() {
        use crate::workload::{BlockSizes, FioGen, IoOp, RequestSource, RwMode, WorkloadConfig};
        let w = WorkloadConfig {
            rw: RwMode::Rw,
            size: Some(ssd_core::Size(1 << 20)),
            number_ios: Some(2000),
            block_sizes: Some(BlockSizes::parse("4096,65536,4096").unwrap()),
            rwmix_cycle: true,
            time_based: true,
            ..Default::default()
        };
        let mut g = FioGen::new(&w, 1 << 30, 2);
        let reqs: Vec<_> = std::iter::from_fn(|| g.next_request())
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(reqs.len(), 2000);
        for (op, step) in [(IoOp::Read, 8u64), (IoOp::Write, 128)] {
            let lbas: Vec<u64> = reqs.iter().filter(|r| r.op == op).map(|r| r.lba).collect();
            assert!(lbas.len() as u64 * step > 2 * 2048, "{op:?} wraps");
            for (i, l) in lbas.iter().enumerate() {
                assert_eq!(*l, i as u64 * step % 2048, "{op:?} request {i}");
            }
        }
    }

    #[test]
    fn block_sizes_round_trip_and_refuse_bad_splits() {
        let b = BlockSizes::parse("4096-16384,4096/50:65536/50,4096").unwrap();
        assert_eq!(BlockSizes::parse(&b.to_string()).unwrap(), b);
        assert_eq!((b.min(), b.max()), (4096, 65536));
        assert!(BlockSizes::parse("4096/50:8192/40,4096,4096").is_err());
        assert!(BlockSizes::parse("100,4096,4096").is_err());
        assert!(BlockSizes::parse("4096").is_err());
    }
}
