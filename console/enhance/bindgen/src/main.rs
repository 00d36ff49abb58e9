//! `moke-console-bindgen <module.wasm> <out dir>`: writes the console's
//! script as a browser module (`console.js`, wasm-bindgen's loader, and
//! `console_bg.wasm`) that starts itself when a page loads it. Built from
//! the workspace's lock file, so every crate that writes code browsers run
//! is pinned and checked by `cargo deny` like the rest.

use anyhow::{Context, Result, bail};

/// What wasm-bindgen's loader ends with (it only defines how to start).
const EXPORT: &str = "export { initSync, __wbg_init as default };";

fn main() -> Result<()> {
    let mut args = std::env::args_os().skip(1);
    let (Some(module), Some(out), None) = (args.next(), args.next(), args.next()) else {
        bail!("usage: moke-console-bindgen <module.wasm> <out dir>");
    };
    let out = std::path::PathBuf::from(out);
    wasm_bindgen_cli_support::Bindgen::new()
        .input_path(module)
        .web(true)?
        .typescript(false)
        .out_name("console")
        // The loader finds `console_bg.wasm` beside itself (as the CLI's does).
        .omit_default_module_path(false)
        .generate(&out)
        .context("wasm-bindgen could not make the console's script a browser module")?;
    // The page loads the loader as a module script: it starts the module itself.
    let loader = out.join("console.js");
    let mut text = std::fs::read_to_string(&loader)?;
    if !text.contains(EXPORT) {
        bail!("wasm-bindgen's loader no longer ends with {EXPORT:?}: update moke-console-bindgen");
    }
    text.push_str("\n__wbg_init();\n");
    std::fs::write(&loader, text)?;
    Ok(())
}
