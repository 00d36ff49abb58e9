//! The web console's optional script: `console/enhance` built for
//! `wasm32-unknown-unknown` (the target added with rustup when missing) and
//! made a browser module by `moke-console-bindgen` (wasm-bindgen's own
//! library, pinned by the workspace's lock file). `cargo xtask dev` and
//! `cargo xtask test` build it and give its folder to the gateway
//! (`http.console_script_dir`); `cargo xtask console-script` builds it for
//! a deployment and prints the folder.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result};

const TARGET: &str = "wasm32-unknown-unknown";

/// Builds the script and returns the folder holding `console.js` and
/// `console_bg.wasm`.
pub fn build() -> Result<PathBuf> {
    ensure_target()?;
    crate::run(
        crate::cargo()
            .args(["build", "--package", "moke-console-enhance", "--target", TARGET, "--release"])
            // Without debug information: it travels to every browser.
            .env("CARGO_PROFILE_RELEASE_DEBUG", "false"),
    )
    .context("could not build the console's script (console/enhance)")?;
    let module = crate::target_dir().join(TARGET).join("release/moke_console_enhance.wasm");
    let out = crate::target_dir().join("console-script");
    crate::run(
        crate::cargo().args(["run", "--quiet", "--package", "moke-console-bindgen", "--"]).arg(&module).arg(&out),
    )
    .context("could not make the console's script a browser module")?;
    Ok(out)
}

/// Adds the wasm32 target to the toolchain when it lacks it.
fn ensure_target() -> Result<()> {
    let installed = Command::new("rustup").args(["target", "list", "--installed"]).output();
    if installed.is_ok_and(|out| String::from_utf8_lossy(&out.stdout).lines().any(|line| line.trim() == TARGET)) {
        return Ok(());
    }
    println!("xtask: adding the {TARGET} target (rustup target add {TARGET}) for the console's script");
    crate::run(Command::new("rustup").args(["target", "add", TARGET]))
        .with_context(|| format!("could not add the {TARGET} target; install it (rustup target add {TARGET})"))
}
