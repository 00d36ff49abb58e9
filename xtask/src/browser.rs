//! What the console's browser tests need: Debian's Chromium and its
//! ChromeDriver (installed with apt-get when missing, as root), and
//! `axe-core` (npm, pinned) for the accessibility checks, installed once
//! into the cache folder. The tests read `CHROMEDRIVER`, `CHROMIUM` and
//! `AXE_CORE_JS`.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// Installs with apt-get (as root) the Debian packages whose files are
/// missing: `(file, package)` pairs; `for_what` says who needs them.
pub fn debian_packages(wanted: &[(&str, &str)], for_what: &str) -> Result<()> {
    let missing: Vec<&str> =
        wanted.iter().filter(|(file, _)| !Path::new(file).exists()).map(|(_, package)| *package).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let list = missing.join(" ");
    println!("xtask: installing {list} (apt-get install {list}) for {for_what}");
    let status = Command::new("apt-get")
        .args(["install", "-y", "-q"])
        .args(&missing)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .with_context(|| format!("could not run apt-get ({for_what} need {list})"))?;
    if !status.success() || wanted.iter().any(|(file, _)| !Path::new(file).exists()) {
        bail!("apt-get install {list} failed: install it (as root) and run again");
    }
    Ok(())
}

const AXE: &str = "axe-core@4.14.1";
const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Paths of the browser, its driver and axe-core's script.
pub struct Browser {
    pub chromium: String,
    pub chromedriver: String,
    pub axe_js: String,
}

impl Browser {
    pub fn apply(&self, command: &mut Command) {
        command
            .env("CHROMIUM", &self.chromium)
            .env("CHROMEDRIVER", &self.chromedriver)
            .env("AXE_CORE_JS", &self.axe_js);
    }
}

pub fn ensure() -> Result<Browser> {
    debian_packages(&[(CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")], "the console's browser tests")?;
    let dir = crate::vault::cache_dir().join("axe-core-4.14.1");
    let axe_js = dir.join("node_modules/axe-core/axe.min.js");
    if !axe_js.exists() {
        std::fs::create_dir_all(&dir)?;
        println!("xtask: installing {AXE} into {}", dir.display());
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
            .arg(&dir)
            .arg(AXE)
            .status()
            .context("could not run npm (Node.js and npm are needed for the console's accessibility checks)")?;
        if !status.success() || !axe_js.exists() {
            bail!("npm install {AXE} failed");
        }
    }
    Ok(Browser { chromium: CHROMIUM.into(), chromedriver: CHROMEDRIVER.into(), axe_js: axe_js.display().to_string() })
}
