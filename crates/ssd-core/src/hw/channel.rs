//! The channel (the NAND bus between the controller and its dies): how long
//! a batch's command and address cycles and its page transfers take.
//!
//! # Contract
//! The engine keeps the channel's state machine (one transfer at a time,
//! waiting dies served first come first served, busy-until booking); the
//! model gives the durations. A batch's command phase is
//! `command_time(kind, planes)`; a program's data-in is `command_time` plus
//! `data_time(planes)`; a read's data-out is `data_time(planes)`. A model
//! whose times are the same for every batch says so with
//! [`Channel::fixed_times`], and the engine then reads them from a table.
//! [`Channel::arbitration`] says which waiting die the channel serves next
//! when it frees (first come first served unless the model says otherwise).

use crate::ftl::OpKind;
use crate::hw::NandConfig;
use crate::units::Dur;
use serde::{Deserialize, Serialize};

/// Which of the dies waiting for a channel it serves next when it frees
/// (`nand.bus_arbitration`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BusArbitration {
    /// First come, first served.
    #[default]
    Fifo,
    /// The longest-waiting die whose transfer belongs to a host or mapping
    /// read (its command or its data-out: the reads a die serves first with
    /// `controller.prioritize_reads`) goes before programs' data-in, erases'
    /// commands and GC reads; first come first served within each class. A
    /// read then waits for at most the transfer under way and the reads
    /// ahead of it, not for every page of data-in queued before it.
    ReadsFirst,
}

impl BusArbitration {
    /// The default (what `skip_serializing_if` leaves out of a report).
    pub fn is_fifo(&self) -> bool {
        *self == BusArbitration::Fifo
    }
}

/// The NAND bus's timing.
pub trait Channel {
    /// Command, address and confirm cycles of a batch of `planes`
    /// operations of `kind`.
    fn command_time(&self, kind: OpKind, planes: u32) -> Dur;
    /// Moving `pages` pages over the bus (data-in or data-out).
    fn data_time(&self, pages: u32) -> Dur;
    /// `Some((command, one page))` if every batch's command takes the same
    /// time and pages move at a fixed time each.
    #[inline]
    fn fixed_times(&self) -> Option<(Dur, Dur)> {
        None
    }
    /// Which waiting die the channel serves next (asked once, when the
    /// simulation is built).
    #[inline]
    fn arbitration(&self) -> BusArbitration {
        BusArbitration::Fifo
    }
}

/// `nand.cmd_addr_bytes` clocked at the bus rate, and pages at the bus
/// rate (`nand.bus`, `nand.bus_width_bits`): an ONFI/Toggle bus whose
/// multi-plane commands cost no more than single-plane ones, arbitrated by
/// `nand.bus_arbitration`.
#[derive(Clone, Copy, Debug)]
pub struct OnfiChannel {
    cmd: Dur,
    page: Dur,
    arbitration: BusArbitration,
}

impl OnfiChannel {
    /// The channel of `[nand]`: command and page transfer times at the bus rate, and
    /// `nand.bus_arbitration`.
    pub fn new(n: &NandConfig) -> OnfiChannel {
        OnfiChannel {
            cmd: n.cmd_time(),
            page: n.page_xfer_time(),
            arbitration: n.bus_arbitration,
        }
    }
}

impl Channel for OnfiChannel {
    #[inline]
    fn command_time(&self, _kind: OpKind, _planes: u32) -> Dur {
        self.cmd
    }
    #[inline]
    fn data_time(&self, pages: u32) -> Dur {
        Dur(self.page.0 * pages as u64)
    }
    #[inline]
    fn fixed_times(&self) -> Option<(Dur, Dur)> {
        Some((self.cmd, self.page))
    }
    fn arbitration(&self) -> BusArbitration {
        self.arbitration
    }
}
