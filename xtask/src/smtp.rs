//! The SMTP server the mail tests deliver to: `aiosmtpd` (pinned, from PyPI),
//! installed once into a cached virtualenv. The tests start it on loopback
//! with `SMTP_TEST_PYTHON` (this virtualenv's interpreter).

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result};

const PACKAGE: &str = "aiosmtpd==1.4.6";

/// The interpreter of a virtualenv that has `aiosmtpd`.
pub fn ensure() -> Result<PathBuf> {
    let venv = crate::vault::cache_dir().join("aiosmtpd-1.4.6");
    let python = venv.join("bin/python");
    let ready = Command::new(&python).args(["-c", "import aiosmtpd"]).output().is_ok_and(|o| o.status.success());
    if ready {
        return Ok(python);
    }
    println!("xtask: installing {PACKAGE} into {}", venv.display());
    std::fs::create_dir_all(venv.parent().expect("a parent"))?;
    crate::run(Command::new("python3").args(["-m", "venv"]).arg(&venv))
        .context("could not create a Python virtualenv for aiosmtpd (python3 -m venv)")?;
    crate::run(Command::new(venv.join("bin/pip")).args(["install", "--quiet", PACKAGE]))
        .context("could not pip install aiosmtpd")?;
    Ok(python)
}
