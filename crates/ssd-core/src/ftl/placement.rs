//! Flexible Data Placement's vocabulary (NVMe TP4146, now in the NVMe 2.0
//! base specification) that the host's requests and the FTL share: a
//! write's placement directive. The FTL's side (reclaim groups, handles)
//! is `ftl::fdp` in the FTL crate.

/// A write's NVMe data placement directive (Flexible Data Placement, TP4146,
/// now in the NVMe 2.0 base specification): none, or the placement
/// identifier (PID) the command's DSPEC field carries (DTYPE 2h, "Data
/// Placement"). A PID names a reclaim group in its high bits (the FDP
/// configuration's Reclaim Group Identifier Format, RGIF) and a placement
/// handle in the rest; the device decodes it. Two bytes, so a
/// [`crate::workload::HostRequest`] stays 32: the sentinel for "no directive" is `0xFFFF`,
/// never a valid PID of a drive ssdsim accepts (at most 128 handles, so
/// the handle bits are never all set).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Placement(u16);

impl Placement {
    /// No data placement directive: the device writes where a write without
    /// one goes (placement handle 0).
    pub const NONE: Placement = Placement(u16::MAX);
    /// The directive naming placement identifier `pid` (below 0xFFFF).
    #[inline]
    pub fn pid(pid: u16) -> Placement {
        assert!(pid != u16::MAX, "placement identifier 0xFFFF is reserved");
        Placement(pid)
    }
    /// The placement identifier, if the command carries the directive.
    #[inline]
    pub fn get(self) -> Option<u16> {
        (self.0 != u16::MAX).then_some(self.0)
    }
}

impl Default for Placement {
    /// No directive.
    fn default() -> Placement {
        Placement::NONE
    }
}
