//! The host link (`[host]`): SATA or NVMe over PCIe, its transfer model, and
//! the interface's queueing (NCQ depth; NVMe submission queues and their
//! arbitration).

use crate::error::{check_op_time, check_rate_mbps, invalid, ConfigError};
use crate::units::{Dur, Rate};
use serde::{Deserialize, Serialize};

/// The host link (SATA or NVMe over PCIe).
pub trait HostLink {
    /// A command host -> device, with `data` bytes of write data (0 for
    /// others).
    fn command_time(&mut self, data: u64) -> Dur;
    /// A read's `bytes` of data device -> host.
    fn read_data_time(&mut self, bytes: u64) -> Dur;
}

/// `host.command_overhead` per command plus the bytes at the interface's
/// rate, one direction at a time (the engine books it busy-until).
#[derive(Clone, Copy, Debug)]
pub struct SerialLink {
    overhead: Dur,
    rate: Rate,
    /// The last size and its time, per direction (requests mostly repeat
    /// their size).
    memo: [(u64, Dur); 2],
}

impl SerialLink {
    /// The link of `[host]`: `host.command_overhead` and the interface's rate.
    pub fn new(h: &HostConfig) -> SerialLink {
        SerialLink {
            overhead: h.command_overhead,
            rate: h.link_rate(),
            memo: [(u64::MAX, Dur::ZERO); 2],
        }
    }
    #[inline]
    fn time(&mut self, k: usize, bytes: u64) -> Dur {
        let m = &mut self.memo[k];
        if m.0 != bytes {
            *m = (bytes, self.rate.time_for(bytes));
        }
        m.1
    }
}

impl HostLink for SerialLink {
    #[inline]
    fn command_time(&mut self, data: u64) -> Dur {
        self.overhead + self.time(0, data)
    }
    #[inline]
    fn read_data_time(&mut self, bytes: u64) -> Dur {
        self.time(1, bytes)
    }
}

/// Host link kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Interface {
    /// SATA 3 Gb/s (300 MB/s, NCQ depth 32).
    Sata3g,
    /// SATA 6 Gb/s (600 MB/s, NCQ depth 32); the default.
    Sata6g,
    /// NVMe over PCIe 3.0 x4 (3938 MB/s).
    NvmeGen3x4,
    /// NVMe over PCIe 4.0 x4 (7877 MB/s).
    NvmeGen4x4,
}

/// The host interface (`[host]`): link kind and speed, device queue depth and NVMe queue
/// arbitration. [`HostConfig::preset`] fills it per interface.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Link kind; informational once the preset has set the figures below.
    pub interface: Interface,
    /// Device queue depth (NCQ 32 for SATA, up to 65535 for NVMe).
    pub queue_depth: u32,
    /// Link payload bandwidth in MB/s (after line coding).
    pub link_mbps: f64,
    /// Per-command protocol overhead on the link (command, setup and status frames).
    pub command_overhead: Dur,
    /// NVMe with several flows (`[[flow]]`): how the controller picks the
    /// submission queue it fetches the next command from (`rr`, or `wrr`:
    /// weighted round robin with urgent priority class).
    #[serde(default)]
    pub arbitration: Arbitration,
    /// NVMe: commands fetched from one submission queue per turn (the
    /// Arbitration Burst).
    #[serde(default = "one_u32")]
    pub arbitration_burst: u32,
    /// NVMe `wrr`: commands per round of the high, medium and low priority
    /// classes (MQSim's 4, 2, 1).
    #[serde(default = "default_wrr_weights")]
    pub wrr_weights: [u32; 3],
    /// NVMe with flows: entries of each flow's submission queue (Linux's
    /// `nvme.io_queue_depth`, 1024): a flow holds at most this many requests
    /// in the block layer and the device.
    #[serde(default = "default_sq_depth")]
    pub sq_depth: u32,
}

fn one_u32() -> u32 {
    1
}
fn default_wrr_weights() -> [u32; 3] {
    [4, 2, 1]
}
fn default_sq_depth() -> u32 {
    1024
}

impl Interface {
    /// An NVMe link (several submission queues) rather than SATA (one NCQ queue).
    pub fn is_nvme(self) -> bool {
        matches!(self, Interface::NvmeGen3x4 | Interface::NvmeGen4x4)
    }
}

impl HostConfig {
    /// SATA: 8b/10b coding, so 3 Gb/s = 300 MB/s and 6 Gb/s = 600 MB/s; a command
    /// costs a Register FIS (20 B), a DMA Setup FIS (28 B) and a Set Device Bits /
    /// status FIS (20 B) plus SOF/CRC/EOF framing, ~80 B on the wire; NCQ depth 32.
    /// NVMe: PCIe gen3 8 GT/s and gen4 16 GT/s per lane, 128b/130b, x4, so 3938 and
    /// 7877 MB/s raw; a command is a 64 B submission entry fetch and a 16 B
    /// completion entry plus TLP headers (~24 B each) and doorbell writes; we charge
    /// 1 us per command for the round trips (a typical figure for an NVMe command
    /// submission-to-fetch on a host CPU), queue depth 1024 by default.
    pub fn preset(interface: Interface) -> HostConfig {
        match interface {
            Interface::Sata3g => HostConfig {
                interface,
                queue_depth: 32,
                link_mbps: 300.0,
                command_overhead: Dur(267),
                ..HostConfig::queues()
            },
            Interface::Sata6g => HostConfig {
                interface,
                queue_depth: 32,
                link_mbps: 600.0,
                command_overhead: Dur(134),
                ..HostConfig::queues()
            },
            Interface::NvmeGen3x4 => HostConfig {
                interface,
                queue_depth: 1024,
                link_mbps: 3938.0,
                command_overhead: Dur(1000),
                ..HostConfig::queues()
            },
            Interface::NvmeGen4x4 => HostConfig {
                interface,
                queue_depth: 1024,
                link_mbps: 7877.0,
                command_overhead: Dur(1000),
                ..HostConfig::queues()
            },
        }
    }
    /// The multi-queue defaults every preset shares (filled in by `preset`).
    fn queues() -> HostConfig {
        HostConfig {
            interface: Interface::Sata6g,
            queue_depth: 0,
            link_mbps: 0.0,
            command_overhead: Dur(0),
            arbitration: Default::default(),
            arbitration_burst: one_u32(),
            wrr_weights: default_wrr_weights(),
            sq_depth: default_sq_depth(),
        }
    }
    /// The section's own rules: an operation-time overhead, a queue depth in
    /// 1..=65535, a positive link rate within range.
    pub fn check(&self) -> Result<(), ConfigError> {
        check_op_time("host.command_overhead", self.command_overhead)?;
        if self.queue_depth == 0 || self.queue_depth > 65_535 {
            return Err(invalid(
                "host.queue_depth",
                format!("must be in 1..=65535, got {}", self.queue_depth),
            ));
        }
        if !(self.link_mbps > 0.0 && self.link_mbps.is_finite()) {
            return Err(invalid("host.link_mbps", "must be positive"));
        }
        check_rate_mbps("host.link_mbps", self.link_mbps)
    }
    /// The NVMe queueing knobs the flows' submission queues use: an
    /// arbitration burst of 1..=65536 commands, weights of 1..=256, queues
    /// of 2..=65536 entries.
    pub fn check_queues(&self) -> Result<(), ConfigError> {
        if self.arbitration_burst == 0 || self.arbitration_burst > 65_536 {
            return Err(invalid(
                "host.arbitration_burst",
                format!("must be in 1..=65536, got {}", self.arbitration_burst),
            ));
        }
        if let Some(w) = self.wrr_weights.iter().find(|&&w| w == 0 || w > 256) {
            return Err(invalid(
                "host.wrr_weights",
                format!("each weight is 1..=256 commands per round (NVMe's HPW, MPW, LPW plus one), got {w}"),
            ));
        }
        if self.sq_depth < 2 || self.sq_depth > 65_536 {
            return Err(invalid(
                "host.sq_depth",
                format!(
                    "must be in 2..=65536 (NVMe's queue sizes), got {}",
                    self.sq_depth
                ),
            ));
        }
        Ok(())
    }

    /// The link's transfer rate from `link_mbps`.
    pub fn link_rate(&self) -> Rate {
        Rate::from_mb_per_s(self.link_mbps)
    }
}

/// How the controller chooses the SQ it fetches from next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arbitration {
    /// Round robin over every SQ.
    #[default]
    Rr,
    /// Weighted round robin with urgent priority class.
    Wrr,
}
