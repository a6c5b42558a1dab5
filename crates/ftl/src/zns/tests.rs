//! The zone state machine against ZNS 1.1 §2.1.1 and Zone Management Send
//! (§4.4.3), as `null_blk` implements it, transition by transition.

use super::*;
use ssd_core::config::Allocation;
use ssd_core::ftl::{FlashArray, OpKind};
use ssd_core::rng::{SimRng, SimRngExt};
use std::collections::HashSet;

/// 2 channels x 1 way x 1 die x 2 planes x 4 blocks x 4 pages: 4 planes;
/// zones of 2 planes x 2 blocks (16 pages), 4 zones.
fn geometry() -> Geometry {
    Geometry {
        channels: 2,
        ways: 1,
        dies: 1,
        planes: 2,
        blocks_per_plane: 4,
        pages_per_block: 4,
        page_size: 4096,
    }
}

fn zns(max_open: u32, max_active: u32) -> ZnsFtl {
    let g = geometry();
    let z = ZnsConfig {
        zone_planes: 2,
        zone_blocks: 2,
        max_open_zones: max_open,
        max_active_zones: max_active,
        conventional_zones: 0,
    };
    z.check(&g).unwrap();
    ZnsFtl::with(
        z.layout(&g, 0.07, 3),
        z,
        &g,
        striping_order(&g, Allocation::Cwdp),
    )
}

fn cx() -> FtlCtx {
    FtlCtx::new(SimRng::from_seed_label(1, "zns"), 2)
}

const SIZE: u64 = 16;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Cmd {
    /// A one-page write at the write pointer.
    Write,
    Open,
    Close,
    Finish,
    Reset,
}

fn run(f: &mut ZnsFtl, zone: usize, cmd: Cmd) -> Result<(), ZoneError> {
    let mut c = cx();
    let start = Lpn(zone as u64 * SIZE);
    let r = match cmd {
        Cmd::Write => {
            let wp = f.zone(zone).1;
            f.write(Lpn(start.0 + wp), 1, &mut c);
            c.status.map_or(Ok(()), Err)
        }
        Cmd::Open => f.zone_mgmt(ZoneAction::Open, start, &mut c),
        Cmd::Close => f.zone_mgmt(ZoneAction::Close, start, &mut c),
        Cmd::Finish => f.zone_mgmt(ZoneAction::Finish, start, &mut c),
        Cmd::Reset => f.zone_mgmt(ZoneAction::Reset, start, &mut c),
    };
    if r.is_err() {
        assert!(
            c.plan.ops.is_empty(),
            "a refused {cmd:?} planned {:?}",
            c.plan.ops
        );
    }
    f.check_invariants().unwrap();
    r
}

/// Zone 0 brought to `state` (with `written` pages for the open states).
fn in_state(state: ZoneState, written: bool) -> ZnsFtl {
    let mut f = zns(0, 0);
    match state {
        ZoneState::Empty => {}
        ZoneState::ImplicitOpen => run(&mut f, 0, Cmd::Write).unwrap(),
        ZoneState::ExplicitOpen => {
            if written {
                run(&mut f, 0, Cmd::Write).unwrap();
            }
            run(&mut f, 0, Cmd::Open).unwrap();
        }
        ZoneState::Closed => {
            run(&mut f, 0, Cmd::Write).unwrap();
            run(&mut f, 0, Cmd::Close).unwrap();
        }
        ZoneState::Full => run(&mut f, 0, Cmd::Finish).unwrap(),
        ZoneState::ReadOnly | ZoneState::Offline => f.set_condition(0, state),
        ZoneState::NotWritePointer => unreachable!("conventional zones: their own test"),
    }
    assert_eq!(f.zone(0).0, state);
    f
}

/// Every command from every state: the state after, or the status.
#[test]
fn every_transition_and_refusal_of_the_state_machine() {
    use Cmd::*;
    use ZoneState::*;
    let bad = Err(ZoneError::InvalidTransition);
    #[rustfmt::skip]
    let table: &[(ZoneState, bool, Cmd, Result<ZoneState, ZoneError>)] = &[
        // ZSE: a write opens implicitly, open explicitly; close is invalid;
        // finish makes it full (it needs the resources an open would).
        (Empty, false, Write, Ok(ImplicitOpen)),
        (Empty, false, Open, Ok(ExplicitOpen)),
        (Empty, false, Close, bad),
        (Empty, false, Finish, Ok(Full)),
        (Empty, false, Reset, Ok(Empty)),
        // ZSIO
        (ImplicitOpen, true, Write, Ok(ImplicitOpen)),
        (ImplicitOpen, true, Open, Ok(ExplicitOpen)),
        (ImplicitOpen, true, Close, Ok(Closed)),
        (ImplicitOpen, true, Finish, Ok(Full)),
        (ImplicitOpen, true, Reset, Ok(Empty)),
        // ZSEO: a write keeps it explicitly open; close of an unwritten
        // zone makes it empty (`null_close_zone`), of a written one closed.
        (ExplicitOpen, false, Write, Ok(ExplicitOpen)),
        (ExplicitOpen, false, Open, Ok(ExplicitOpen)),
        (ExplicitOpen, false, Close, Ok(Empty)),
        (ExplicitOpen, true, Close, Ok(Closed)),
        (ExplicitOpen, false, Finish, Ok(Full)),
        (ExplicitOpen, true, Reset, Ok(Empty)),
        // ZSC
        (Closed, true, Write, Ok(ImplicitOpen)),
        (Closed, true, Open, Ok(ExplicitOpen)),
        (Closed, true, Close, Ok(Closed)),
        (Closed, true, Finish, Ok(Full)),
        (Closed, true, Reset, Ok(Empty)),
        // ZSF: only reset (and a finish, which is no error) act.
        (Full, false, Write, Err(ZoneError::Full)),
        (Full, false, Open, bad),
        (Full, false, Close, bad),
        (Full, false, Finish, Ok(Full)),
        (Full, false, Reset, Ok(Empty)),
        // ZSRO and ZSO: no write, no action.
        (ReadOnly, false, Write, Err(ZoneError::ReadOnly)),
        (ReadOnly, false, Open, bad),
        (ReadOnly, false, Close, bad),
        (ReadOnly, false, Finish, bad),
        (ReadOnly, false, Reset, bad),
        (Offline, false, Write, Err(ZoneError::Offline)),
        (Offline, false, Open, bad),
        (Offline, false, Close, bad),
        (Offline, false, Finish, bad),
        (Offline, false, Reset, bad),
    ];
    // Every state and command is covered (a conventional zone's, which has
    // no state machine, in `conventional_zones_take_random_writes...`).
    for s in ZoneState::ALL.into_iter().filter(|&s| s != NotWritePointer) {
        for c in [Write, Open, Close, Finish, Reset] {
            assert!(
                table.iter().any(|&(a, _, b, _)| a == s && b == c),
                "{s:?} x {c:?} missing"
            );
        }
    }
    for &(from, written, cmd, want) in table {
        let mut f = in_state(from, written);
        let before = f.zone(0).0;
        let got = run(&mut f, 0, cmd).map(|()| f.zone(0).0);
        assert_eq!(got, want, "{from:?} (written {written}) x {cmd:?}");
        if got.is_err() {
            assert_eq!(f.zone(0).0, before, "a refusal changed the state");
        }
        // Each refusal is counted by its status.
        if let Err(e) = want {
            assert_eq!(f.stats.errors[e.index()], 1, "{from:?} x {cmd:?}");
        }
    }
}

#[test]
fn writes_only_at_the_write_pointer_and_within_the_capacity() {
    let mut f = zns(0, 0);
    let mut c = cx();
    f.write(Lpn(3), 1, &mut c);
    assert_eq!(c.status, Some(ZoneError::InvalidWrite));
    let mut c = cx();
    f.write(Lpn(0), 17, &mut c);
    assert_eq!(
        c.status,
        Some(ZoneError::Boundary),
        "past the 16-page capacity"
    );
    let mut c = cx();
    f.write(Lpn(0), 16, &mut c);
    assert_eq!(c.status, None);
    assert_eq!(
        f.zone(0),
        (ZoneState::Full, 16),
        "written to capacity: full"
    );
    let mut c = cx();
    f.write(Lpn(16), 4, &mut c);
    f.write(Lpn(20), 4, &mut c);
    assert_eq!(c.status, None);
    assert_eq!(f.zone(1), (ZoneState::ImplicitOpen, 8));
    f.check_invariants().unwrap();
    // A discard is no zoned command.
    let mut c = cx();
    f.trim(Lpn(16), 1, &mut c);
    assert_eq!(c.status, Some(ZoneError::InvalidOpcode));
}

#[test]
fn the_open_limit_closes_an_implicitly_open_zone_round_robin() {
    // null_check_open: at the open limit an implicitly open zone is closed.
    let mut f = zns(2, 0);
    run(&mut f, 0, Cmd::Write).unwrap();
    run(&mut f, 1, Cmd::Write).unwrap();
    run(&mut f, 2, Cmd::Write).unwrap();
    assert_eq!(
        f.zone(0).0,
        ZoneState::Closed,
        "the first implicitly open zone"
    );
    assert_eq!(f.zone(2).0, ZoneState::ImplicitOpen);
    run(&mut f, 3, Cmd::Write).unwrap();
    assert_eq!(f.zone(1).0, ZoneState::Closed, "the next one after it");
    assert_eq!(f.stats.implicit_closes, 2);
    assert_eq!(f.stats.max_open, 2);
    // Explicitly open zones are never closed by the device.
    let mut f = zns(2, 0);
    run(&mut f, 0, Cmd::Open).unwrap();
    run(&mut f, 1, Cmd::Open).unwrap();
    assert_eq!(run(&mut f, 2, Cmd::Write), Err(ZoneError::TooManyOpen));
    assert_eq!(run(&mut f, 2, Cmd::Open), Err(ZoneError::TooManyOpen));
    assert_eq!(run(&mut f, 2, Cmd::Finish), Err(ZoneError::TooManyOpen));
    assert_eq!(f.zone(2).0, ZoneState::Empty);
}

#[test]
fn the_active_limit_counts_closed_zones() {
    let mut f = zns(2, 2);
    run(&mut f, 0, Cmd::Write).unwrap();
    run(&mut f, 1, Cmd::Write).unwrap();
    run(&mut f, 1, Cmd::Close).unwrap();
    // Two active (one open, one closed): an empty zone may not open, and
    // closing the open one to make room would leave the active count full.
    assert_eq!(run(&mut f, 2, Cmd::Write), Err(ZoneError::TooManyActive));
    assert_eq!(run(&mut f, 2, Cmd::Open), Err(ZoneError::TooManyActive));
    // A closed zone is active already: it may open again.
    run(&mut f, 1, Cmd::Write).unwrap();
    assert_eq!(f.zone(1).0, ZoneState::ImplicitOpen);
    // A reset gives the resources back.
    run(&mut f, 0, Cmd::Reset).unwrap();
    run(&mut f, 2, Cmd::Write).unwrap();
    assert_eq!(f.stats.max_active, 2);
}

#[test]
fn zone_append_returns_the_write_pointer() {
    let mut f = zns(0, 0);
    let mut seen = HashSet::new();
    for _ in 0..4 {
        let mut c = cx();
        let at = f.zone_append(Lpn(SIZE), 3, &mut c).unwrap();
        assert!(seen.insert(at.0), "address {} twice", at.0);
        assert_eq!(c.plan.ops.len(), 3);
        assert_eq!(c.plan.ops[0].lpn, at.0);
    }
    assert_eq!(seen, HashSet::from([16, 19, 22, 25]));
    assert_eq!(f.zone(1), (ZoneState::ImplicitOpen, 12));
    // Past the capacity, and to an address that starts no zone.
    assert_eq!(
        f.zone_append(Lpn(SIZE), 5, &mut cx()),
        Err(ZoneError::Boundary)
    );
    assert_eq!(
        f.zone_append(Lpn(SIZE + 1), 1, &mut cx()),
        Err(ZoneError::InvalidField)
    );
    assert_eq!(
        f.zone_mgmt(ZoneAction::Reset, Lpn(4 * SIZE), &mut cx()),
        Err(ZoneError::InvalidField),
        "no zone 4"
    );
}

/// The zones tile the flash: every zone page is its own physical page, and
/// a zone's blocks are programmed in page order and erased by its reset.
#[test]
fn zones_tile_the_flash_and_a_reset_erases_what_was_written() {
    let g = geometry();
    let mut f = zns(0, 0);
    let mut flash = FlashArray::new(g);
    let mut pages = HashSet::new();
    for z in 0..4u64 {
        for k in 0..SIZE {
            let mut c = cx();
            f.write(Lpn(z * SIZE + k), 1, &mut c);
            assert_eq!(c.status, None);
            for op in &c.plan.ops {
                flash.apply(op); // panics on a program out of order
                assert!(pages.insert(op.ppn.0));
            }
            assert_eq!(f.lookup(Lpn(z * SIZE + k)), Some(c.plan.ops[0].ppn));
        }
    }
    assert_eq!(pages.len() as u64, g.total_pages());
    // Zones 0 and 1 lie on disjoint planes (two plane groups).
    let planes = |z: u64| -> HashSet<u32> {
        (0..SIZE)
            .map(|k| g.plane_of(f.lookup(Lpn(z * SIZE + k)).unwrap()).0)
            .collect()
    };
    assert!(planes(0).is_disjoint(&planes(1)));
    // Reset zone 0 (full: 2 blocks in each of its 2 planes) erases 4
    // blocks; zone 1 reset after 5 pages rewritten erases the 2 blocks
    // holding them.
    let mut c = cx();
    f.zone_mgmt(ZoneAction::Reset, Lpn(0), &mut c).unwrap();
    let erases = c
        .plan
        .ops
        .iter()
        .filter(|o| o.kind == OpKind::Erase)
        .count();
    assert_eq!(erases, 4);
    for op in &c.plan.ops {
        flash.apply(op);
    }
    assert_eq!(f.lookup(Lpn(0)), None, "a reset zone reads as unwritten");
    let mut c = cx();
    f.write(Lpn(0), 5, &mut c);
    for op in &c.plan.ops {
        flash.apply(op); // the erased blocks program again from page 0
    }
    let mut c = cx();
    f.zone_mgmt(ZoneAction::Reset, Lpn(0), &mut c).unwrap();
    assert_eq!(c.plan.ops.len(), 2, "{:?}", c.plan.ops);
    assert_eq!(f.stats.reset_erases, 6);
    f.check_invariants().unwrap();
}

#[test]
fn a_finish_leaves_the_rest_unwritten_and_a_condition_restores() {
    let mut f = zns(0, 0);
    let mut c = cx();
    f.write(Lpn(0), 6, &mut c);
    run(&mut f, 0, Cmd::Finish).unwrap();
    assert_eq!(f.stats.finish_unwritten_pages, 10);
    assert!(f.lookup(Lpn(5)).is_some());
    assert_eq!(f.lookup(Lpn(6)), None);
    // Read-only, then read-only again: empty (`null_set_zone_cond`).
    f.set_condition(1, ZoneState::ReadOnly);
    assert_eq!(f.zone(1).0, ZoneState::ReadOnly);
    f.set_condition(1, ZoneState::ReadOnly);
    assert_eq!(f.zone(1).0, ZoneState::Empty);
    // An open zone set offline gives its open resource back.
    run(&mut f, 2, Cmd::Write).unwrap();
    f.set_condition(2, ZoneState::Offline);
    assert_eq!(
        f.lookup(Lpn(2 * SIZE)),
        None,
        "an offline zone reads nothing"
    );
    f.check_invariants().unwrap();
}

#[test]
fn report_zones_describes_every_zone() {
    let mut f = zns(0, 0);
    let mut c = cx();
    f.write(Lpn(SIZE), 3, &mut c);
    let d = f.report_zones();
    assert_eq!(d.len(), 4);
    assert_eq!(d[1].start, SIZE);
    assert_eq!(d[1].wp, SIZE + 3);
    assert_eq!(d[1].capacity, SIZE);
    assert_eq!(d[1].state, ZoneState::ImplicitOpen);
    assert_eq!(d[3].state, ZoneState::Empty);
}

/// Conventional zones: a page-mapped area on the first zone slots, any page
/// writable at any time, collected by its own GC; the sequential zones on
/// the slots after it.
#[test]
fn conventional_zones_take_random_writes_and_collect_their_own_garbage() {
    // 4 planes of 16 blocks of 4 pages; zones over every plane, 1 block a
    // plane: 16-page zones in 16 slots. Two conventional zones (32 pages)
    // need max(32 x 1.07, 32 + 4 spare blocks (the GC threshold 2, an open
    // block, one to reclaim) x 4 planes x 4 pages) = 96 pages: 6 slots; 10
    // sequential zones remain.
    let g = Geometry {
        blocks_per_plane: 16,
        ..geometry()
    };
    let z = ZnsConfig {
        zone_planes: 0,
        zone_blocks: 1,
        max_open_zones: 0,
        max_active_zones: 0,
        conventional_zones: 2,
    };
    let c = FtlConfig {
        kind: ssd_core::config::FtlKind::Zns,
        zns: z,
        ..FtlConfig::default()
    };
    let cap = c.capacity(&g).unwrap();
    let d = DriveShape {
        geometry: g,
        logical_pages: cap.logical_pages,
    };
    let mut f = ZnsFtl::new(&c, &d).unwrap();
    let l = f.layout();
    assert_eq!((l.conventional, l.conventional_slots, l.zones), (2, 6, 12));
    assert_eq!(cap.logical_pages, 12 * 16);
    let mut flash = FlashArray::new(g);
    let mut rng = SimRng::from_seed_label(7, "conv");
    let mut latest = std::collections::HashMap::new();
    use rand::Rng;
    for i in 0..2_000u64 {
        let lpn = rng.gen_range(0..32u64);
        let mut x = cx();
        f.write(Lpn(lpn), 1, &mut x);
        assert_eq!(x.status, None);
        for op in &x.plan.ops {
            flash.apply(op);
            // The conventional area's pages stay in its 6 slots.
            assert!(g.block_of(op.ppn).0 % 16 < 6, "{op:?}");
        }
        latest.insert(lpn, i);
        if i % 200 == 0 {
            f.check_invariants().unwrap();
        }
    }
    f.check_invariants().unwrap();
    assert!(
        f.stats().gc_page_copies > 0,
        "GC ran in the conventional area"
    );
    let mut seen = HashSet::new();
    for &lpn in latest.keys() {
        let p = f.lookup(Lpn(lpn)).expect("written");
        assert!(seen.insert(p));
    }
    // Zone management and zone append refuse conventional zones; a write
    // from a conventional zone into a sequential one is refused whole.
    for a in [
        ZoneAction::Open,
        ZoneAction::Close,
        ZoneAction::Finish,
        ZoneAction::Reset,
    ] {
        assert_eq!(
            f.zone_mgmt(a, Lpn(16), &mut cx()),
            Err(ZoneError::InvalidField),
            "{a:?}"
        );
    }
    assert_eq!(
        f.zone_append(Lpn(0), 1, &mut cx()),
        Err(ZoneError::InvalidField)
    );
    let mut x = cx();
    f.write(Lpn(30), 4, &mut x);
    assert_eq!(x.status, Some(ZoneError::Boundary));
    assert!(x.plan.ops.is_empty());
    // The first sequential zone (zone 2) lies on slot 6.
    let mut x = cx();
    f.write(Lpn(32), 4, &mut x);
    assert_eq!(x.status, None);
    for op in &x.plan.ops {
        flash.apply(op);
        assert_eq!(g.block_of(op.ppn).0 % 16, 6);
    }
    let d = f.report_zones();
    assert_eq!(d[0].state, ZoneState::NotWritePointer);
    assert_eq!(d[1].capacity, 16);
    assert_eq!(d[2].state, ZoneState::ImplicitOpen);
}
