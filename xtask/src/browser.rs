//! What the console's browser tests need: Debian's Chromium and its
//! ChromeDriver (installed with apt-get when missing, as root), and
//! `axe-core` (npm, pinned) for the accessibility checks, installed once
//! into the cache folder. The tests read `CHROMEDRIVER`, `CHROMIUM` and
//! `AXE_CORE_JS`.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

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
    if !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists() {
        println!("xtask: installing Chromium and ChromeDriver (apt-get install chromium chromium-driver)");
        let status = Command::new("apt-get")
            .args(["install", "-y", "-q", "chromium", "chromium-driver"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .context("could not run apt-get (the console's browser tests need chromium and chromium-driver)")?;
        if !status.success() || !Path::new(CHROMEDRIVER).exists() {
            bail!("apt-get install chromium chromium-driver failed: install them (as root) and run again");
        }
    }
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
