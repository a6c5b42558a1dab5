use super::synth::{self, SynthSpec};
use super::*;
use crate::workload::RequestSource;
use std::io::Cursor;

fn reader(text: &str, fmt: TraceFormat) -> TraceReader<Cursor<Vec<u8>>> {
    TraceReader::new(
        Cursor::new(text.as_bytes().to_vec()),
        fmt,
        "t.trace",
        ParseOptions::default(),
    )
}

fn replay(text: &str, fmt: TraceFormat, opts: ReplayOptions) -> Replay<Cursor<Vec<u8>>> {
    opts.validate().unwrap();
    Replay::new(Cursor::new(text.as_bytes().to_vec()), fmt, "t.trace", opts)
}

fn drain<S: RequestSource>(s: &mut S) -> Result<Vec<HostRequest>, SourceError> {
    let mut v = Vec::new();
    while let Some(r) = s.next_request() {
        v.push(r?);
    }
    Ok(v)
}

#[test]
fn number_parsing() {
    assert_eq!(uint(b"0", "x"), Ok(0));
    assert_eq!(uint(b"18446744073709551615", "x"), Ok(u64::MAX));
    assert!(uint(b"18446744073709551616", "x")
        .unwrap_err()
        .contains("overflows"));
    assert!(uint(b"-3", "size").unwrap_err().contains("negative"));
    assert!(uint(b"3x", "size").unwrap_err().contains("\"size\""));
    assert_eq!(decimal(b"0.011413", 9, "t"), Ok(11_413_000));
    assert_eq!(decimal(b"12", 6, "t"), Ok(12_000_000));
    assert_eq!(decimal(b"1.2345678", 3, "t"), Ok(1234)); // truncated
    assert_eq!(decimal(b".5", 3, "t"), Ok(500));
    assert!(decimal(b"1.2.3", 3, "t").is_err());
    assert!(decimal(b"-0.5", 3, "t").unwrap_err().contains("negative"));
    assert!(decimal(b"1e5", 3, "t").is_err());
}

fn spec() -> SynthSpec {
    SynthSpec {
        requests: 300,
        ..SynthSpec::default()
    }
}

#[test]
fn every_format_round_trips_and_is_detected() {
    let want: Vec<Record> = synth::records(spec()).collect();
    for fmt in TraceFormat::ALL {
        let mut out = Vec::new();
        synth::write(&mut out, fmt, spec()).unwrap();
        assert_eq!(detect(&out), Ok(fmt), "{fmt}");
        let got: Vec<Record> =
            TraceReader::new(Cursor::new(out), fmt, "x", ParseOptions::default())
                .map(|r| r.unwrap())
                .collect();
        assert_eq!(got.len(), want.len(), "{fmt}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!((g.op, g.offset, g.size), (w.op, w.offset, w.size), "{fmt}");
            let t = if fmt == TraceFormat::Cloudphysics {
                w.time_ns / 1_000_000_000 * 1_000_000_000
            } else {
                w.time_ns
            };
            assert_eq!(g.time_ns, t, "{fmt}");
            if !matches!(fmt, TraceFormat::Cloudphysics | TraceFormat::Csv) {
                assert_eq!(g.device, w.device, "{fmt}");
            }
            if fmt != TraceFormat::Cloudphysics {
                assert_eq!(g.stream, w.stream, "{fmt}");
            }
        }
    }
}

/// Found with the trace_parse fuzz target's convert property: a byte range
/// in the last sector of the 2^64-byte space was written to a sector format
/// widened past 2^64 bytes, a trace that does not read back. It is refused.
#[test]
fn a_range_that_cannot_be_widened_to_sectors_is_refused() {
    let r = Record {
        op: Op::Write,
        offset: 18_446_744_073_709_551_500,
        size: 100,
        ..Record::default()
    };
    for fmt in TraceFormat::ALL {
        let mut out = Vec::new();
        let res = write_records(&mut out, fmt, [&r]);
        if matches!(
            fmt,
            TraceFormat::Csv | TraceFormat::Msr | TraceFormat::MsrCut
        ) {
            res.unwrap();
            continue;
        }
        match res {
            Err(TraceError::Unrepresentable { what, .. }) => {
                assert!(what.contains("passes 2^64"), "{fmt}: {what}")
            }
            other => panic!("{fmt}: {other:?}"),
        }
    }
    // One sector lower it is written, and reads back.
    let r = Record {
        offset: r.offset - 512,
        ..r
    };
    let mut out = Vec::new();
    write_records(&mut out, TraceFormat::Spc, [&r]).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        reader(&text, TraceFormat::Spc)
            .filter(Result::is_ok)
            .count(),
        1
    );
}

/// Found by fuzzing (trace_parse): the actions a blkparse trace without the
/// replayed one has were gathered from untrimmed lines, so a last field
/// `Q\r` (CRLF) or `Q\n` (a line across the buffer's end) hid the action,
/// and whether the trace was refused depended on the buffer size.
#[test]
fn blkparse_actions_are_seen_whatever_the_line_end_and_buffer() {
    for text in [
        "  8,0 0 1 0.1 5 Q\n",
        "  8,0 0 1 0.1 5 Q\r\n",
        "  8,0 0 1 0.1 5 Q",
    ] {
        for cap in [1, 7, 64, 1 << 16] {
            let po = ParseOptions {
                blkparse_action: b'D',
                ..ParseOptions::default()
            };
            let input = io::BufReader::with_capacity(cap, Cursor::new(text.as_bytes().to_vec()));
            let mut r = TraceReader::new(input, TraceFormat::Blkparse, "t.trace", po);
            let e = r.next_record().unwrap().unwrap_err();
            assert!(e.reason.contains("actions Q"), "{text:?} cap {cap}: {e}");
        }
    }
}

#[test]
fn errors_name_file_line_and_field() {
    let cases: &[(TraceFormat, &str, &str)] = &[
        (
            TraceFormat::Spc,
            "0,8,4096,R,0.1\n0,8,4096,X,0.2\n",
            "t.trace:2: field \"opcode\": unknown opcode",
        ),
        (
            TraceFormat::Spc,
            "0,8,4096,R,0.1\n\n0,-8,4096,R,0.2\n",
            "t.trace:3: field \"lba\": negative value -8",
        ),
        (
            TraceFormat::Spc,
            "0,8,0,R,0.1\n",
            "t.trace:1: field \"size\": zero-length request",
        ),
        (
            TraceFormat::Spc,
            "0,8,4096\n",
            "t.trace:1: missing field \"opcode\"",
        ),
        (
            TraceFormat::Msr,
            "128166385295514663,hm,0,Erase,0,512,1\n",
            "field \"type\": unknown type",
        ),
        (TraceFormat::Mqsim, "100 0 8 8 2\n", "field \"type\""),
        (TraceFormat::Mqsim, "100 0 8 8 1 7\n", "too many fields"),
        (
            TraceFormat::Disksim,
            "abc 0 8 8 1\n",
            "field \"time_ms\": expected a non-negative decimal",
        ),
        (
            TraceFormat::Cloudphysics,
            "version,time,op,size,lbn\n1,5,35,512,1\n",
            "t.trace:2: field \"op\": unknown SCSI opcode",
        ),
        (
            TraceFormat::Csv,
            "time_ns,op,offset_bytes,size_bytes\n5,W,0,4096\n7,Q,0,4096\n",
            "t.trace:3: field \"op\"",
        ),
        (
            TraceFormat::Blkparse,
            "  8,16   5   2   0.1 18615  Q   R 1444645666 x 256 [java]\n",
            "expected \"+\"",
        ),
        // A Q line without `+ nsectors` is cut short (blkparse always ends
        // an event with [process]), not a request to drop silently.
        (
            TraceFormat::Blkparse,
            "  8,16 5 1 0.1 7 Q W 8 + 8 [a]\n  8,16 5 2 0.2 7 Q W 1000\n",
            "t.trace:2: blkparse `Q` event has sector 1000 but no \"+ nsectors\"",
        ),
        (
            TraceFormat::Blkparse,
            "  8,16 5 1 0.1 7 Q W\n",
            "t.trace:1: blkparse `Q` event ends after its RWBS field",
        ),
        (
            TraceFormat::Fiu,
            "100 7 nfsd 8 8 W 6 0 -\n100 7 nfsd 8 0 W 6 0 -\n",
            "t.trace:2: field \"size\": zero-length",
        ),
    ];
    for (fmt, text, want) in cases {
        let e = reader(text, *fmt)
            .find_map(|r| r.err())
            .unwrap_or_else(|| panic!("{fmt}: no error for {text:?}"));
        assert!(e.to_string().contains(want), "{fmt}: {e} (wanted {want:?})");
    }
}

#[test]
fn bad_lines_can_be_skipped_and_counted() {
    let text = "0,8,4096,R,0.1\n0,8,4096,X,0.2\ngarbage\n0,16,4096,W,0.3\n";
    let mut r = replay(
        text,
        TraceFormat::Spc,
        ReplayOptions {
            skip_bad_lines: true,
            ..Default::default()
        },
    );
    let v = drain(&mut r).unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(r.notes(), vec![("trace_bad_lines_skipped".to_string(), 2)]);
}

#[test]
fn timestamps_rebased_scaled_and_clamped() {
    let text = "0,8,4096,R,10.0\n0,16,4096,R,10.5\n0,24,4096,W,10.25\n0,32,4096,W,11.0\n";
    // In file order (no window): the late record is clamped.
    let mut r = replay(
        text,
        TraceFormat::Spc,
        ReplayOptions {
            speed: 2.0,
            reorder_window: 0,
            ..Default::default()
        },
    );
    let v = drain(&mut r).unwrap();
    let t: Vec<u64> = v.iter().map(|q| q.arrival.0).collect();
    assert_eq!(t, vec![0, 250_000_000, 250_000_000, 500_000_000]);
    assert_eq!(
        r.notes(),
        vec![("trace_timestamps_non_monotonic_clamped".to_string(), 1)]
    );
    assert_eq!(r.timing(), Timing::OpenLoop);
    // With the default window it is put back in timestamp order.
    let mut r = replay(
        text,
        TraceFormat::Spc,
        ReplayOptions {
            speed: 2.0,
            ..Default::default()
        },
    );
    let v = drain(&mut r).unwrap();
    let got: Vec<(u64, u64)> = v.iter().map(|q| (q.arrival.0, q.lba)).collect();
    assert_eq!(
        got,
        vec![
            (0, 8),
            (125_000_000, 24),
            (250_000_000, 16),
            (500_000_000, 32)
        ]
    );
    assert_eq!(
        r.notes(),
        vec![("trace_timestamps_reordered".to_string(), 1)]
    );
}

/// `max_gap` compresses every longer gap between arrivals to its length
/// (counted), shifting everything after it; shorter gaps keep theirs.
#[test]
fn long_gaps_are_capped_and_counted() {
    // Gaps of 0.5 s, 1000 s (a corrupt timestamp, say) and 2 s; then a
    // record stamped before the jump, clamped to it (no gap).
    let text = "0,8,4096,R,10.0\n0,16,4096,R,10.5\n0,24,4096,W,1010.5\n0,32,4096,W,1012.5\n0,40,4096,W,11.0\n";
    let mut r = replay(
        text,
        TraceFormat::Spc,
        ReplayOptions {
            max_gap: Some(Dur::from_ms(1000)),
            reorder_window: 0,
            speed: 2.0,
            ..Default::default()
        },
    );
    let v = drain(&mut r).unwrap();
    let t: Vec<u64> = v.iter().map(|q| q.arrival.0 / 1_000_000).collect();
    assert_eq!(t, vec![0, 250, 750, 1250, 1250]);
    assert_eq!(
        r.notes(),
        vec![
            ("trace_timestamps_non_monotonic_clamped".to_string(), 1),
            ("trace_gaps_capped".to_string(), 2)
        ]
    );
}

/// A slowed-down replay whose arrivals would leave the simulated time range
/// (where event times would wrap) is refused at the line that does so; closed
/// loop, which ignores timestamps, still replays it.
#[test]
fn arrivals_beyond_the_time_range_are_refused_at_their_line() {
    let text = "0,8,4096,R,10.0\n0,16,4096,R,10.5\n0,24,4096,W,20.0\n";
    let opts = |closed| ReplayOptions {
        speed: 1e-9,
        closed_loop_depth: closed,
        ..Default::default()
    };
    let e = drain(&mut replay(text, TraceFormat::Spc, opts(None))).unwrap_err();
    assert!(
        e.location.ends_with(":3") && e.reason.contains("beyond the simulated time range"),
        "{e:?}"
    );
    let v = drain(&mut replay(text, TraceFormat::Spc, opts(Some(2)))).unwrap();
    assert_eq!(v.len(), 3);
}

/// The reorder window sorts disorder up to its size (ties keep file order),
/// clamps what lies beyond it, and an error found on a record read ahead
/// names that record's own line.
#[test]
fn reorder_window_bounds_and_error_lines() {
    // The record at 1.0 s comes three records late.
    let text =
        "0,8,4096,R,2.0\n0,16,4096,R,3.0\n0,24,4096,R,3.0\n0,32,4096,W,1.0\n0,40,4096,W,4.0\n";
    let run = |w: u32| {
        let mut r = replay(
            text,
            TraceFormat::Spc,
            ReplayOptions {
                reorder_window: w,
                ..Default::default()
            },
        );
        let v = drain(&mut r).unwrap();
        let lbas: Vec<u64> = v.iter().map(|q| q.lba).collect();
        (lbas, r.notes())
    };
    let (lbas, notes) = run(3);
    assert_eq!(lbas, vec![32, 8, 16, 24, 40]);
    assert_eq!(notes, vec![("trace_timestamps_reordered".to_string(), 1)]);
    // A window of 2 holds three records: the late one is read after the
    // first has left, so it is clamped to 2.0 s (and the tie 16/24 keeps order).
    let (lbas, notes) = run(2);
    assert_eq!(lbas, vec![8, 32, 16, 24, 40]);
    assert_eq!(
        notes,
        vec![("trace_timestamps_non_monotonic_clamped".to_string(), 1)]
    );
    // Out of range with reject: the error names the line of the bad record,
    // not the line the reader had reached.
    let far = "0,8,4096,R,1.0\n0,99999999,4096,R,2.0\n0,16,4096,R,3.0\n0,24,4096,R,4.0\n";
    let mut r = replay(
        far,
        TraceFormat::Spc,
        ReplayOptions {
            out_of_range: OutOfRange::Reject,
            capacity_bytes: Some(1 << 30),
            ..Default::default()
        },
    );
    let e = drain(&mut r).unwrap_err();
    assert_eq!(e.location, "t.trace:2", "{e}");
    assert!(ReplayOptions {
        reorder_window: MAX_REORDER_WINDOW + 1,
        ..Default::default()
    }
    .validate()
    .is_err());
}

#[test]
fn limits_streams_device_filter_and_closed_loop() {
    let text =
        "0,8,4096,R,0.0\n1,16,4096,R,1.0\n0,24,4096,W,2.0\n1,32,4096,W,3.0\n0,40,4096,W,4.0\n";
    let n = |o: ReplayOptions| drain(&mut replay(text, TraceFormat::Spc, o)).unwrap();
    assert_eq!(
        n(ReplayOptions {
            max_requests: Some(2),
            ..Default::default()
        })
        .len(),
        2
    );
    assert_eq!(
        n(ReplayOptions {
            max_time: Some(Dur::from_ms(2000)),
            ..Default::default()
        })
        .len(),
        3
    );
    let d1 = n(ReplayOptions {
        device: Some(1),
        ..Default::default()
    });
    assert_eq!(d1.iter().map(|q| q.lba).collect::<Vec<_>>(), vec![16, 32]);
    assert_eq!(d1[0].arrival.0, 0, "rebased on the first replayed record");
    assert!(n(ReplayOptions {
        streams: false,
        ..Default::default()
    })
    .iter()
    .all(|q| q.stream == 0));
    assert_eq!(n(ReplayOptions::default())[1].stream, 1);
    let r = replay(
        text,
        TraceFormat::Spc,
        ReplayOptions {
            closed_loop_depth: Some(4),
            ..Default::default()
        },
    );
    assert_eq!(r.timing(), Timing::ClosedLoop { depth: 4 });
}

#[test]
fn out_of_range_wraps_aligned_or_rejects() {
    // capacity 1 MiB = 2048 sectors
    let text = "0,8,4096,R,0\n0,2047,4096,W,1\n0,100001,8192,R,2\n";
    let opts = ReplayOptions::default().with_capacity(1 << 20);
    let mut r = replay(text, TraceFormat::Spc, opts.clone());
    let v = drain(&mut r).unwrap();
    assert_eq!(v[0].lba, 8);
    for q in &v[1..] {
        assert!(q.lba + q.sectors as u64 <= 2048, "{q:?}");
        assert_eq!(q.lba % 8, 0, "aligned to 4 KiB: {q:?}");
    }
    assert_eq!(v[2].sectors, 16);
    assert!(r
        .notes()
        .contains(&("trace_addresses_wrapped".to_string(), 2)));
    let mut r = replay(
        text,
        TraceFormat::Spc,
        ReplayOptions {
            out_of_range: OutOfRange::Reject,
            ..opts
        },
    );
    let e = drain(&mut r).unwrap_err();
    assert_eq!(e.location, "t.trace:2");
    assert!(e.reason.contains("beyond the device capacity"), "{e}");
}

#[test]
fn blkparse_action_choice_and_non_io_lines() {
    let text = "\
  8,16   5        1     0.000000000 18615  A   R 1444645666 + 256 <- (8,17) 1444645632
  8,16   5        2     0.000001850 18615  Q   R 1444645666 + 256 [java]
  8,16   5        4     0.000008750 18615  P   N [java]
  8,16   5        5     0.000009980 18615  Q  FN [java]
  8,16   5        6     0.000010000 18615  Q  WS 100 + 8 [java]
  8,16   2        7     0.000020000  3626  D  WM 16 + 8 [kworker/u8:1]
  8,16   2        8     0.000030000  3626  C  WM 16 + 8 [0]
CPU0 (8,16):
 Reads Queued:           0,        0KiB\t Writes Queued:           0,        0KiB
Total (8,16):
";
    let q = drain(&mut replay(
        text,
        TraceFormat::Blkparse,
        ReplayOptions::default(),
    ))
    .unwrap();
    assert_eq!(q.len(), 2);
    assert_eq!(
        (q[0].op, q[0].lba, q[0].sectors, q[0].stream),
        (IoOp::Read, 1444645666, 256, 18615)
    );
    assert_eq!((q[1].op, q[1].arrival.0), (IoOp::Write, 8150));
    // RWBS's S is REQ_SYNC: the `WS` write is synchronous, the read is by
    // being a read.
    assert!(q[1].sync && q[1].is_sync() && q[0].is_sync() && !q[0].sync);
    let d = drain(&mut replay(
        text,
        TraceFormat::Blkparse,
        ReplayOptions {
            blkparse_action: "D".into(),
            ..Default::default()
        },
    ))
    .unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].lba, d[0].stream), (16, 3626));
    assert!(!d[0].sync, "a `WM` write is not REQ_SYNC");
    // A recorded sync write is written back as `WS` and reads back sync.
    let mut out = Vec::new();
    let w = Record {
        op: Op::Write,
        offset: 4096,
        size: 4096,
        sync: true,
        ..Record::default()
    };
    write_records(&mut out, TraceFormat::Blkparse, [&w]).unwrap();
    let line = String::from_utf8(out).unwrap();
    assert!(line.contains(" WS 8 + 8 "), "{line}");
    let back = drain(&mut replay(
        &line,
        TraceFormat::Blkparse,
        ReplayOptions::default(),
    ))
    .unwrap();
    assert!(back[0].sync);
    assert_eq!(detect(text.as_bytes()), Ok(TraceFormat::Blkparse));
    assert!(ReplayOptions {
        blkparse_action: "QQ".into(),
        ..Default::default()
    }
    .validate()
    .is_err());
}

/// Found by scripts/hostile.sh: a `Q R 687310 + 0` line and a line of
/// binary garbage were skipped as non-I/O without a word (`trace stats` and
/// the run counted one request fewer, exit 0). A zero-sector data request
/// is a zero-length request, refused as in every format; a line with
/// control characters is damage, not a summary line. A flush of no data
/// (`FWS 0 + 0`) and the summary stay skipped.
#[test]
fn blkparse_zero_sectors_and_binary_lines_are_errors() {
    let ok = "  8,0 0 1 0.000001000 7 Q R 100 + 8 [a]\n";
    let run = |extra: &str| {
        drain(&mut replay(
            &format!("{ok}{extra}{ok}"),
            TraceFormat::Blkparse,
            ReplayOptions::default(),
        ))
    };
    let e = run("  8,0 0 2 0.000002000 7 Q R 687310 + 0 [a]\n").unwrap_err();
    assert_eq!(e.location, "t.trace:2");
    assert!(e.reason.contains("zero-length"), "{e}");
    let e = run("\u{2}AB\u{7f}\u{1} garbage\n").unwrap_err();
    assert_eq!(e.location, "t.trace:2");
    assert!(e.reason.contains("control character 0x02"), "{e}");
    assert_eq!(
        run("  8,0 0 2 0.000002000 7 Q FWS 0 + 0 [a]\n")
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        run("Total (8,0):\n Reads Queued:  1,  4KiB\t Writes Queued: 0\n")
            .unwrap()
            .len(),
        2
    );
}

/// A capture without queue events (only I/D/C, as blktrace on some setups)
/// replayed with the default action is an error that names the actions it
/// has and suggests one of them, not an empty workload; with `D` it replays.
#[test]
fn blkparse_without_the_chosen_action_says_which_it_has() {
    let run = |text: &str, action: &str| {
        drain(&mut replay(
            text,
            TraceFormat::Blkparse,
            ReplayOptions {
                blkparse_action: action.into(),
                ..Default::default()
            },
        ))
    };
    let idc = "\
  8,16   3        4     0.000011950  3645  I   R 4938888 + 256 [java]
  8,16   3        5     0.000026421  3645  D   R 4938888 + 256 [java]
  8,16   3        7     0.001795683  3557  C   R 4938888 + 256 [0]
CPU3 (8,16):
";
    let e = run(idc, "Q").unwrap_err();
    assert!(
        e.reason.contains("no blkparse `Q` events")
            && e.reason.contains("actions C, D, I")
            && e.reason.contains("replay.blkparse_action=D"),
        "{e}"
    );
    assert_eq!(run(idc, "D").unwrap().len(), 1);
    // Asked for D, a capture of Q and C events suggests Q.
    let qc = "\
  8,16   5        2     0.000001850 18615  Q   R 1444645666 + 256 [java]
  8,16   5        3     0.000002850 18615  C   R 1444645666 + 256 [java]
";
    let e = run(qc, "D").unwrap_err();
    assert!(
        e.reason.contains("no blkparse `D` events")
            && e.reason.contains("actions C, Q")
            && e.reason.contains("replay.blkparse_action=Q"),
        "{e}"
    );
    // Q events that all lack data (flushes) are no workload either.
    let e = run(
        "  8,16   5        5     0.000009980 18615  Q  FN [java]\n",
        "Q",
    )
    .unwrap_err();
    assert!(e.reason.contains("actions Q"), "{e}");
}

#[test]
fn detection_of_ambiguous_five_field_traces() {
    assert_eq!(
        detect(b"11413000 0 657728 16 1\n11565000 1 31244784 64 1\n"),
        Ok(TraceFormat::Mqsim)
    );
    assert_eq!(
        detect(b"0.000 5 174224064 16 1\n0.221 5 162947904 16 1\n"),
        Ok(TraceFormat::Disksim)
    );
    assert_eq!(
        detect(b"0.000 0 200626176 4096 0\n223.412 0 3159347200 36864 0\n"),
        Ok(TraceFormat::MsrCut)
    );
    assert_eq!(
        detect(b"128166385295514663,hm,0,Write,9056014336,2048,2833\n"),
        Ok(TraceFormat::Msr)
    );
    assert_eq!(detect(b"0,657728,8192,R,0.011413\n"), Ok(TraceFormat::Spc));
    // Found by fuzzing (trace_detect): multiples of 512 but a flags field
    // msr-cut cannot read (its type is 0 or 1) is DiskSim, which reads it,
    // not msr-cut, which would fail at the line.
    let t = b"1.418000 1 98579456 24576 0\n3.213000 0 202950144 1024 5\n";
    assert_eq!(detect(t), Ok(TraceFormat::Disksim));
    let recs: Result<Vec<Record>, _> =
        reader(std::str::from_utf8(t).unwrap(), TraceFormat::Disksim).collect();
    assert_eq!(recs.unwrap().len(), 2);
    let e = detect(b"hello world\n").unwrap_err();
    assert!(e.contains("no known format"), "{e}");
    assert!(detect(b"\n\n").is_err());
}

#[test]
fn options_validate_and_deserialize_strictly() {
    let o: ReplayOptions =
        toml::from_str("speed = 4.0\nout_of_range = \"reject\"\nmax_time = \"10s\"\n").unwrap();
    assert_eq!(o.speed, 4.0);
    assert_eq!(o.max_time, Some(Dur::from_ms(10_000)));
    let e = toml::from_str::<ReplayOptions>("sped = 4.0\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("sped"), "{e}");
    let e = ReplayOptions {
        speed: 0.0,
        ..Default::default()
    }
    .validate()
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("replay.speed"), "{e}");
    assert_eq!("msr-cut".parse::<TraceFormat>(), Ok(TraceFormat::MsrCut));
    assert!("nope".parse::<TraceFormat>().unwrap_err().contains("known"));
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ssdsim-trace-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn gzip_input_and_truncated_gzip() {
    let mut plain = Vec::new();
    synth::write(&mut plain, TraceFormat::Spc, spec()).unwrap();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&plain).unwrap();
    let gz = enc.finish().unwrap();
    let p = tmp("a.spc.gz");
    std::fs::write(&p, &gz).unwrap();
    let mut s = open_trace(&p, None, &ReplayOptions::default()).unwrap();
    assert_eq!(s.format(), TraceFormat::Spc);
    assert!(matches!(s, TraceSource::Gzip(_)));
    assert_eq!(drain(&mut s).unwrap().len(), 300);
    let p2 = tmp("b.spc.gz");
    std::fs::write(&p2, &gz[..gz.len() * 2 / 3]).unwrap();
    let mut s = open_trace(&p2, Some(TraceFormat::Spc), &ReplayOptions::default()).unwrap();
    let e = drain(&mut s).unwrap_err();
    assert!(e.location.starts_with(&p2.display().to_string()), "{e}");
    assert!(e.reason.contains("read error"), "{e}");
    let e = open_trace(&tmp("missing.spc"), None, &ReplayOptions::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("missing.spc"), "{e}");
}

#[test]
fn convert_and_stats_on_files() {
    let src = tmp("c.csv");
    let mut f = std::fs::File::create(&src).unwrap();
    synth::write(&mut f, TraceFormat::Csv, spec()).unwrap();
    drop(f);
    for out_fmt in [
        TraceFormat::Spc,
        TraceFormat::Msr,
        TraceFormat::Disksim,
        TraceFormat::Mqsim,
    ] {
        let out = tmp(&format!("c.{out_fmt}.gz"));
        let rep = convert(&src, None, &out, out_fmt, false).unwrap();
        assert_eq!(rep.records, 300);
        let a = stats(&src, None).unwrap();
        let b = stats(&out, None).unwrap();
        assert_eq!(
            (a.requests, a.reads, a.span_bytes),
            (b.requests, b.reads, b.span_bytes),
            "{out_fmt}"
        );
        assert_eq!(a.size_histogram, b.size_histogram);
        assert!((a.duration_s - b.duration_s).abs() < 1e-9);
    }
    // trims cannot be written as SPC
    let t = tmp("t.csv");
    std::fs::write(&t, "time_ns,op,offset_bytes,size_bytes\n0,T,0,4096\n").unwrap();
    let e = convert(&t, None, &tmp("t.spc"), TraceFormat::Spc, false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("SPC has no Trim") && e.contains("t.csv:2"),
        "{e}"
    );
}

#[test]
fn stats_columns() {
    // 4 requests: two sequential, one random; 3 reads
    let text = "time_ns,op,offset_bytes,size_bytes\n0,R,0,4096\n1000000000,R,4096,4096\n2000000000,W,65536,512\n3500000000,R,1048576,1048576\n";
    let s = stats_reader(reader(text, TraceFormat::Csv)).unwrap();
    assert_eq!((s.requests, s.reads, s.writes), (4, 3, 1));
    assert_eq!(s.read_fraction, 0.75);
    assert!((s.randomness - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(s.span_bytes, 2 << 20);
    assert_eq!(s.duration_s, 3.5);
    assert!((s.mean_interarrival_s - 3.5 / 3.0).abs() < 1e-12);
    assert_eq!(s.max_interarrival_s, 1.5);
    assert_eq!(s.mean_size_bytes, (4096.0 * 2.0 + 512.0 + 1048576.0) / 4.0);
    let h: Vec<(u64, u64)> = s
        .size_histogram
        .iter()
        .map(|b| (b.max_bytes, b.count))
        .collect();
    assert_eq!(h, vec![(512, 1), (4096, 2), (1 << 20, 1)]);
    let j = serde_json::to_value(&s).unwrap();
    let keys: Vec<&String> = j.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 11);
    for k in [
        "requests",
        "reads",
        "writes",
        "read_fraction",
        "mean_size_bytes",
        "size_histogram",
        "randomness",
        "mean_interarrival_s",
        "max_interarrival_s",
        "span_bytes",
        "duration_s",
    ] {
        assert!(j.get(k).is_some(), "{k}");
    }
}

/// Lines straddling the reader's buffer end (copied) parse exactly like lines
/// read in place, for every format, including a last line without `\n`.
#[test]
fn small_buffers_give_the_same_records_and_counts() {
    for fmt in TraceFormat::ALL {
        let mut data = b"\n# comment\n".to_vec();
        synth::write(&mut data, fmt, spec()).unwrap();
        while data.last() == Some(&b'\n') {
            data.pop();
        }
        let read_all = |cap: usize| {
            let input = io::BufReader::with_capacity(cap, &data[..]);
            let mut r = TraceReader::new(input, fmt, "t", ParseOptions::default());
            let recs: Vec<Record> = r.by_ref().map(|x| x.unwrap()).collect();
            (recs, r.lines(), r.non_io_lines(), r.bad_lines())
        };
        let whole = read_all(data.len() + 1);
        assert_eq!(whole.0.len() as u64, spec().requests, "{fmt}");
        for cap in [1, 7, 64, 4096] {
            assert_eq!(read_all(cap), whole, "{fmt} with a {cap}-byte buffer");
        }
    }
}

#[test]
fn newline_search_matches_a_byte_scan() {
    let text = b"abc\ndefghijklmnop\n\n0123456789abcdef\x8a\x0b\x09q";
    for start in 0..text.len() {
        for end in start..=text.len() {
            let s = &text[start..end];
            assert_eq!(
                find_newline(s),
                s.iter().position(|&b| b == b'\n'),
                "{start}..{end}"
            );
        }
    }
}

proptest::proptest! {
    #[test]
    fn fast_number_parsing_matches_the_checked_one(
        f in "[0-9.x-]{0,24}", pow in 0u32..12,
    ) {
        let f = f.as_bytes();
        proptest::prop_assert_eq!(decimal(f, pow, "x"), decimal_checked(f, pow, "x"));
        if !f.is_empty() {
            proptest::prop_assert_eq!(uint(f, "x"), uint_checked(f, "x"));
        }
    }
}

/// A zoned drive's commands in ssdsim's CSV: read by code or word, written
/// back by code; the other formats have no zone commands and say so.
#[test]
fn csv_carries_zone_commands() {
    let text = "time_ns,op,offset_bytes,size_bytes\n0,ZA,8388608,16384\n1,zone_reset,0,0\n2,ZF,0,0\n3,ZO,0,0\n4,ZC,0,0\n";
    let mut rdr = reader(text, TraceFormat::Csv);
    let mut recs = Vec::new();
    while let Some(r) = rdr.next_record() {
        recs.push(r.unwrap());
    }
    let ops: Vec<Op> = recs.iter().map(|r| r.op).collect();
    assert_eq!(
        ops,
        [
            Op::ZoneAppend,
            Op::ZoneReset,
            Op::ZoneFinish,
            Op::ZoneOpen,
            Op::ZoneClose
        ]
    );
    assert_eq!((recs[0].offset, recs[0].size), (8 << 20, 16384));
    let mut out = Vec::new();
    write_records(&mut out, TraceFormat::Csv, recs.iter()).unwrap();
    let back = String::from_utf8(out).unwrap();
    assert!(
        back.contains("\n0,ZA,8388608,16384,0\n1,ZR,0,0,0\n"),
        "{back}"
    );
    // A zero-length write is still refused; a zone reset's size is 0.
    let mut bad = reader(
        "time_ns,op,offset_bytes,size_bytes\n0,W,0,0\n",
        TraceFormat::Csv,
    );
    assert!(bad.next_record().unwrap().is_err());
    for fmt in [TraceFormat::Spc, TraceFormat::Blkparse, TraceFormat::Msr] {
        let mut out = Vec::new();
        let e = write_records(&mut out, fmt, [&recs[1]]).unwrap_err();
        assert!(e.to_string().contains("ZoneReset"), "{fmt}: {e}");
    }
}

/// `line` with `edits` applied: each (place, kind, byte) replaces (kind 0),
/// inserts before (1) or deletes (2) the byte at `place` modulo the length.
fn mutate(line: &str, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut l = line.as_bytes().to_vec();
    for &(at, kind, b) in edits {
        let i = if l.is_empty() { 0 } else { at % (l.len() + 1) };
        match kind {
            0 if i < l.len() => l[i] = b,
            2 if i < l.len() => {
                l.remove(i);
            }
            _ => l.insert(i, b),
        }
    }
    l
}

/// The one-pass parse of a format (`fast`) and its field-by-field parse
/// (`slow`) of `line`: the same result, error included, and the same
/// record; `Err` says the line and how they differ.
pub(super) fn parses_agree(
    line: &[u8],
    fast: impl Fn(&[u8], &mut Record) -> Result<bool, String>,
    slow: impl Fn(&[u8], &mut Record) -> Result<bool, String>,
) -> Result<(), String> {
    let (mut a, mut b) = (Record::default(), Record::default());
    let (x, y) = (fast(line, &mut a), slow(line, &mut b));
    let l = String::from_utf8_lossy(line);
    if x != y {
        return Err(format!("{l:?}: one pass {x:?}, field by field {y:?}"));
    }
    let rec = |r: &Record| {
        (
            r.time_ns, r.device, r.op, r.offset, r.size, r.stream, r.sync,
        )
    };
    if x == Ok(true) && rec(&a) != rec(&b) {
        return Err(format!(
            "{l:?}: one pass {:?}, field by field {:?}",
            rec(&a),
            rec(&b)
        ));
    }
    Ok(())
}

/// [`parses_agree`] on every line, for a module's fixed list.
pub(super) fn all_parses_agree(
    lines: &[&str],
    fast: impl Fn(&[u8], &mut Record) -> Result<bool, String>,
    slow: impl Fn(&[u8], &mut Record) -> Result<bool, String>,
) {
    for l in lines {
        if let Err(e) = parses_agree(l.as_bytes(), &fast, &slow) {
            panic!("{e}");
        }
    }
}

/// [`parses_agree`] as a property's check.
fn agree(
    line: &[u8],
    fast: impl Fn(&[u8], &mut Record) -> Result<bool, String>,
    slow: impl Fn(&[u8], &mut Record) -> Result<bool, String>,
) -> Result<(), proptest::test_runner::TestCaseError> {
    parses_agree(line, fast, slow).map_err(proptest::test_runner::TestCaseError::fail)
}

/// Lines near valid ones, a few bytes replaced, inserted or deleted (the
/// bytes drawn from those the formats give a meaning to).
fn near(templates: &'static [&'static str]) -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    const BYTES: &[u8] = b"0123456789019,,..  \t\tRWrwDSF+[(-xQAdeiatq";
    (
        0..templates.len(),
        proptest::collection::vec((0usize..96, 0u8..3, proptest::sample::select(BYTES)), 0..8),
    )
        .prop_map(move |(t, edits)| mutate(templates[t], &edits))
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 2000, ..Default::default() })]
    /// Every one-pass line parser (msr-cut's is DiskSim's) agrees with its
    /// field-by-field parse on lines near valid ones (the cases the fixed
    /// lists of each module's test may have missed).
    #[test]
    fn one_pass_parsers_agree_with_field_by_field(
        m in near(&[
            "128166372003061629,hm,0,Read,3154132992,4096,1299",
            "1,usr,2,write,8,8,0",
            "184467440737095516,h,4294967295,Read,1844674407370955161,9,9",
        ]),
        b in near(&[
            "  8,16   5        2     0.000001850 18615  Q   R 1444645666 + 256 [java]",
            "  8,0    3       12     1.234567891  4242  D  WS 2048 + 8 [kworker/3:1]",
            "  8,16   5        4     0.000008750 18615  Q   FWS [java]",
            "4294967295,1 9 9 9999999999.000000000 4294967295 Q R 36028797018963967 + 1 [x]",
        ]),
        s in near(&[
            "0,657728,8192,R,0.011413",
            "1,31244784,32768,w,12345.5,x",
            "4294967295,36028797018963967,1844674407370955161,R,9999999999.99999999",
        ]),
        d in near(&[
            "0.221 5 162947904 16 1",
            "12 5 1 16 0",
            "9999999999999.99999 4294967295 36028797018963967 1 1844674407370955161",
        ]),
        q in near(&["120000 0 16 8 0", "7 2 99 1024 1", "1844674407370955161 4294967295 1 1 1"]),
        c in near(&["0.000 0 200626176 4096 0", "223.412 3 3159347200 36864 1"]),
        by_host: bool,
    ) {
        let po = ParseOptions { msr_stream_by_host: by_host, ..ParseOptions::default() };
        agree(&m, |l, r| msr::parse(l, &po, r), |l, r| msr::parse_fields(l, &po, r))?;
        for action in [b'Q', b'D'] {
            let po = ParseOptions { blkparse_action: action, ..ParseOptions::default() };
            agree(
                &b,
                |l, r| blkparse::parse(l, &po, r),
                |l, r| blkparse::parse_fields(l, &po, r),
            )?;
        }
        agree(&s, spc::parse, spc::parse_fields)?;
        agree(&d, disksim::parse, disksim::parse_fields)?;
        agree(&q, mqsim::parse, mqsim::parse_fields)?;
        agree(&c, msrcut::parse, msrcut::parse_fields)?;
    }
}
