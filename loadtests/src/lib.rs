//! Shared pieces of the load tests: starting the gateway under test.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use anyhow::{Context, Result, bail};

/// A required environment variable, with a hint when it is missing.
pub fn env(name: &str) -> Result<String> {
    std::env::var(name).with_context(|| format!("{name} is not set; run through `cargo xtask bench api`"))
}

/// The server under test, stopped when dropped.
pub struct Server {
    child: Child,
    pub base: String,
    pub org: String,
    pub token: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `moke-server dev` on a free port with extra flags and environment,
/// and reads the organization and token it prints.
pub fn start_server(args: &[&str], envs: &[(&str, &str)]) -> Result<Server> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let mut child = Command::new(env("BENCH_SERVER_BIN")?)
        .args(["dev", "--org", "bench", "--listen", &format!("127.0.0.1:{port}")])
        .args(args)
        .envs(envs.iter().copied())
        .env("MOKE_TELEMETRY__LOG_FILTER", "warn")
        .env("MOKE_DATABASE__MAX_CONNECTIONS", "32")
        .stdout(Stdio::piped())
        .spawn()
        .context("could not start moke-server")?;
    let (mut org, mut token) = (String::new(), String::new());
    let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    for line in lines.by_ref() {
        let line = line?;
        if let Some(rest) = line.trim().strip_prefix("organization:") {
            org = rest.split('(').nth(1).unwrap_or_default().trim_end_matches(')').to_string();
        }
        if let Some(rest) = line.trim().strip_prefix("owner token:") {
            token = rest.split_whitespace().next().unwrap_or_default().to_string();
            break;
        }
    }
    // Keep reading what it prints, so its writes never hit a closed pipe.
    std::thread::spawn(move || lines.for_each(drop));
    if token.is_empty() {
        bail!("moke-server dev did not print a token");
    }
    Ok(Server { child, base: format!("http://127.0.0.1:{port}"), org, token })
}
