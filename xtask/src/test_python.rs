//! The Python the tests use as an independent party: `aiosmtpd`, the SMTP
//! server the mail tests deliver to (pinned, from PyPI), installed once
//! into a cached virtualenv. The tests find its interpreter in
//! `TEST_PYTHON`.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result};

const PACKAGES: [&str; 1] = ["aiosmtpd==1.4.6"];

/// The interpreter of a virtualenv that has [`PACKAGES`].
pub fn ensure() -> Result<PathBuf> {
    let venv = crate::vault::cache_dir().join("test-python-aiosmtpd-1.4.6");
    let python = venv.join("bin/python");
    let ready = Command::new(&python).args(["-c", "import aiosmtpd"]).output().is_ok_and(|o| o.status.success());
    if ready {
        return Ok(python);
    }
    println!("xtask: installing {} into {}", PACKAGES.join(" "), venv.display());
    std::fs::create_dir_all(venv.parent().expect("a parent"))?;
    crate::run(Command::new("python3").args(["-m", "venv"]).arg(&venv))
        .context("could not create a Python virtualenv for the tests (python3 -m venv)")?;
    crate::run(Command::new(venv.join("bin/pip")).args(["install", "--quiet"]).args(PACKAGES))
        .context("could not pip install the tests' Python packages")?;
    Ok(python)
}
