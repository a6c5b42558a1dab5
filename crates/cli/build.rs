//! Puts the git commit the binary is built from into `ssdsim --version`
//! (`SSDSIM_GIT_COMMIT`): `git rev-parse --short HEAD` in a git checkout
//! (a worktree too), "unknown" outside one (a packaged crate, a tarball).
//! The environment variable of the same name, when set, wins (packagers).
//!
//! Cargo reruns this script only when HEAD moves: the HEAD file (a
//! checkout), the branch's ref file and packed-refs (a commit), never on
//! every build. A file that does not exist is not named (Cargo would rerun
//! the script every time).

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn watch(dir: &Path, git_path: &str) {
    if let Some(p) = git(dir, &["rev-parse", "--git-path", git_path]) {
        let p = dir.join(PathBuf::from(p));
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SSDSIM_GIT_COMMIT");
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let commit = match std::env::var("SSDSIM_GIT_COMMIT") {
        Ok(c) if !c.trim().is_empty() => c.trim().to_string(),
        _ => {
            let c = git(&dir, &["rev-parse", "--short", "HEAD"]);
            if c.is_some() {
                watch(&dir, "HEAD");
                if let Some(r) = git(&dir, &["symbolic-ref", "-q", "HEAD"]) {
                    watch(&dir, &r);
                }
                watch(&dir, "packed-refs");
            }
            c.unwrap_or_else(|| "unknown".to_string())
        }
    };
    println!("cargo:rustc-env=SSDSIM_GIT_COMMIT={commit}");
}
