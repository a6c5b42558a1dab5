//! Progress bars on stderr: preconditioning, the measured phase of a run
//! (how much of the trace file has been read, or of the requests completed,
//! and the simulated time) and a sweep's points.
//!
//! They are drawn only where someone watches: stderr an interactive terminal
//! (not `TERM=dumb`, not under CI), and never into stdout, `--out`, or any
//! table; `--no-progress` turns them off. They use no colour, so `NO_COLOR`
//! has nothing to take away. The run's bar is an observer that counts
//! completed requests and looks at the clock once every few hundred of them
//! ([`RunMeter`]), drawing a few times a second; it cannot change a result
//! (it reads the simulation, never steers it) and costs one predictable
//! branch per request when off.
//!
//! The bars are drawn by indicatif, with the `progress` feature (on by
//! default, through `cli`). Without it this module keeps its types, so that
//! [`crate::RunOptions`] is the same with and without the feature, and every
//! [`Progress`] mode draws nothing (and [`sink_bytes`] stays 0); `bar` is
//! the only item that needs the feature.

#[cfg(feature = "progress")]
use indicatif::{HumanBytes, ProgressBar, ProgressDrawTarget, ProgressStyle};
use ssd_core::observer::Observer;
use ssd_core::units::SimTime;
use ssdsim_host::config::SsdConfig;
use ssdsim_host::workload::IoOp;
use std::io::IsTerminal;
#[cfg(feature = "progress")]
use std::io::Seek;
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(feature = "progress")]
use std::time::{Duration, Instant};

/// Where progress goes. Without the `progress` feature every mode draws
/// nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Progress {
    /// Nowhere (the library's default).
    #[default]
    Off,
    /// stderr, when it is an interactive terminal ([`stderr_is_interactive`]).
    Terminal,
    /// Computed and drawn in full, at every check, into nothing: the whole
    /// progress code path, for tests that it changes no result.
    Sink,
}

/// stderr is a terminal that can redraw a line: not `TERM=dumb`, and not a
/// CI job (`CI` set), whose log would keep every redraw.
pub fn stderr_is_interactive() -> bool {
    std::io::stderr().is_terminal()
        && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
        && std::env::var_os("CI").is_none()
}

/// How often a terminal bar is redrawn at most (per second).
#[cfg(feature = "progress")]
const HZ: u8 = 4;

/// Bytes written into the sink of [`Progress::Sink`] so far (tests check
/// that the path drew).
static SINK_BYTES: AtomicU64 = AtomicU64::new(0);

/// How many bytes [`Progress::Sink`] bars have drawn so far, process-wide
/// (always 0 without the `progress` feature).
pub fn sink_bytes() -> u64 {
    SINK_BYTES.load(Ordering::Relaxed)
}

#[cfg(feature = "progress")]
#[derive(Debug)]
struct Sink;

#[cfg(feature = "progress")]
impl indicatif::TermLike for Sink {
    fn width(&self) -> u16 {
        100
    }
    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        SINK_BYTES.fetch_add(s.len() as u64 + 1, Ordering::Relaxed);
        Ok(())
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        SINK_BYTES.fetch_add(s.len() as u64, Ordering::Relaxed);
        Ok(())
    }
    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A bar of `len` steps with `template`, where `mode` says, or `None`
/// (nothing to draw: off, or stderr is not an interactive terminal).
#[cfg(feature = "progress")]
pub fn bar(mode: Progress, len: u64, template: &str) -> Option<ProgressBar> {
    let target = match mode {
        Progress::Off => return None,
        Progress::Terminal if !stderr_is_interactive() => return None,
        Progress::Terminal => ProgressDrawTarget::stderr_with_hz(HZ),
        Progress::Sink => ProgressDrawTarget::term_like_with_hz(Box::new(Sink), 100),
    };
    let style = ProgressStyle::with_template(template)
        .expect("a valid template")
        .progress_chars("=> ");
    Some(ProgressBar::with_draw_target(Some(len), target).with_style(style))
}

/// The measured phase's bar, as an observer of completed requests: put it
/// beside the run's observer ([`ssd_core::observer::Tee`]). Empty (`None`
/// inside) when there is nothing to draw, and always without the `progress`
/// feature.
pub struct RunMeter(#[cfg(feature = "progress")] Option<Box<Meter>>);

/// Steps of the run's bar (its position is a fraction of this).
#[cfg(feature = "progress")]
const STEPS: u64 = 10_000;

/// The clock is read at most once per this many completions at first; the
/// stride then adapts so that it is read about every `CHECK` of wall time.
#[cfg(feature = "progress")]
const FIRST_STRIDE: u64 = 64;
#[cfg(feature = "progress")]
const CHECK: Duration = Duration::from_millis(50);

#[cfg(feature = "progress")]
struct Meter {
    bar: ProgressBar,
    /// Requests completed, and the count at which to look at the clock next.
    done: u64,
    next_check: u64,
    stride: u64,
    last_check: Instant,
    last_draw: Option<Instant>,
    /// Redraw at most this often (zero for the sink: at every check).
    every: Duration,
    /// The trace file (a handle sharing the replay's position) and its size.
    trace: Option<(std::fs::File, u64)>,
    /// Requests the workload will issue, if known.
    requests: Option<u64>,
    time_limit: Option<u64>,
}

impl RunMeter {
    /// No bar.
    pub fn off() -> RunMeter {
        RunMeter(
            #[cfg(feature = "progress")]
            None,
        )
    }

    /// The bar of a run of `cfg` where `mode` says; `trace` is the replayed
    /// trace file's handle ([`ssdsim_host::trace::TraceSource::file_handle`]).
    #[cfg(not(feature = "progress"))]
    pub fn new(
        _mode: Progress,
        _cfg: &SsdConfig,
        _logical_bytes: u64,
        _trace: Option<std::fs::File>,
    ) -> RunMeter {
        RunMeter::off()
    }

    /// The bar of a run of `cfg` where `mode` says; `trace` is the replayed
    /// trace file's handle ([`ssdsim_host::trace::TraceSource::file_handle`]).
    #[cfg(feature = "progress")]
    pub fn new(
        mode: Progress,
        cfg: &SsdConfig,
        logical_bytes: u64,
        trace: Option<std::fs::File>,
    ) -> RunMeter {
        let Some(bar) = bar(
            mode,
            STEPS,
            "run [{bar:24}] {percent:>3}% {msg} ({elapsed}, eta {eta})",
        ) else {
            return RunMeter::off();
        };
        let trace = trace.and_then(|f| {
            let size = f.metadata().ok()?.len();
            (size > 0).then_some((f, size))
        });
        let requests = if cfg.trace.is_some() {
            cfg.replay.max_requests
        } else if let Some(p) = &cfg.personality {
            Some(p.requests)
        } else {
            // The job's requests: its count, or what its bytes make of
            // requests of `bs` (sizes that vary make this an estimate).
            let w = &cfg.workload;
            let loops = w.loops.max(1) as u64;
            let by_bytes = |b: u64| (b.saturating_mul(loops) / w.bs.0.max(1)).max(1);
            Some(match (w.number_ios, w.io_size) {
                (Some(n), Some(b)) => n.min(by_bytes(b.0)),
                (Some(n), None) => n,
                (None, Some(b)) => by_bytes(b.0),
                (None, None) => by_bytes(w.span(logical_bytes)),
            })
        };
        let now = Instant::now();
        let mut m = Meter {
            bar,
            done: 0,
            next_check: FIRST_STRIDE,
            stride: FIRST_STRIDE,
            last_check: now,
            last_draw: None,
            every: if mode == Progress::Sink {
                Duration::ZERO
            } else {
                Duration::from_millis(1000 / HZ as u64)
            },
            trace,
            requests,
            time_limit: cfg.sim.time_limit.map(|d| d.0),
        };
        m.draw(0);
        RunMeter(Some(Box::new(m)))
    }
}

#[cfg(feature = "progress")]
impl Meter {
    /// Look at the clock; redraw if it is time.
    #[cold]
    #[inline(never)]
    fn check(&mut self, sim_ns: u64) {
        let now = Instant::now();
        // Aim the next look at about CHECK from now.
        let took = now
            .duration_since(self.last_check)
            .max(Duration::from_micros(1));
        let ratio = CHECK.as_secs_f64() / took.as_secs_f64();
        self.stride = ((self.stride as f64 * ratio) as u64).clamp(1, 1 << 20);
        self.last_check = now;
        self.next_check = self.done + self.stride;
        if self
            .last_draw
            .is_none_or(|t| now.duration_since(t) >= self.every)
        {
            self.draw(sim_ns);
            self.last_draw = Some(now);
        }
    }

    fn draw(&mut self, sim_ns: u64) {
        let mut frac: f64 = 0.0;
        let mut parts = Vec::with_capacity(3);
        if let Some((f, size)) = &mut self.trace {
            let pos = f.stream_position().unwrap_or(0).min(*size);
            frac = frac.max(pos as f64 / *size as f64);
            parts.push(format!("{} of {} read", HumanBytes(pos), HumanBytes(*size)));
        }
        match self.requests {
            Some(n) => {
                frac = frac.max(self.done as f64 / n as f64);
                parts.push(format!("{} of {n} requests", self.done));
            }
            None => parts.push(format!("{} requests", self.done)),
        }
        let sim_s = sim_ns as f64 * 1e-9;
        match self.time_limit {
            Some(l) => {
                frac = frac.max(sim_ns as f64 / l as f64);
                parts.push(format!("{sim_s:.3} of {:.3} s simulated", l as f64 * 1e-9));
            }
            None => parts.push(format!("{sim_s:.3} s simulated")),
        }
        self.bar
            .set_position((frac.clamp(0.0, 1.0) * STEPS as f64) as u64);
        self.bar.set_message(parts.join(", "));
    }
}

#[cfg(feature = "progress")]
impl Drop for Meter {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

impl Observer for RunMeter {
    #[inline(always)]
    #[cfg_attr(not(feature = "progress"), allow(unused_variables))]
    fn request_done(&mut self, _op: IoOp, _bytes: u64, _arrival: SimTime, done: SimTime) {
        #[cfg(feature = "progress")]
        if let Some(m) = &mut self.0 {
            m.done += 1;
            if m.done >= m.next_check {
                m.check(done.0);
            }
        }
    }
    fn finish(&mut self, _end: SimTime) {
        // The report follows: clear the bar now.
        #[cfg(feature = "progress")]
        {
            self.0 = None;
        }
    }
}
