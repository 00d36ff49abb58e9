//! The web console's optional script: `console/enhance` built for
//! `wasm32-unknown-unknown` (the target added with rustup when missing) and
//! made a browser module by wasm-bindgen-cli, of exactly the crate's
//! wasm-bindgen version, built once into the cache folder. `cargo xtask
//! dev` and `cargo xtask test` build it and give its folder to the gateway
//! (`http.console_script_dir`); `cargo xtask console-script` builds it for
//! a deployment and prints the folder.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The `wasm-bindgen` the crate pins (`console/enhance/Cargo.toml`): the CLI must be the same.
const WASM_BINDGEN: &str = "0.2.130";
const TARGET: &str = "wasm32-unknown-unknown";

/// Builds the script and returns the folder holding `console.js` and
/// `console_bg.wasm`.
pub fn build() -> Result<PathBuf> {
    ensure_target()?;
    let bindgen = ensure_bindgen()?;
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
        Command::new(bindgen)
            .args(["--target", "web", "--no-typescript", "--out-name", "console", "--out-dir"])
            .arg(&out)
            .arg(&module),
    )
    .context("wasm-bindgen could not make the console's script a browser module")?;
    // The loader only defines how to start the module; the page loads it
    // as a module script, so it starts the module itself.
    let loader = out.join("console.js");
    let mut text = std::fs::read_to_string(&loader)?;
    const EXPORT: &str = "export { initSync, __wbg_init as default };";
    if !text.contains(EXPORT) {
        bail!("wasm-bindgen {WASM_BINDGEN} no longer ends its loader with {EXPORT:?}: update console_script.rs");
    }
    text.push_str("\n__wbg_init();\n");
    std::fs::write(&loader, text)?;
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

/// wasm-bindgen-cli, built once into the cache folder.
fn ensure_bindgen() -> Result<PathBuf> {
    let root = crate::vault::cache_dir().join(format!("wasm-bindgen-cli-{WASM_BINDGEN}"));
    let bin = root.join("bin/wasm-bindgen");
    if bin.exists() {
        return Ok(bin);
    }
    println!("xtask: building wasm-bindgen-cli {WASM_BINDGEN} once into {} (a few minutes)", root.display());
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // Not --locked: its lock file names crate versions newer than some registries carry.
    crate::run(
        Command::new(cargo)
            .args(["install", &format!("wasm-bindgen-cli@{WASM_BINDGEN}"), "--root"])
            .arg(&root)
            .arg("--target-dir")
            .arg(root.join("target")),
    )
    .context("could not build wasm-bindgen-cli from crates.io")?;
    let _ = std::fs::remove_dir_all(root.join("target"));
    Ok(bin)
}
