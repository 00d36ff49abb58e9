//! `cargo-deny` for `cargo xtask lint`: built once from crates.io (pinned)
//! into a cache folder outside the clone, with a target dir of its own.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result};

const VERSION: &str = "0.20.2";

/// The `cargo-deny` binary, installed on first use.
pub fn ensure() -> Result<PathBuf> {
    let root = crate::vault::cache_dir().join(format!("cargo-deny-{VERSION}"));
    let bin = root.join("bin/cargo-deny");
    if bin.exists() {
        return Ok(bin);
    }
    println!("xtask: building cargo-deny {VERSION} once into {} (a few minutes)", root.display());
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    crate::run(
        Command::new(cargo)
            .args(["install", &format!("cargo-deny@{VERSION}"), "--locked", "--root"])
            .arg(&root)
            .arg("--target-dir")
            .arg(root.join("target")),
    )
    .context("could not build cargo-deny from crates.io")?;
    let _ = std::fs::remove_dir_all(root.join("target"));
    Ok(bin)
}
