//! Typed addresses and the flat geometry that maps them to Vec indices.
//!
//! A physical page number ([`Ppn`]) is a flat index in channel-major order:
//! `((((channel * ways + way) * dies + die) * planes + plane) * blocks + block) * pages + page`.
//! So the die, plane and block of a page are divisions, and every per-die,
//! per-plane and per-block table is a flat `Vec` indexed by those ids.

use serde::{Deserialize, Serialize};

/// Logical page number (host address space in units of flash pages).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Lpn(pub u64);

/// Physical page number (flat; see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Ppn(pub u32);

/// Flat physical block id (`ppn / pages_per_block`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct BlockId(pub u32);

/// Flat die id (`channel * ways * dies + way * dies + die`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DieId(pub u32);

/// Flat plane id (`die * planes + plane`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PlaneId(pub u32);

/// Channel index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ChannelId(pub u32);

/// Division by a run-time constant: a shift when it is a power of two (the
/// usual geometry), a hardware division otherwise. For hot address splits
/// (a division sits on the path to the table entry it indexes).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct FastDiv {
    d: u64,
    shift: u32,
    pow2: bool,
}
impl FastDiv {
    /// A divider by `d`; panics if `d` is 0.
    pub fn new(d: u64) -> FastDiv {
        assert!(d > 0, "division by zero");
        FastDiv {
            d,
            shift: d.trailing_zeros(),
            pow2: d.is_power_of_two(),
        }
    }
    /// `x / d`.
    #[inline]
    pub fn quot(self, x: u64) -> u64 {
        if self.pow2 {
            x >> self.shift
        } else {
            x / self.d
        }
    }
}

/// A decomposed physical address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PhysAddr {
    /// Channel index.
    pub channel: u32,
    /// Way (chip) on the channel.
    pub way: u32,
    /// Die in the chip.
    pub die: u32,
    /// Plane in the die.
    pub plane: u32,
    /// Block in the plane.
    pub block: u32,
    /// Page in the block.
    pub page: u32,
}

/// The validated shape of the flash array. All counts are non-zero and the total
/// page count fits a `u32` (so [`Ppn`] tables stay 4 bytes an entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Geometry {
    /// Channels.
    pub channels: u32,
    /// Ways (chips) per channel.
    pub ways: u32,
    /// Dies per chip.
    pub dies: u32,
    /// Planes per die.
    pub planes: u32,
    /// Erase blocks per plane.
    pub blocks_per_plane: u32,
    /// Pages per erase block.
    pub pages_per_block: u32,
    /// Bytes per page.
    pub page_size: u32,
}

impl Geometry {
    /// Dies of the whole drive.
    #[inline]
    pub fn total_dies(&self) -> u32 {
        self.channels * self.ways * self.dies
    }
    /// Planes of the whole drive.
    #[inline]
    pub fn total_planes(&self) -> u32 {
        self.total_dies() * self.planes
    }
    /// Erase blocks of the whole drive.
    #[inline]
    pub fn total_blocks(&self) -> u32 {
        self.total_planes() * self.blocks_per_plane
    }
    /// Pages of the whole drive.
    #[inline]
    pub fn total_pages(&self) -> u64 {
        self.total_blocks() as u64 * self.pages_per_block as u64
    }
    /// Pages per plane.
    #[inline]
    pub fn pages_per_plane(&self) -> u32 {
        self.blocks_per_plane * self.pages_per_block
    }
    /// Pages per die.
    #[inline]
    pub fn pages_per_die(&self) -> u32 {
        self.pages_per_plane() * self.planes
    }
    /// Erase blocks per die.
    #[inline]
    pub fn blocks_per_die(&self) -> u32 {
        self.blocks_per_plane * self.planes
    }
    /// Raw flash capacity in bytes (all pages, over-provisioning included).
    pub fn physical_bytes(&self) -> u64 {
        self.total_pages() * self.page_size as u64
    }
    /// The block holding page `p` (flat block id).
    #[inline]
    pub fn block_of(&self, p: Ppn) -> BlockId {
        BlockId(p.0 / self.pages_per_block)
    }
    /// The index of page `p` within its block.
    #[inline]
    pub fn page_in_block(&self, p: Ppn) -> u32 {
        p.0 % self.pages_per_block
    }
    /// The die holding page `p` (flat die id).
    #[inline]
    pub fn die_of(&self, p: Ppn) -> DieId {
        DieId(p.0 / self.pages_per_die())
    }
    /// The plane holding page `p` (flat plane id).
    #[inline]
    pub fn plane_of(&self, p: Ppn) -> PlaneId {
        PlaneId(p.0 / self.pages_per_plane())
    }
    /// The die holding block `b`.
    #[inline]
    pub fn die_of_block(&self, b: BlockId) -> DieId {
        DieId(b.0 / self.blocks_per_die())
    }
    /// The plane holding block `b`.
    #[inline]
    pub fn plane_of_block(&self, b: BlockId) -> PlaneId {
        PlaneId(b.0 / self.blocks_per_plane)
    }
    /// The channel die `d` hangs off.
    #[inline]
    pub fn channel_of_die(&self, d: DieId) -> ChannelId {
        ChannelId(d.0 / (self.ways * self.dies))
    }
    /// The first page of block `b`.
    #[inline]
    pub fn first_page(&self, b: BlockId) -> Ppn {
        Ppn(b.0 * self.pages_per_block)
    }
    /// The first block of plane `p`.
    #[inline]
    pub fn first_block_of_plane(&self, p: PlaneId) -> BlockId {
        BlockId(p.0 * self.blocks_per_plane)
    }
    /// Flat plane id from a (channel, way, die, plane) tuple.
    #[inline]
    pub fn plane_id(&self, channel: u32, way: u32, die: u32, plane: u32) -> PlaneId {
        PlaneId(((channel * self.ways + way) * self.dies + die) * self.planes + plane)
    }
    /// Split a flat page number into channel, way, die, plane, block and page (channel
    /// outermost, page innermost).
    pub fn decompose(&self, p: Ppn) -> PhysAddr {
        let page = p.0 % self.pages_per_block;
        let b = p.0 / self.pages_per_block;
        let block = b % self.blocks_per_plane;
        let pl = b / self.blocks_per_plane;
        let plane = pl % self.planes;
        let d = pl / self.planes;
        let die = d % self.dies;
        let w = d / self.dies;
        let way = w % self.ways;
        let channel = w / self.ways;
        PhysAddr {
            channel,
            way,
            die,
            plane,
            block,
            page,
        }
    }
    /// The flat page number of an address; the inverse of [`Geometry::decompose`].
    pub fn compose(&self, a: PhysAddr) -> Ppn {
        let pl = self.plane_id(a.channel, a.way, a.die, a.plane).0;
        Ppn((pl * self.blocks_per_plane + a.block) * self.pages_per_block + a.page)
    }
}

/// What every component built from its own configuration section shares:
/// the drive's physical geometry and the logical pages the host addresses
/// (`Settings::shape`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriveShape {
    /// Channels, ways, dies, planes, blocks, pages.
    pub geometry: Geometry,
    /// The pages the host addresses (`FtlConfig::capacity`).
    pub logical_pages: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn roundtrip() {
        let g = Geometry {
            channels: 3,
            ways: 2,
            dies: 2,
            planes: 4,
            blocks_per_plane: 5,
            pages_per_block: 7,
            page_size: 4096,
        };
        for p in 0..g.total_pages() as u32 {
            let a = g.decompose(Ppn(p));
            assert_eq!(g.compose(a), Ppn(p));
            let die = g.die_of(Ppn(p));
            assert_eq!(die.0, (a.channel * g.ways + a.way) * g.dies + a.die);
            assert_eq!(g.channel_of_die(die).0, a.channel);
        }
    }
}
