//! Zoned namespaces (NVMe Zoned Namespace Command Set 1.1, "ZNS"; Linux's
//! zoned block devices): a zone's state, the zone management actions, the
//! status a zoned command fails with, and a zone's descriptor as Report
//! Zones returns it. The zoned FTL (`ftl.kind = "zns"`) keeps the zones;
//! the engine hands it the zoned commands ([`crate::workload::IoOp`]'s
//! zone operations) and counts the failures by status.
//!
//! The state machine is the one of ZNS 1.1 §2.1.1 (Figure 7, "Zone State
//! Machine"), as Linux's `null_blk` implements it
//! (drivers/block/null_blk/zoned.c: `null_zone_write`, `null_open_zone`,
//! `null_close_zone`, `null_finish_zone`, `null_reset_zone`,
//! `null_check_zone_resources`): a write (or append) implicitly opens an
//! empty or closed zone, open explicitly opens it, close turns an open zone
//! closed (empty if nothing was written), finish makes it full, reset makes
//! it empty; read-only and offline zones refuse every write and action.

use serde::{Deserialize, Serialize};

/// A zone's state (ZNS 1.1 §2.1.1; Linux's `enum blk_zone_cond`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZoneState {
    /// ZSE: no data; the write pointer at the zone's start.
    #[default]
    Empty,
    /// ZSIO: opened by a write.
    ImplicitOpen,
    /// ZSEO: opened by Zone Management Send's Open Zone.
    ExplicitOpen,
    /// ZSC: written, not open (holds an active resource).
    Closed,
    /// ZSF: written to its capacity, or finished.
    Full,
    /// ZSRO: readable only (the device's condition, not the host's).
    ReadOnly,
    /// ZSO: neither readable nor writable.
    Offline,
    /// A conventional zone: no write pointer, any page writable at any time
    /// (Linux's `BLK_ZONE_COND_NOT_WP`).
    NotWritePointer,
}

impl ZoneState {
    /// Every state, in the order of the report's counts.
    pub const ALL: [ZoneState; 8] = [
        ZoneState::Empty,
        ZoneState::ImplicitOpen,
        ZoneState::ExplicitOpen,
        ZoneState::Closed,
        ZoneState::Full,
        ZoneState::ReadOnly,
        ZoneState::Offline,
        ZoneState::NotWritePointer,
    ];
    /// An open zone (implicitly or explicitly): it holds an open resource.
    pub fn is_open(self) -> bool {
        matches!(self, ZoneState::ImplicitOpen | ZoneState::ExplicitOpen)
    }
    /// An active zone (open or closed): it holds an active resource.
    pub fn is_active(self) -> bool {
        self.is_open() || self == ZoneState::Closed
    }
    /// The state's name in the report (`implicit_open`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ZoneState::Empty => "empty",
            ZoneState::ImplicitOpen => "implicit_open",
            ZoneState::ExplicitOpen => "explicit_open",
            ZoneState::Closed => "closed",
            ZoneState::Full => "full",
            ZoneState::ReadOnly => "read_only",
            ZoneState::Offline => "offline",
            ZoneState::NotWritePointer => "not_write_pointer",
        }
    }
}

/// A Zone Management Send action (ZNS 1.1 §4.4.3, Figure 33; Linux's
/// `REQ_OP_ZONE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ZoneAction {
    /// Open Zone: explicitly open.
    Open,
    /// Close Zone.
    Close,
    /// Finish Zone: full, the rest of the capacity left unwritten.
    Finish,
    /// Reset Zone: empty, the data gone.
    Reset,
}

/// The status a zoned command fails with: the NVMe ZNS command-specific
/// status codes (ZNS 1.1 §4.1.1.3, Figure 23), and Invalid Command Opcode
/// for a zoned command sent to a drive without zones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ZoneError {
    /// 0xB8 Zone Boundary Error: the write crosses the end of the zone's
    /// writable capacity.
    Boundary,
    /// 0xB9 Zone Is Full.
    Full,
    /// 0xBA Zone Is Read Only.
    ReadOnly,
    /// 0xBB Zone Is Offline.
    Offline,
    /// 0xBC Zone Invalid Write: a write not at the write pointer.
    InvalidWrite,
    /// 0xBD Too Many Active Zones.
    TooManyActive,
    /// 0xBE Too Many Open Zones.
    TooManyOpen,
    /// 0xBF Invalid Zone State Transition (open a full zone, close an
    /// empty one, ...).
    InvalidTransition,
    /// 0x02 Invalid Field in Command: a zone append or zone action whose
    /// address starts no zone.
    InvalidField,
    /// 0x01 Invalid Command Opcode: a zone command to a drive without
    /// zones, or a discard (Dataset Management's deallocate) to a zoned one.
    InvalidOpcode,
}

impl ZoneError {
    /// Number of statuses.
    pub const COUNT: usize = 10;
    /// Every status, in index order.
    pub const ALL: [ZoneError; ZoneError::COUNT] = [
        ZoneError::Boundary,
        ZoneError::Full,
        ZoneError::ReadOnly,
        ZoneError::Offline,
        ZoneError::InvalidWrite,
        ZoneError::TooManyActive,
        ZoneError::TooManyOpen,
        ZoneError::InvalidTransition,
        ZoneError::InvalidField,
        ZoneError::InvalidOpcode,
    ];
    /// Index in per-status arrays.
    pub fn index(self) -> usize {
        self as usize
    }
    /// The status's name in the report (`invalid_write`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ZoneError::Boundary => "boundary",
            ZoneError::Full => "full",
            ZoneError::ReadOnly => "read_only",
            ZoneError::Offline => "offline",
            ZoneError::InvalidWrite => "invalid_write",
            ZoneError::TooManyActive => "too_many_active",
            ZoneError::TooManyOpen => "too_many_open",
            ZoneError::InvalidTransition => "invalid_transition",
            ZoneError::InvalidField => "invalid_field",
            ZoneError::InvalidOpcode => "invalid_opcode",
        }
    }
    /// The NVMe status code.
    pub fn code(self) -> u8 {
        match self {
            ZoneError::Boundary => 0xB8,
            ZoneError::Full => 0xB9,
            ZoneError::ReadOnly => 0xBA,
            ZoneError::Offline => 0xBB,
            ZoneError::InvalidWrite => 0xBC,
            ZoneError::TooManyActive => 0xBD,
            ZoneError::TooManyOpen => 0xBE,
            ZoneError::InvalidTransition => 0xBF,
            ZoneError::InvalidField => 0x02,
            ZoneError::InvalidOpcode => 0x01,
        }
    }
}

/// One zone as Report Zones describes it (ZNS 1.1 §4.4.4.1, Figure 37),
/// in logical pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ZoneDescriptor {
    /// The zone's first logical page (ZSLBA).
    pub start: u64,
    /// Its writable pages (ZCAP); the zone spans the drive's zone size.
    pub capacity: u64,
    /// The write pointer, a logical page (meaningless when full, read-only
    /// or offline).
    pub wp: u64,
    /// Its state.
    pub state: ZoneState,
}
