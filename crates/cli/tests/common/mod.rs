//! Helpers shared by the program's integration tests: running the built
//! binary. (The library's, `crates/ssdsim/tests/common`, compare reports
//! and rows without their wall-clock fields.) Each test file is its own
//! crate and uses some of them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh scratch directory for one test: under the system's temporary
/// directory, named after the test binary, the process and `name`, so tests
/// running at once never share one.
pub fn scratch(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let stem = exe.file_stem().and_then(|s| s.to_str()).unwrap_or("test");
    let d = std::env::temp_dir().join(format!("ssdsim-{stem}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create a scratch directory");
    d
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run the ssdsim binary")
}

fn text(o: Output) -> (i32, String, String) {
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `ssdsim ARGS` in the test's working directory: (exit code, stdout, stderr).
pub fn ssdsim(args: &[&str]) -> (i32, String, String) {
    text(run(Command::new(env!("CARGO_BIN_EXE_ssdsim")).args(args)))
}

/// `ssdsim ARGS` in `dir`: (exit code, stdout, stderr).
pub fn ssdsim_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    text(run(Command::new(env!("CARGO_BIN_EXE_ssdsim"))
        .args(args)
        .current_dir(dir)))
}

/// `ssdsim ARGS` in `dir`, stdout as bytes (progress output, binary files).
pub fn ssdsim_bytes_in(dir: &Path, args: &[&str]) -> (i32, Vec<u8>, String) {
    let o = run(Command::new(env!("CARGO_BIN_EXE_ssdsim"))
        .args(args)
        .current_dir(dir));
    let code = o.status.code().unwrap_or(-1);
    (
        code,
        o.stdout,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `ssdsim ARGS` in `dir`, which must succeed.
pub fn ssdsim_ok_in(dir: &Path, args: &[&str]) {
    let (code, _, err) = ssdsim_in(dir, args);
    assert_eq!(code, 0, "ssdsim {args:?}: {err}");
}

/// `ssdsim ARGS` in `dir` under `ulimit -f BLOCKS` (a full disk).
pub fn ssdsim_ulimit_f(dir: &Path, blocks: u32, args: &[&str]) -> (i32, String, String) {
    text(run(Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -f {blocks}; exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_ssdsim"))
        .args(args)
        .current_dir(dir)))
}
