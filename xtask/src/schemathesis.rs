//! `cargo xtask fuzz-api`: property-based tests of the served OpenAPI
//! document with schemathesis (pinned, from PyPI, in a cached virtualenv).
//!
//! A fresh gateway (`moke-server dev`, its own database, the test Vault,
//! simulated regions) serves on a free loopback port; schemathesis reads
//! `/openapi.json` from it and runs every check with a fixed seed,
//! authenticated as the demo organization's owner. Any failure fails the
//! command.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

const VERSION: &str = "4.32.5";

/// The `schemathesis` executable of a virtualenv that has the pinned version.
fn ensure() -> Result<PathBuf> {
    let venv = crate::vault::cache_dir().join(format!("schemathesis-{VERSION}"));
    let bin = venv.join("bin/schemathesis");
    if Command::new(&bin).arg("--version").output().is_ok_and(|o| o.status.success()) {
        return Ok(bin);
    }
    println!("xtask: installing schemathesis {VERSION} into {}", venv.display());
    std::fs::create_dir_all(venv.parent().expect("a parent"))?;
    crate::run(Command::new("python3").args(["-m", "venv"]).arg(&venv))
        .context("could not create a Python virtualenv for schemathesis (python3 -m venv)")?;
    crate::run(Command::new(venv.join("bin/pip")).args(["install", "--quiet", &format!("schemathesis=={VERSION}")]))
        .context("could not pip install schemathesis")?;
    Ok(bin)
}

/// Kills the gateway when the run ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs schemathesis over the whole document; `args` go to `schemathesis run`.
pub fn fuzz_api(args: &[String]) -> Result<()> {
    let schemathesis = ensure()?;
    let db = crate::postgres::ensure(crate::postgres::Purpose::Test)?;
    let vault = crate::vault::ensure()?;
    crate::run(
        crate::cargo().args(["build", "--package", "moke-api", "--bin", "moke-server"]).env("SQLX_OFFLINE", "true"),
    )?;
    let database = "moke_fuzz_api";
    db.recreate_database(database)?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let base = format!("http://127.0.0.1:{port}");
    let state = std::env::temp_dir().join(format!("moke-fuzz-api-{port}"));
    let mut command = Command::new(crate::target_dir().join("debug/moke-server"));
    command
        .args(["dev", "--org", "fuzz", "--region-state-dir"])
        .arg(&state)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .env("DATABASE_URL", db.url(database))
        .env("MOKE_HTTP__PUBLIC_URL", &base)
        .env("MOKE_TELEMETRY__LOG_FILTER", "error")
        // Schemathesis sends thousands of requests as one principal.
        .env("MOKE_RATE_LIMITS__PER_PRINCIPAL_PER_SECOND", "1000000")
        .env("MOKE_RATE_LIMITS__PER_PRINCIPAL_BURST", "1000000")
        .env("MOKE_RATE_LIMITS__PER_IP_PER_SECOND", "1000000")
        .env("MOKE_RATE_LIMITS__PER_IP_BURST", "1000000")
        .env("MOKE_MAIL__SENDER", "file")
        .env("MOKE_MAIL__FILE_DIR", state.join("mail"))
        .stdout(Stdio::piped());
    vault.apply(&mut command);
    let mut server = Server(command.spawn().context("could not start moke-server dev")?);
    let token = owner_token(&mut server.0)?;
    wait_ready(&base)?;
    let mut run = Command::new(&schemathesis);
    run.arg("--config-file")
        .arg(crate::root().join("openapi/schemathesis.toml"))
        .arg("run")
        .arg(format!("{base}/openapi.json"))
        .args(["--checks", "all", "--seed", "20261204", "--no-color", "--max-examples", "25"])
        .args(["--header", &format!("Authorization: Bearer {token}")])
        .args(args)
        .env("SCHEMATHESIS_HOOKS", "")
        .current_dir(crate::root());
    let result = crate::run(&mut run);
    drop(server);
    let _ = std::fs::remove_dir_all(&state);
    result.context("schemathesis found requests or answers the document does not describe")
}

/// Reads the dev banner until it names the owner token.
fn owner_token(server: &mut Child) -> Result<String> {
    let stdout = server.stdout.take().expect("piped");
    let mut lines = BufReader::new(stdout).lines();
    for line in lines.by_ref() {
        let line = line?;
        if let Some(rest) = line.trim().strip_prefix("owner token:") {
            let token = rest.split_whitespace().next().unwrap_or_default().to_string();
            // Keep draining the banner so the server never blocks on a full pipe.
            std::thread::spawn(move || lines.for_each(drop));
            return Ok(token);
        }
    }
    bail!("moke-server dev exited before printing the owner token")
}

/// Polls `/readyz` for up to a minute.
fn wait_ready(base: &str) -> Result<()> {
    let address = base.trim_start_matches("http://").to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Ok(mut stream) = std::net::TcpStream::connect(&address) {
            use std::io::{Read, Write};
            let _ = write!(stream, "GET /readyz HTTP/1.0\r\nHost: {address}\r\n\r\n");
            let mut answer = String::new();
            let _ = stream.read_to_string(&mut answer);
            if answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.1 200") {
                return Ok(());
            }
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    bail!("the gateway at {base} did not become ready within a minute")
}
