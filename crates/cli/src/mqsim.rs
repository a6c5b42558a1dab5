//! `ssdsim import mqsim`: read an MQSim device configuration (`ssdconfig.xml`:
//! `Execution_Parameter_Set` > `Host_Parameter_Set`, `Device_Parameter_Set` >
//! `Flash_Parameter_Set`) and write the ssdsim TOML configuration of the same
//! drive.
//!
//! Field names, their meaning and the defaults of fields the file leaves out
//! are MQSim's own (`src/exec/Device_Parameter_Set.cpp`,
//! `Flash_Parameter_Set.cpp`, `Host_Parameter_Set.cpp`, and where a value is
//! used: `SSD_Device.cpp`, `ONFI_Channel_NVDDR2.h`, `PCIe_Link.h`,
//! `Address_Mapping_Unit_Base.cpp`, `Address_Mapping_Unit_Page_Level.cpp`,
//! `GC_and_WL_Unit_Base.cpp`, `GC_and_WL_Unit_Page_Level.cpp`). Every field
//! is either mapped (the header of the TOML says onto what), or approximated
//! or not represented: those are listed in the header and returned as
//! warnings, never dropped silently. Malformed XML, a value that is not a
//! number, an unknown enumeration value and a value out of range are errors
//! naming the element and the reason.

use ssd_core::units::{Dur, Size};
use ssdsim_host::config::{
    Allocation, BusSpeed, GcMode, GcPolicy, HostConfig, Interface, Precondition, SsdConfig,
    WearLeveling,
};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What `import` produces: the configuration, its TOML text (header
/// comment included) and the warnings (what ssdsim approximates or cannot
/// represent).
#[derive(Debug)]
pub struct Imported {
    /// The configuration MQSim's file describes, as far as ssdsim models it.
    pub config: SsdConfig,
    /// Its TOML, as `ssdsim import` writes it.
    pub toml: String,
    /// What ssdsim approximates or cannot represent, one line each.
    pub warnings: Vec<String>,
}

/// MQSim's `Host_Parameter_Set` fields.
const HOST_FIELDS: &[&str] = &[
    "PCIe_Lane_Bandwidth",
    "PCIe_Lane_Count",
    "SATA_Processing_Delay",
    "Enable_ResponseTime_Logging",
    "ResponseTime_Logging_Period_Length",
];

/// MQSim's `Device_Parameter_Set` fields (`Flash_Parameter_Set` is nested).
/// MQSim's parser reads `Prefered_suspend_erase_time_for_read` (one r) while
/// its shipped ssdconfig.xml spells it with two: both are known here.
const DEVICE_FIELDS: &[&str] = &[
    "Seed",
    "Enabled_Preconditioning",
    "Memory_Type",
    "HostInterface_Type",
    "IO_Queue_Depth",
    "Queue_Fetch_Size",
    "Caching_Mechanism",
    "Data_Cache_Sharing_Mode",
    "Data_Cache_Capacity",
    "Data_Cache_DRAM_Row_Size",
    "Data_Cache_DRAM_Data_Rate",
    "Data_Cache_DRAM_Data_Busrt_Size",
    "Data_Cache_DRAM_tRCD",
    "Data_Cache_DRAM_tCL",
    "Data_Cache_DRAM_tRP",
    "Address_Mapping",
    "Ideal_Mapping_Table",
    "CMT_Capacity",
    "CMT_Sharing_Mode",
    "Plane_Allocation_Scheme",
    "Transaction_Scheduling_Policy",
    "Overprovisioning_Ratio",
    "GC_Exec_Threshold",
    "GC_Block_Selection_Policy",
    "Use_Copyback_for_GC",
    "Preemptible_GC_Enabled",
    "GC_Hard_Threshold",
    "Dynamic_Wearleveling_Enabled",
    "Static_Wearleveling_Enabled",
    "Static_Wearleveling_Threshold",
    "Prefered_suspend_erase_time_for_read",
    "Preferred_suspend_erase_time_for_read",
    "Preferred_suspend_erase_time_for_write",
    "Preferred_suspend_write_time_for_read",
    "Flash_Channel_Count",
    "Flash_Channel_Width",
    "Channel_Transfer_Rate",
    "Chip_No_Per_Channel",
    "Flash_Comm_Protocol",
];

/// MQSim's `Flash_Parameter_Set` fields.
const FLASH_FIELDS: &[&str] = &[
    "Flash_Technology",
    "CMD_Suspension_Support",
    "Page_Read_Latency_LSB",
    "Page_Read_Latency_CSB",
    "Page_Read_Latency_MSB",
    "Page_Program_Latency_LSB",
    "Page_Program_Latency_CSB",
    "Page_Program_Latency_MSB",
    "Block_Erase_Latency",
    "Block_PE_Cycles_Limit",
    "Suspend_Erase_Time",
    "Suspend_Program_Time",
    "Die_No_Per_Chip",
    "Plane_No_Per_Die",
    "Block_No_Per_Plane",
    "Page_No_Per_Block",
    "Page_Capacity",
    "Page_Metadat_Capacity",
];

/// MQSim's default of each field (the static initialisers of its
/// `*_Parameter_Set.cpp`), as the text the file would hold. MQSim leaves
/// `SATA_Processing_Delay` uninitialised (a static: zero).
fn mqsim_default(name: &str) -> &'static str {
    match name {
        "PCIe_Lane_Bandwidth" => "0.4",
        "PCIe_Lane_Count" => "4",
        "SATA_Processing_Delay" => "0",
        "Enable_ResponseTime_Logging" => "false",
        "ResponseTime_Logging_Period_Length" => "400000",
        "Seed" => "123",
        "Enabled_Preconditioning" => "true",
        "Memory_Type" => "FLASH",
        "HostInterface_Type" => "NVME",
        "IO_Queue_Depth" => "1024",
        "Queue_Fetch_Size" => "512",
        "Caching_Mechanism" => "ADVANCED",
        "Data_Cache_Sharing_Mode" => "SHARED",
        "Data_Cache_Capacity" => "536870912",
        "Data_Cache_DRAM_Row_Size" => "8192",
        "Data_Cache_DRAM_Data_Rate" => "800",
        "Data_Cache_DRAM_Data_Busrt_Size" => "4",
        "Data_Cache_DRAM_tRCD" | "Data_Cache_DRAM_tCL" | "Data_Cache_DRAM_tRP" => "13",
        "Address_Mapping" => "PAGE_LEVEL",
        "Ideal_Mapping_Table" => "false",
        "CMT_Capacity" => "2097152",
        "CMT_Sharing_Mode" => "SHARED",
        "Plane_Allocation_Scheme" => "CWDP",
        "Transaction_Scheduling_Policy" => "OUT_OF_ORDER",
        "Overprovisioning_Ratio" => "0.07",
        "GC_Exec_Threshold" => "0.05",
        "GC_Block_Selection_Policy" => "RGA",
        "Use_Copyback_for_GC" => "false",
        "Preemptible_GC_Enabled" => "true",
        "GC_Hard_Threshold" => "0.005",
        "Dynamic_Wearleveling_Enabled" | "Static_Wearleveling_Enabled" => "true",
        "Static_Wearleveling_Threshold" => "100",
        "Prefered_suspend_erase_time_for_read"
        | "Preferred_suspend_erase_time_for_read"
        | "Preferred_suspend_erase_time_for_write" => "700000",
        "Preferred_suspend_write_time_for_read" => "100000",
        "Flash_Channel_Count" => "8",
        "Flash_Channel_Width" => "1",
        "Channel_Transfer_Rate" => "300",
        "Chip_No_Per_Channel" => "4",
        "Flash_Comm_Protocol" => "NVDDR2",
        "Flash_Technology" => "MLC",
        "CMD_Suspension_Support" => "ERASE",
        "Page_Read_Latency_LSB" | "Page_Read_Latency_CSB" | "Page_Read_Latency_MSB" => "75000",
        "Page_Program_Latency_LSB" | "Page_Program_Latency_CSB" | "Page_Program_Latency_MSB" => {
            "750000"
        }
        "Block_Erase_Latency" => "3800000",
        "Block_PE_Cycles_Limit" => "10000",
        "Suspend_Erase_Time" => "700000",
        "Suspend_Program_Time" => "100000",
        "Die_No_Per_Chip" | "Plane_No_Per_Die" => "2",
        "Block_No_Per_Plane" => "2048",
        "Page_No_Per_Block" => "256",
        "Page_Capacity" => "8192",
        "Page_Metadat_Capacity" => "1872",
        _ => unreachable!("no MQSim field {name}"),
    }
}

/// MQSim's `max_ongoing_gc_reqs_per_plane` (SSD_Device.cpp passes 10): the
/// GC threshold in free blocks is never below it.
const MQSIM_MAX_ONGOING_GC_PER_PLANE: u64 = 10;
/// MQSim's PCIe link: TLPs of at most 128 payload bytes, each with a 20-byte
/// TLP header, 6 bytes of DLLP and 2 of physical-layer overhead (PCIe_Link.h).
const PCIE_TLP_PAYLOAD: f64 = 128.0;
const PCIE_TLP_OVERHEAD: f64 = 28.0;

/// One field's value: from the file (with its line) or MQSim's default.
#[derive(Clone, Debug)]
struct Field {
    path: String,
    text: String,
    line: Option<u32>,
}

impl Field {
    fn at(&self) -> String {
        match self.line {
            Some(l) => format!("{} (line {l})", self.path),
            None => format!("{} (MQSim's default)", self.path),
        }
    }
    fn shown(&self) -> String {
        match self.line {
            Some(_) => format!("{} = {}", self.name(), self.text),
            None => format!("{} = {} (MQSim's default)", self.name(), self.text),
        }
    }
    fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
    fn err(&self, reason: impl std::fmt::Display) -> String {
        format!("{}: {reason}", self.at())
    }
    fn uint(&self, max: u64) -> Result<u64, String> {
        let t = self.text.as_str();
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.err(format!("expected a non-negative integer, got {t:?}")));
        }
        match t.parse::<u64>() {
            Ok(v) if v <= max => Ok(v),
            _ => Err(self.err(format!("{t} is out of range (at most {max})"))),
        }
    }
    /// An integer of at least 1 and at most `max`.
    fn count(&self, max: u64) -> Result<u64, String> {
        let v = self.uint(max)?;
        if v == 0 {
            return Err(self.err("must be at least 1"));
        }
        Ok(v)
    }
    fn float(&self) -> Result<f64, String> {
        let t = self.text.as_str();
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.err(format!("expected a number, got {t:?}"))),
        }
    }
    /// MQSim reads a boolean as "anything but FALSE (any case) is true"; a
    /// value other than true or false is refused here instead.
    fn boolean(&self) -> Result<bool, String> {
        match self.text.to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(self.err(format!("expected true or false, got {:?}", self.text))),
        }
    }
    /// One of `known` (upper case, as MQSim compares after `toupper`).
    fn choice(&self, known: &[&'static str]) -> Result<&'static str, String> {
        let up = self.text.to_ascii_uppercase();
        known.iter().copied().find(|k| *k == up).ok_or_else(|| {
            self.err(format!(
                "unknown value {:?} (MQSim knows {})",
                self.text,
                known.join(", ")
            ))
        })
    }
}

/// The fields of one parameter set, read from the file.
struct Section {
    path: String,
    vals: BTreeMap<String, Field>,
    /// The fields read that the file leaves out: (name, MQSim's default used).
    defaulted: std::cell::RefCell<BTreeMap<String, &'static str>>,
}

impl Section {
    fn get(&self, name: &str) -> Field {
        self.vals.get(name).cloned().unwrap_or_else(|| {
            let text = mqsim_default(name);
            self.defaulted.borrow_mut().insert(name.to_string(), text);
            Field {
                path: format!("{}/{name}", self.path),
                text: text.to_string(),
                line: None,
            }
        })
    }

    /// The warning for the fields read that the file leaves out, if any:
    /// each with the default taken. `whole`: the file has no such element
    /// at all (every field is MQSim's default), said more loudly.
    fn defaulted_warning(&self, whole: bool) -> Option<String> {
        let d = self.defaulted.borrow();
        if d.is_empty() {
            return None;
        }
        let list: Vec<String> = d.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        let elem = self.path.rsplit('/').next().unwrap_or(&self.path);
        Some(if whole {
            format!(
                "defaulted: NO <{elem}> in the file ({}): every one of its {} elements is \
                 MQSim's default, not what the file describes: {}",
                self.path,
                d.len(),
                list.join(", ")
            )
        } else {
            format!(
                "defaulted: {} leaves out {} element{} MQSim reads; MQSim's defaults used \
                 (as MQSim does): {}",
                self.path,
                d.len(),
                if d.len() == 1 { "" } else { "s" },
                list.join(", ")
            )
        })
    }
}

/// Read the value elements of `node` named in `known`; children named in
/// `nested` are returned for the caller. An element given twice is an error
/// (MQSim would take the last one silently); an unknown one is a warning
/// (MQSim ignores it too).
fn read_section<'a, 'i>(
    doc: &roxmltree::Document,
    node: roxmltree::Node<'a, 'i>,
    path: &str,
    known: &[&str],
    nested: &[&str],
    warnings: &mut Vec<String>,
) -> Result<(Section, Vec<roxmltree::Node<'a, 'i>>), String> {
    let mut vals: BTreeMap<String, Field> = BTreeMap::new();
    let mut kids = Vec::new();
    for c in node.children() {
        if c.is_text() {
            let t = c.text().unwrap_or("").trim();
            if !t.is_empty() {
                let line = doc.text_pos_at(c.range().start).row;
                return Err(format!(
                    "{path} (line {line}): unexpected text {:?} between elements",
                    t.chars().take(40).collect::<String>()
                ));
            }
            continue;
        }
        if !c.is_element() {
            continue;
        }
        let name = c.tag_name().name();
        let line = doc.text_pos_at(c.range().start).row;
        let here = format!("{path}/{name}");
        if nested.contains(&name) {
            if kids
                .iter()
                .any(|k: &roxmltree::Node| k.tag_name().name() == name)
            {
                return Err(format!("{here} (line {line}): given twice"));
            }
            kids.push(c);
            continue;
        }
        if !known.contains(&name) {
            warnings.push(format!(
                "{here} (line {line}): not a field MQSim reads; ignored (as MQSim ignores it)"
            ));
            continue;
        }
        if c.children().any(|k| k.is_element()) {
            return Err(format!(
                "{here} (line {line}): expected a value, found child elements"
            ));
        }
        if let Some(prev) = vals.get(name) {
            return Err(format!(
                "{here} (line {line}): given twice (first on line {})",
                prev.line.unwrap_or(0)
            ));
        }
        let text: String = c
            .children()
            .filter(|k| k.is_text())
            .filter_map(|k| k.text())
            .collect();
        vals.insert(
            name.to_string(),
            Field {
                path: here,
                text: text.trim().to_string(),
                line: Some(line),
            },
        );
    }
    Ok((
        Section {
            path: path.to_string(),
            vals,
            defaulted: Default::default(),
        },
        kids,
    ))
}

/// What became of one MQSim field.
#[derive(Default)]
struct Notes {
    mapped: Vec<String>,
    approximated: Vec<String>,
    dropped: Vec<String>,
    unused: Vec<String>,
}

/// Import the MQSim configuration `text` (`source` names it in messages).
pub fn import(text: &str, source: &str) -> Result<Imported, String> {
    import_inner(text, source).map_err(|e| format!("{source}: {e}"))
}

fn import_inner(text: &str, source: &str) -> Result<Imported, String> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: false,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(text, opts)
        .map_err(|e| format!("not well-formed XML: {e}"))?;
    let root = doc.root_element();
    let rname = root.tag_name().name();
    if rname != "Execution_Parameter_Set" {
        return Err(format!(
            "the root element is <{rname}>, not <Execution_Parameter_Set>: \
             not an MQSim device configuration (ssdconfig.xml){}",
            if rname == "MQSim_IO_Scenarios" {
                " but a workload definition"
            } else {
                ""
            }
        ));
    }
    let mut warnings = Vec::new();
    let (_, tops) = read_section(
        &doc,
        root,
        "Execution_Parameter_Set",
        &[],
        &["Host_Parameter_Set", "Device_Parameter_Set"],
        &mut warnings,
    )?;
    let find = |n: &str| tops.iter().find(|k| k.tag_name().name() == n).copied();
    let host_path = "Execution_Parameter_Set/Host_Parameter_Set";
    let dev_path = "Execution_Parameter_Set/Device_Parameter_Set";
    let flash_path = "Execution_Parameter_Set/Device_Parameter_Set/Flash_Parameter_Set";
    let empty = |p: &str| Section {
        path: p.to_string(),
        vals: BTreeMap::new(),
        defaulted: Default::default(),
    };
    let host_whole = find("Host_Parameter_Set").is_none();
    let host = match find("Host_Parameter_Set") {
        Some(n) => read_section(&doc, n, host_path, HOST_FIELDS, &[], &mut warnings)?.0,
        None => empty(host_path),
    };
    let Some(dev_node) = find("Device_Parameter_Set") else {
        return Err(
            "no <Device_Parameter_Set> in <Execution_Parameter_Set>: there is no drive to import"
                .to_string(),
        );
    };
    let (dev, dkids) = read_section(
        &doc,
        dev_node,
        dev_path,
        DEVICE_FIELDS,
        &["Flash_Parameter_Set"],
        &mut warnings,
    )?;
    let flash_whole = dkids.is_empty();
    let flash = match dkids.first() {
        Some(n) => read_section(&doc, *n, flash_path, FLASH_FIELDS, &[], &mut warnings)?.0,
        None => empty(flash_path),
    };
    let (mut config, mut notes) = map(&host, &dev, &flash)?;
    // MQSim fills in what the file leaves out: so does the import, but says
    // which elements and what it took (a whole set missing first).
    let sets = [(&flash, flash_whole), (&host, host_whole), (&dev, false)];
    let mut defaulted: Vec<String> = sets
        .iter()
        .filter(|(_, whole)| *whole)
        .chain(sets.iter().filter(|(_, whole)| !*whole))
        .filter_map(|(s, whole)| s.defaulted_warning(*whole))
        .collect();
    defaulted.append(&mut warnings);
    warnings = defaulted;
    // Whatever ssdsim refuses (say, over-provisioning too small for the GC
    // threshold) is refused now, not when the file is run.
    let invalid = |e: ssdsim_host::config::ConfigError| {
        format!("the imported drive is not a valid ssdsim configuration: {e}")
    };
    let s = config.validate().map_err(invalid)?;
    // MQSim does not size the controller's DRAM: give it room for the write
    // buffer and the mapping table as ssdsim's FTL keeps it (page: every
    // entry; DFTL: the cache and the directory of translation pages).
    let entry = ftl::page::entry_bytes(s.geometry.total_pages());
    let table = if config.ftl.kind == ssd_core::config::FtlKind::Dftl {
        let ept = (s.geometry.page_size as u64 / entry).max(1);
        s.logical_pages.div_ceil(ept) * entry + config.ftl.dftl.cmt_size.0
    } else {
        s.logical_pages * entry
    };
    let dram = config.dram.write_buffer.0 + table;
    config.dram.capacity = Size(dram).into();
    notes.mapped.push(format!(
        "(no field) dram.capacity = {dram} B: the write buffer and ssdsim's mapping table \
         (MQSim does not size the DRAM)"
    ));
    config.validate().map_err(invalid)?;
    warnings.extend(
        notes
            .approximated
            .iter()
            .map(|s| format!("approximated: {s}")),
    );
    warnings.extend(
        notes
            .dropped
            .iter()
            .map(|s| format!("not represented in ssdsim: {s}")),
    );
    let toml = render(&config, &notes, source);
    Ok(Imported {
        config,
        toml,
        warnings,
    })
}

/// MQSim's CMT entry: LPA + PPA + a bit per sector of the page, in bytes
/// (`Address_Mapping_Unit_Page_Level.cpp`).
pub fn mqsim_cmt_entry_bytes(total_physical_pages: u64, sectors_per_page: u64) -> u32 {
    ((2.0 * (total_physical_pages as f64).log2() + sectors_per_page as f64) / 8.0).ceil() as u32
}

/// MQSim's page transfer time on an NV-DDR2 channel (`ONFI_Channel_NVDDR2.h`):
/// `bytes / width / 2` double-data-rate cycles of `2 * floor(1000 / MT/s)` ns.
pub fn mqsim_transfer_ns(bytes: u64, width_bytes: u64, mts: u64) -> u64 {
    (bytes / width_bytes / 2) * ((1000 / mts) * 2)
}

fn map(host: &Section, dev: &Section, flash: &Section) -> Result<(SsdConfig, Notes), String> {
    let mut n = Notes::default();
    let mut c = SsdConfig::default();

    // --- refused outright, as MQSim refuses them ---
    dev.get("Memory_Type").choice(&["FLASH"])?;
    dev.get("Flash_Comm_Protocol").choice(&["NVDDR2"])?;

    // --- geometry ---
    let f = dev.get("Flash_Channel_Count");
    c.layout.channels = f.count(u32::MAX as u64)? as u32;
    n.mapped.push(format!("{} -> layout.channels", f.shown()));
    let f = dev.get("Chip_No_Per_Channel");
    c.layout.ways = f.count(u32::MAX as u64)? as u32;
    n.mapped.push(format!("{} -> layout.ways", f.shown()));
    let geo = |name: &str, max: u64| -> Result<(u32, Field), String> {
        let f = flash.get(name);
        Ok((f.count(max)? as u32, f))
    };
    let (v, f) = geo("Die_No_Per_Chip", u32::MAX as u64)?;
    c.nand.dies_per_chip = v;
    n.mapped
        .push(format!("{} -> nand.dies_per_chip", f.shown()));
    let (v, f) = geo("Plane_No_Per_Die", 16)?;
    c.nand.planes_per_die = v;
    n.mapped
        .push(format!("{} -> nand.planes_per_die", f.shown()));
    let (v, f) = geo("Block_No_Per_Plane", u32::MAX as u64)?;
    c.nand.blocks_per_plane = v;
    n.mapped
        .push(format!("{} -> nand.blocks_per_plane", f.shown()));
    let (v, f) = geo("Page_No_Per_Block", 65_535)?;
    c.nand.pages_per_block = v;
    n.mapped
        .push(format!("{} -> nand.pages_per_block", f.shown()));
    let f = flash.get("Page_Capacity");
    let page = f.count(u32::MAX as u64)?;
    if !page.is_multiple_of(512) {
        return Err(f.err(format!(
            "{page} bytes is not a whole number of 512-byte sectors (MQSim counts pages in sectors)"
        )));
    }
    c.nand.page_size = Size(page);
    n.mapped.push(format!("{} -> nand.page_size", f.shown()));
    let total_pages = c.layout.channels as u128
        * c.layout.ways as u128
        * c.nand.dies_per_chip as u128
        * c.nand.planes_per_die as u128
        * c.nand.blocks_per_plane as u128
        * c.nand.pages_per_block as u128;
    if total_pages >= u32::MAX as u128 {
        return Err(format!(
            "{}: the drive has {total_pages} physical pages; MQSim and ssdsim address at most 2^32 - 1",
            dev.path
        ));
    }
    let total_pages = total_pages as u64;
    let f = flash.get("Page_Metadat_Capacity");
    f.uint(u32::MAX as u64)?;
    n.dropped.push(format!(
        "{}: the spare (out-of-band) area is not modelled; a page moves its {page} data bytes",
        f.shown()
    ));

    // --- cell type and timing ---
    let f = flash.get("Flash_Technology");
    let tech = f.choice(&["SLC", "MLC", "TLC"])?;
    c.nand.cell = tech.into();
    c.nand.name = "mqsim-import".into();
    n.mapped.push(format!("{} -> nand.cell", f.shown()));
    let levels: &[&str] = match tech {
        "SLC" => &["LSB"],
        "MLC" => &["LSB", "MSB"],
        _ => &["LSB", "CSB", "MSB"],
    };
    for (what, prefix, field) in [
        ("read", "Page_Read_Latency_", "nand.t_r"),
        ("program", "Page_Program_Latency_", "nand.t_prog"),
    ] {
        let mut vals = Vec::new();
        for l in ["LSB", "CSB", "MSB"] {
            let f = flash.get(&format!("{prefix}{l}"));
            let v = f.uint(1_000_000_000)?;
            if levels.contains(&l) {
                if v == 0 {
                    return Err(f.err("a flash operation takes time: must be at least 1 ns"));
                }
                vals.push((f, v));
            } else {
                n.unused
                    .push(format!("{}: not read by MQSim for {tech} flash", f.shown()));
            }
        }
        // MQSim's own average_flash_*_latency (SSD_Device.cpp): integer mean.
        let mean = vals.iter().map(|(_, v)| v).sum::<u64>() / vals.len() as u64;
        let names = vals
            .iter()
            .map(|(f, _)| f.shown())
            .collect::<Vec<_>>()
            .join(", ");
        if vals.iter().all(|(_, v)| *v == mean) {
            n.mapped.push(format!("{names} -> {field} = {mean} ns"));
        } else {
            n.approximated.push(format!(
                "{names}: ssdsim has one {what} time for every page, {field} = {mean} ns, \
                 their mean (MQSim's average_flash_{what}_latency); MQSim times each page by \
                 its bit ({})",
                levels.join("/")
            ));
        }
        let d = Dur(mean);
        if field == "nand.t_r" {
            c.nand.t_r = d;
        } else {
            c.nand.t_prog = d;
        }
    }
    let f = flash.get("Block_Erase_Latency");
    let v = f.uint(1_000_000_000)?;
    if v == 0 {
        return Err(f.err("a flash operation takes time: must be at least 1 ns"));
    }
    c.nand.t_bers = Dur(v);
    n.mapped.push(format!("{} -> nand.t_bers (ns)", f.shown()));
    let f = flash.get("Block_PE_Cycles_Limit");
    f.uint(u32::MAX as u64)?;
    n.dropped.push(format!(
        "{}: ssdsim counts erases (wear) but sets blocks no endurance limit",
        f.shown()
    ));
    let f = flash.get("CMD_Suspension_Support");
    let susp = f.choice(&["NONE", "ERASE", "PROGRAM", "PROGRAM_ERASE"])?;
    let mut susp_fields = vec![
        flash.get("Suspend_Erase_Time"),
        flash.get("Suspend_Program_Time"),
        dev.get("Preferred_suspend_erase_time_for_write"),
        dev.get("Preferred_suspend_write_time_for_read"),
    ];
    for name in [
        "Prefered_suspend_erase_time_for_read",
        "Preferred_suspend_erase_time_for_read",
    ] {
        if dev.vals.contains_key(name) || name.starts_with("Prefered") {
            susp_fields.push(dev.get(name));
        }
    }
    for s in &susp_fields {
        s.uint(u64::MAX)?;
    }
    let sf = susp_fields
        .iter()
        .map(|f| f.shown())
        .collect::<Vec<_>>()
        .join(", ");
    if susp == "NONE" {
        n.mapped.push(format!(
            "{}: no program/erase suspension, as in ssdsim",
            f.shown()
        ));
        n.unused
            .push(format!("{sf}: unused without suspension (as in MQSim)"));
    } else {
        n.dropped.push(format!(
            "{}, {sf}: ssdsim does not suspend a program or an erase for a read \
             (controller.prioritize_reads orders queued operations only)",
            f.shown()
        ));
    }

    // --- channel ---
    let fw = dev.get("Flash_Channel_Width");
    let width = fw.count(64)?;
    let fr = dev.get("Channel_Transfer_Rate");
    let mts = fr.count(1_000_000)?;
    if mts > 1000 {
        return Err(fr.err(format!(
            "{mts} MT/s: MQSim clocks a transfer in floor(1000 / rate) = 0 ns above 1000 MT/s \
             (an infinitely fast channel), which ssdsim cannot represent"
        )));
    }
    let xfer = mqsim_transfer_ns(page, width, mts);
    if xfer == 0 {
        return Err(fw.err(format!(
            "a {page}-byte page over a {width}-byte channel moves in 0 ns in MQSim's formula"
        )));
    }
    c.nand.bus = BusSpeed::PageTime(Dur(xfer));
    c.nand.bus_width_bits = (width * 8) as u32;
    c.nand.multiplane = true;
    n.mapped.push(format!(
        "{}, {} -> nand.bus = \"{}/page\", nand.bus_width_bits = {}: MQSim's NV-DDR2 \
         transfer time, {page} / {width} / 2 cycles of 2 x floor(1000 / {mts}) ns",
        fw.shown(),
        fr.shown(),
        Dur(xfer),
        width * 8
    ));

    // --- host interface ---
    let f = dev.get("HostInterface_Type");
    let sata = f.choice(&["NVME", "SATA"])? == "SATA";
    let iface = if sata {
        Interface::Sata6g
    } else {
        Interface::NvmeGen3x4
    };
    c.host = HostConfig::preset(iface);
    let fb = host.get("PCIe_Lane_Bandwidth");
    let bw = fb.float()?;
    if bw <= 0.0 {
        return Err(fb.err(format!("{bw} GB/s: a lane's bandwidth must be positive")));
    }
    let fl = host.get("PCIe_Lane_Count");
    let lanes = fl.count(64)?;
    let link =
        bw * lanes as f64 * 1000.0 * PCIE_TLP_PAYLOAD / (PCIE_TLP_PAYLOAD + PCIE_TLP_OVERHEAD);
    // ssdsim keeps rates to 0.001 MB/s.
    c.host.link_mbps = (link * 1000.0).round() / 1000.0;
    n.mapped.push(format!(
        "{} -> host.interface = \"{}\"",
        f.shown(),
        if sata { "sata6g" } else { "nvme-gen3x4" }
    ));
    n.approximated.push(format!(
        "{}, {}: host.link_mbps = {} (lanes x GB/s x 128 / 156: MQSim's link carries TLPs of \
         at most 128 payload bytes with 28 bytes of header and framing; exact for transfers \
         of whole 128-byte TLPs, a little fast for a tail)",
        fb.shown(),
        fl.shown(),
        c.host.link_mbps
    ));
    let f = host.get("SATA_Processing_Delay");
    let d = f.uint(1_000_000_000)?;
    if sata {
        c.host.command_overhead = Dur(d);
        n.approximated.push(format!(
            "{}: host.command_overhead = {} ns, once per command on the link; MQSim's HBA waits \
             it at each step of a command (fetch, submission)",
            f.shown(),
            d
        ));
        n.dropped.push(
            "the NVMe command round trips: with SATA, MQSim still carries data over its PCIe \
             link (so does the import: host.link_mbps)"
                .into(),
        );
    } else {
        n.unused
            .push(format!("{}: unused with NVMe (as in MQSim)", f.shown()));
        n.approximated.push(format!(
            "MQSim's NVMe queue traffic (64-byte commands, 16-byte completions, doorbells on \
             the link): ssdsim charges host.command_overhead = {} per command",
            c.host.command_overhead
        ));
    }
    let f = dev.get("IO_Queue_Depth");
    let qd = f.count(65_535)? as u32;
    c.sched.nr_requests = qd;
    c.sched.kind = "noop".into();
    c.sched.merge = false;
    c.sched.plug = false;
    n.mapped.push(
        "(no field) MQSim has no host block layer: sched.kind = \"noop\", merge = false, \
         plug = false"
            .into(),
    );
    let ff = dev.get("Queue_Fetch_Size");
    let fetch = ff.count(65_535)? as u32;
    if sata {
        c.host.queue_depth = qd;
        n.mapped.push(format!(
            "{} -> host.queue_depth and sched.nr_requests (the host holds no more than the device queue)",
            f.shown()
        ));
        n.dropped.push(format!(
            "{}: ssdsim fetches a command whenever the device has a free tag",
            ff.shown()
        ));
    } else {
        // MQSim's NVMe host interface: each stream's submission queue has
        // IO_Queue_Depth entries and the device fetches from it while fewer
        // than Queue_Fetch_Size of the stream's commands are in service.
        c.host.sq_depth = qd.max(2);
        c.host.queue_depth = fetch.min(qd).max(1);
        n.mapped.push(format!(
            "{} -> host.sq_depth (each flow's submission queue) and sched.nr_requests",
            f.shown()
        ));
        n.mapped.push(format!(
            "{} -> host.queue_depth = {} (commands the controller holds)",
            ff.shown(),
            c.host.queue_depth
        ));
        n.approximated.push(format!(
            "{}: MQSim limits each stream's commands in service; ssdsim's host.queue_depth \
             limits all flows' together (the same with one flow)",
            ff.shown()
        ));
    }
    for name in [
        "Enable_ResponseTime_Logging",
        "ResponseTime_Logging_Period_Length",
    ] {
        let f = host.get(name);
        if name.starts_with("Enable") {
            if f.boolean()? {
                n.dropped.push(format!(
                    "{}: no periodic response-time log (the report has latency percentiles; \
                     `run --power-trace` samples IOPS and bandwidth over time)",
                    f.shown()
                ));
            } else {
                n.unused.push(format!("{}: off", f.shown()));
            }
        } else {
            f.uint(u64::MAX)?;
            n.unused.push(format!(
                "{}: a logging setting, no effect on the drive",
                f.shown()
            ));
        }
    }

    // --- FTL: mapping, CMT, over-provisioning, GC, wear levelling ---
    let f = dev.get("Address_Mapping");
    if f.choice(&["PAGE_LEVEL", "HYBRID"])? == "HYBRID" {
        return Err(f.err(
            "HYBRID: ssdsim's hybrid FTLs (bast, fast, last) are other schemes than MQSim's \
             hybrid mapping unit; import the drive with PAGE_LEVEL and choose an FTL with --ftl",
        ));
    }
    let fi = dev.get("Ideal_Mapping_Table");
    let ideal = fi.boolean()?;
    let fc = dev.get("CMT_Capacity");
    let cmt = fc.uint(u32::MAX as u64)?;
    let entry = mqsim_cmt_entry_bytes(total_pages, page / 512);
    c.ftl.dftl.cmt_entry_bytes = entry;
    if ideal {
        c.ftl.kind = ssd_core::config::FtlKind::Page;
        n.mapped.push(format!(
            "{}, {} -> ftl.kind = \"page\" (the whole mapping table in DRAM)",
            f.shown(),
            fi.shown()
        ));
        n.unused.push(format!(
            "{}: no mapping cache with an ideal mapping table",
            fc.shown()
        ));
    } else {
        c.ftl.kind = ssd_core::config::FtlKind::Dftl;
        if cmt < entry as u64 {
            return Err(fc.err(format!(
                "{cmt} bytes cannot hold one {entry}-byte mapping entry"
            )));
        }
        c.ftl.dftl.cmt_size = Size(cmt);
        n.mapped.push(format!(
            "{}, {} -> ftl.kind = \"dftl\" (demand-cached mapping: translation pages on flash)",
            f.shown(),
            fi.shown()
        ));
        n.mapped.push(format!(
            "{} -> ftl.cmt_size; ftl.cmt_entry_bytes = {entry}, MQSim's entry: \
             ceil((2 log2 {total_pages} + {} sectors) / 8)",
            fc.shown(),
            page / 512
        ));
        let sectors = page / 512;
        let gtd = (((total_pages as f64).log2() + sectors as f64) / 8.0).ceil() as u64;
        let ours = ftl::page::entry_bytes(total_pages);
        if page / gtd != page / ours {
            n.approximated.push(format!(
                "translation pages: MQSim's hold {} entries of ceil((log2 {total_pages} + \
                 {sectors}) / 8) = {gtd} bytes, ssdsim's DFTL {} entries of {ours} bytes \
                 (no sector bitmap), so it reads and writes fewer translation pages",
                page / gtd,
                page / ours
            ));
        }
    }
    for name in ["CMT_Sharing_Mode", "Data_Cache_Sharing_Mode"] {
        let f = dev.get(name);
        if f.choice(&["SHARED", "EQUAL_PARTITIONING"])? == "SHARED" {
            n.mapped
                .push(format!("{}: one cache for all I/O, as ssdsim's", f.shown()));
        } else {
            n.dropped.push(format!(
                "{}: ssdsim runs one I/O flow and does not partition caches between flows",
                f.shown()
            ));
        }
    }
    let f = dev.get("Overprovisioning_Ratio");
    let r = f.float()?;
    if !(r > 0.0 && r < 1.0) {
        return Err(f.err(format!(
            "{r}: the share of physical space kept spare must be in (0, 1)"
        )));
    }
    c.ftl.op = r / (1.0 - r);
    n.mapped.push(format!(
        "{} -> ftl.op = {} = r / (1 - r): MQSim keeps logical = physical x (1 - r), \
         ssdsim's op is (physical - logical) / logical",
        f.shown(),
        c.ftl.op
    ));
    let f = dev.get("GC_Exec_Threshold");
    let g = f.float()?;
    if !(0.0..1.0).contains(&g) {
        return Err(f.err(format!(
            "{g}: the share of a plane's blocks kept free must be in [0, 1)"
        )));
    }
    let blocks = c.nand.blocks_per_plane as u64;
    let th = ((g * blocks as f64) as u64)
        .max(1)
        .max(MQSIM_MAX_ONGOING_GC_PER_PLANE);
    c.ftl.gc_threshold_blocks = th as u32;
    n.mapped.push(format!(
        "{} -> ftl.gc_threshold_blocks = {th}: GC while fewer free blocks remain in a plane, \
         MQSim's max(floor({g} x {blocks}), 10)",
        f.shown()
    ));
    let f = dev.get("GC_Block_Selection_Policy");
    match f.choice(&["GREEDY", "RGA", "RANDOM", "RANDOM_P", "RANDOM_PP", "FIFO"])? {
        "GREEDY" => {
            c.ftl.gc_policy = GcPolicy::Greedy;
            n.mapped
                .push(format!("{} -> ftl.gc_policy = \"greedy\"", f.shown()));
        }
        "FIFO" => {
            c.ftl.gc_policy = GcPolicy::Fifo;
            n.mapped
                .push(format!("{} -> ftl.gc_policy = \"fifo\"", f.shown()));
        }
        "RANDOM" => {
            c.ftl.gc_policy = GcPolicy::Random;
            n.mapped
                .push(format!("{} -> ftl.gc_policy = \"random\"", f.shown()));
        }
        "RGA" => {
            let d = (blocks as f64).log2().floor().max(1.0);
            let frac = (d / blocks as f64).min(1.0);
            c.ftl.gc_policy = GcPolicy::Windowed(frac);
            n.approximated.push(format!(
                "{}: ftl.gc_policy = \"windowed:{frac}\": MQSim's randomized greedy takes the \
                 best of floor(log2 {blocks}) = {d} random blocks of the plane; ssdsim's window \
                 is that fraction of the plane's full blocks ({d} when all are full)",
                f.shown()
            ));
        }
        other => {
            c.ftl.gc_policy = GcPolicy::Random;
            n.approximated.push(format!(
                "{}: ftl.gc_policy = \"random\"; MQSim's {other} restricts the random pick to \
                 blocks with invalid pages{}",
                f.shown(),
                if other == "RANDOM_PP" {
                    " above an occupancy threshold"
                } else {
                    ""
                }
            ));
        }
    }
    let f = dev.get("Use_Copyback_for_GC");
    if f.boolean()? {
        n.dropped.push(format!(
            "{}: ssdsim's GC moves a page through the controller (read out, program in), \
             never by on-die copyback",
            f.shown()
        ));
    } else {
        n.mapped.push(format!(
            "{}: GC moves pages through the controller, as ssdsim's",
            f.shown()
        ));
    }
    let fp = dev.get("Preemptible_GC_Enabled");
    let fh = dev.get("GC_Hard_Threshold");
    let hard = fh.float()?;
    if !(0.0..1.0).contains(&hard) {
        return Err(fh.err(format!("{hard}: must be in [0, 1)")));
    }
    if fp.boolean()? {
        c.ftl.gc_mode = Some(GcMode::Paced);
        n.mapped.push(format!(
            "{} -> ftl.gc_mode = \"paced\": GC's page operations yield to host work, and \
             GC keeps pace with host writes from one block above ftl.gc_threshold_blocks",
            fp.shown()
        ));
        n.dropped.push(format!(
            "{}: ssdsim's paced GC goes first for a plane once a frontier there holds a block \
             not yet erased, not at a share of free blocks",
            fh.shown()
        ));
    } else {
        c.ftl.gc_mode = Some(GcMode::Blocking);
        n.mapped.push(format!(
            "{} -> ftl.gc_mode = \"blocking\": GC is not preempted",
            fp.shown()
        ));
        n.unused
            .push(format!("{}: used by preemptible GC only", fh.shown()));
    }
    let fd = dev.get("Dynamic_Wearleveling_Enabled");
    let fs = dev.get("Static_Wearleveling_Enabled");
    let ft = dev.get("Static_Wearleveling_Threshold");
    let (dynamic, stat) = (fd.boolean()?, fs.boolean()?);
    let t = ft.uint(u32::MAX as u64)?;
    c.ftl.wear_leveling = match (dynamic, stat) {
        (_, true) => WearLeveling::Static,
        (true, false) => WearLeveling::Dynamic,
        (false, false) => WearLeveling::None,
    };
    // MQSim moves cold data when max - min erases >= T; ssdsim when > T.
    c.ftl.static_wl_threshold = t.saturating_sub(1) as u32;
    let wl = format!(
        "{}, {}, {} -> ftl.wear_leveling = \"{}\", ftl.static_wl_threshold = {} (MQSim acts at \
         max - min erases >= {t}, ssdsim above its threshold)",
        fd.shown(),
        fs.shown(),
        ft.shown(),
        match c.ftl.wear_leveling {
            WearLeveling::Static => "static",
            WearLeveling::Dynamic => "dynamic",
            WearLeveling::None => "none",
        },
        c.ftl.static_wl_threshold
    );
    if stat && !dynamic {
        n.approximated.push(format!(
            "{wl}; ssdsim's static wear levelling includes the dynamic one"
        ));
    } else {
        n.mapped.push(wl);
    }
    let f = dev.get("Plane_Allocation_Scheme");
    // The 24 orders of C, W, D, P MQSim knows.
    const SCHEMES: [&str; 24] = [
        "CDPW", "CDWP", "CPDW", "CPWD", "CWDP", "CWPD", "DCPW", "DCWP", "DPCW", "DPWC", "DWCP",
        "DWPC", "PCDW", "PCWD", "PDCW", "PDWC", "PWCD", "PWDC", "WCDP", "WCPD", "WDCP", "WDPC",
        "WPCD", "WPDC",
    ];
    let s = f.choice(&SCHEMES)?;
    let (alloc, name) = match s {
        "CWDP" => (Allocation::Cwdp, "cwdp"),
        "PDWC" => (Allocation::Pdwc, "pdwc"),
        "WCDP" => (Allocation::Wcdp, "wcdp"),
        _ if s.starts_with('P') => (Allocation::Pdwc, "pdwc"),
        _ if s.starts_with('W') => (Allocation::Wcdp, "wcdp"),
        _ => (Allocation::Cwdp, "cwdp"),
    };
    c.ftl.allocation = alloc;
    // MQSim places a page by its LPA (Address_Mapping_Unit_Page_Level::
    // allocate_plane_for_user_write), not by arrival.
    c.ftl.plane_allocation = ssdsim_host::config::PlaneAllocation::Static;
    if s.eq_ignore_ascii_case(name) {
        n.mapped.push(format!(
            "{} -> ftl.allocation = \"{name}\", ftl.plane_allocation = \"static\" (by LPA, as MQSim)",
            f.shown()
        ));
    } else {
        n.approximated.push(format!(
            "{}: ftl.allocation = \"{name}\", ftl.plane_allocation = \"static\"; ssdsim stripes in the orders CWDP, PDWC and WCDP \
             only (this one {})",
            f.shown(),
            if s.starts_with('D') {
                "is MQSim's default, none starting with the die"
            } else {
                "starts with the same unit"
            }
        ));
    }
    let f = dev.get("Transaction_Scheduling_Policy");
    c.controller.prioritize_reads = true;
    match f.choice(&["OUT_OF_ORDER", "PRIORITY_OUT_OF_ORDER", "FLIN"])? {
        "OUT_OF_ORDER" => n.mapped.push(format!(
            "{} -> controller.prioritize_reads = true (reads served before programs and erases)",
            f.shown()
        )),
        "PRIORITY_OUT_OF_ORDER" => n.mapped.push(format!(
            "{} -> controller.prioritize_reads = true; its NVMe priority classes do not matter \
             with ssdsim's one I/O flow",
            f.shown()
        )),
        _ => n.dropped.push(format!(
            "{}: FLIN's fairness between I/O flows; ssdsim runs one flow and orders operations \
             out of order with reads first (controller.prioritize_reads = true)",
            f.shown()
        )),
    }

    // --- DRAM: data cache and its timing ---
    let f = dev.get("Caching_Mechanism");
    let simple = f.choice(&["SIMPLE", "ADVANCED"])? == "SIMPLE";
    let fcap = dev.get("Data_Cache_Capacity");
    let cap = fcap.uint(u32::MAX as u64)?;
    let wb = cap / page * page;
    c.dram.write_buffer = Size(wb);
    // Provisional: import() sizes it once the mapping table is known.
    c.dram.capacity = Size(wb + cmt).into();
    c.dram.flush = ssdsim_host::config::FlushPolicy::EvictLru;
    n.mapped.push(format!(
        "{}, {} -> dram.write_buffer = {wb} B (writes complete in DRAM; LRU pages go to flash \
         when it is full: MQSim's WRITE_CACHE mode, the default it sets per flow in the \
         workload file)",
        f.shown(),
        fcap.shown()
    ));
    if wb != cap {
        n.approximated.push(format!(
            "{}: rounded down to whole {page}-byte pages, {wb} B",
            fcap.shown()
        ));
    }
    let rcd = dev.get("Data_Cache_DRAM_tRCD");
    let cl = dev.get("Data_Cache_DRAM_tCL");
    let lat = rcd.uint(1_000_000_000)? + cl.uint(1_000_000_000)?;
    c.dram.access_latency = Dur(lat);
    let rest: Vec<Field> = [
        "Data_Cache_DRAM_tRP",
        "Data_Cache_DRAM_Row_Size",
        "Data_Cache_DRAM_Data_Rate",
        "Data_Cache_DRAM_Data_Busrt_Size",
    ]
    .iter()
    .map(|s| dev.get(s))
    .collect();
    for r in &rest {
        r.uint(u32::MAX as u64)?;
    }
    let rest_s = rest
        .iter()
        .map(|f| f.shown())
        .collect::<Vec<_>>()
        .join(", ");
    if simple {
        n.approximated.push(format!(
            "{}: MQSim's simple cache charges no DRAM time; ssdsim charges dram.access_latency \
             = {lat} ns (tRCD + tCL) per access",
            f.shown()
        ));
        n.unused
            .push(format!("{rest_s}: no DRAM timing in MQSim's simple cache"));
    } else {
        n.mapped.push(format!(
            "{}, {} -> dram.access_latency = {lat} ns (tRCD + tCL)",
            rcd.shown(),
            cl.shown()
        ));
        n.dropped.push(format!(
            "{rest_s}: ssdsim charges one fixed latency per DRAM access, no row \
             precharge or per-byte burst time"
        ));
    }

    // --- simulation ---
    let f = dev.get("Seed");
    let t = f.text.trim_start_matches('-');
    if f.text.starts_with('-') && !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(f.err("ssdsim seeds are non-negative"));
    }
    c.sim.seed = f.uint(i32::MAX as u64)?;
    n.mapped.push(format!(
        "{} -> sim.seed (the random streams differ from MQSim's)",
        f.shown()
    ));
    let f = dev.get("Enabled_Preconditioning");
    if f.boolean()? {
        c.sim.precondition = Precondition::Steady;
        n.approximated.push(format!(
            "{}: sim.precondition = \"steady\" (a fill, then uniform random writes to steady \
             state); MQSim preconditions from the workload's own address distribution and \
             occupancy",
            f.shown()
        ));
    } else {
        c.sim.precondition = Precondition::None;
        n.mapped
            .push(format!("{} -> sim.precondition = \"none\"", f.shown()));
    }
    Ok((c, n))
}

/// The TOML file: a header saying what became of every field, then the
/// sections of the drive (nand, layout, controller, dram, host, ftl, sched,
/// sim). Power and workload are left to ssdsim's defaults and flags.
fn render(c: &SsdConfig, n: &Notes, source: &str) -> String {
    let mut o = String::new();
    let name = std::path::Path::new(source)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| source.to_string());
    let _ = writeln!(
        o,
        "# ssdsim configuration of the drive in MQSim's {name}, written by \
         `ssdsim import mqsim` (ssdsim {}).\n\
         # Run it: ssdsim run --config THIS.toml [workload flags]; MQSim's workload file is not read.\n#",
        env!("CARGO_PKG_VERSION")
    );
    let list = |o: &mut String, title: &str, items: &[String]| {
        if items.is_empty() {
            return;
        }
        let _ = writeln!(o, "# {title}:");
        for i in items {
            let _ = writeln!(o, "#   - {i}");
        }
        let _ = writeln!(o, "#");
    };
    list(
        &mut o,
        "NOT REPRESENTED in ssdsim (also printed as warnings)",
        &n.dropped,
    );
    list(
        &mut o,
        "APPROXIMATED (also printed as warnings)",
        &n.approximated,
    );
    list(&mut o, "Mapped", &n.mapped);
    list(&mut o, "Without effect in MQSim for this drive", &n.unused);
    let _ = writeln!(
        o,
        "# Not in MQSim's file, ssdsim's own values below: the controller CPU and its cycle \
         costs,\n# nand.cmd_addr_bytes (MQSim times commands from ONFI t_CS/t_WC/t_WB/...), \
         the power model\n# (MQSim has none: ssdsim's default, lee2011; choose with --power).\n"
    );
    let v = toml::Value::try_from(c).expect("config serializes");
    let mut t = toml::Table::new();
    for s in [
        "nand",
        "layout",
        "controller",
        "dram",
        "host",
        "ftl",
        "sched",
        "sim",
    ] {
        if let Some(x) = v.get(s) {
            t.insert(s.to_string(), x.clone());
        }
    }
    o.push_str(&toml::to_string_pretty(&t).expect("config serializes"));
    o
}

#[cfg(test)]
mod tests;
