//! The OpenID Provider the SSO and token-exchange tests run against: the
//! npm package `oidc-provider` (pinned), installed once into a cache folder.
//! The tests start `api/tests/oidc/server.mjs` with `OIDC_PROVIDER_DIR`
//! pointing here.

use std::process::Command;

use anyhow::{Context, Result, bail};

const PACKAGE: &str = "oidc-provider@9.13.3";

/// The folder whose `node_modules` holds the provider.
pub fn ensure() -> Result<String> {
    let dir = crate::vault::cache_dir().join("oidc-provider-9.13.3");
    if dir.join("node_modules/oidc-provider/lib/index.js").exists() {
        return Ok(dir.display().to_string());
    }
    std::fs::create_dir_all(&dir)?;
    println!("xtask: installing {PACKAGE} into {}", dir.display());
    let status = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
        .arg(&dir)
        .arg(PACKAGE)
        .status()
        .context("could not run npm (Node.js and npm are needed for the SSO tests)")?;
    if !status.success() {
        bail!("npm install {PACKAGE} failed");
    }
    Ok(dir.display().to_string())
}
